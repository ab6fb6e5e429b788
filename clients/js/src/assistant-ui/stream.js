// `createLangGraphStreamWithRecovery`: the `stream` callback @assistant-ui/react-langgraph's
// `useLangGraphRuntime` takes, as `unstable_createLangGraphStream` builds it, plus the
// final-answer route, so a turn ends on the checkpoint's answer instead of a truncated or
// failed one. The request and every event stay assistant-ui's own.

import { unstable_createLangGraphStream } from "@assistant-ui/react-langgraph";

import { cancelStoppedRun } from "../core/cancel.js";
import { STREAM_GRACE_MS } from "../core/follow.js";
import { replaceText, withFinalAnswer } from "../core/messages.js";
import { withExactlyOnce } from "../core/once.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY, findRun, settleFinalAnswer } from "../core/settle.js";
import { StoppedTurns, withStoppedTurns } from "../core/stopped.js";
import { newRequestId } from "../core/stream.js";
import { createLoad, interruptsOf, routeOf } from "./load.js";

const MESSAGE_EVENTS = new Set(["messages/partial", "messages/complete"]);

/** The status assistant-ui shows a message the user stopped with. */
export const STOPPED_STATUS = Object.freeze({ type: "incomplete", reason: "cancelled" });

/**
 * `unstable_createLangGraphStream(options)` that keeps the run alive across a dropped
 * connection and ends each turn on the route's answer. Options: those of
 * `unstable_createLangGraphStream` (`client`, `assistantId`, `streamMode`,
 * `onDisconnect`, default "continue" here), and `recovery: { maxWaitMs }` (default
 * 240 s: how long to follow a run after its stream ended). The callback's `load`
 * property is `useLangGraphRuntime`'s `load` for the same threads (load.js).
 *
 * Upstream's builder is called with a client whose `runs.stream` adds three fields.
 * Without them, a cut the SDK cannot resume fails the turn, a clean early end shows a
 * truncated answer, and `onDisconnect: "cancel"` has the server cancel the run when the
 * browser's connection drops. Here:
 * - `onDisconnect` defaults to "continue" (an app's own value is kept), and a cancel the
 *   user asks for (`config.abortSignal`) cancels the run itself;
 * - the submit is tagged with a request id and the client's fetch made exactly-once
 *   (core/once.js): a POST cut before its response never starts a second run;
 * - the run is followed through the route (`?wait=` long-polls) from the moment it has
 *   an id; once the stream ended and the route says the run is over, the thread's state
 *   is yielded as a `values` event with the route's text in the answer message
 *   (assistant-ui replaces its messages with these). A stream still open then is ended;
 *   a run that ended in error keeps the error event the stream gave it;
 * - a Stop keeps what its turn showed (core/stopped.js), marked incomplete/cancelled, in
 *   every later `values` event and in `load` (load.js): the thread's state lacks the
 *   cancelled node's message.
 */
export function createLangGraphStreamWithRecovery(options) {
  const { client, assistantId, streamMode, onDisconnect = "continue", recovery = {} } = options;
  withExactlyOnce(client);
  const maxWaitMs = recovery.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  // The turns the user stopped, per thread, for every turn and load of this runtime.
  const stopped = new StoppedTurns();

  const streamCallback = async (messages, config) => {
    const call = { threadId: null, runId: null, requestId: newRequestId() };
    // The follow's signal (aborted when the turn's iteration ends), and the stream's own:
    // a stream the route called over is ended through it, never through the app's.
    const internal = new AbortController();
    const stream = new AbortController();
    internal.abortStream = () => stream.abort();
    const tagging = {
      runs: {
        stream(threadId, assistant, payload) {
          call.threadId = threadId;
          const signal = eitherSignal(payload.signal, stream.signal);
          return client.runs.stream(threadId, assistant, { ...tagged(payload, call), signal });
        },
      },
    };
    const upstream = unstable_createLangGraphStream({
      client: tagging,
      assistantId,
      ...(streamMode === undefined ? {} : { streamMode }),
      onDisconnect,
    });
    const seen = new Map();
    const signal = config.abortSignal;
    // The server no longer cancels on a drop: a Stop (assistant-ui aborts the signal)
    // cancels the run, and its turn keeps what it showed.
    signal?.addEventListener(
      "abort",
      () => {
        if (call.threadId) stopped.stop(call.threadId, shownTurn(messages, seen));
        cancelRun(client, call);
      },
      { once: true },
    );
    const events = await upstream(messages, config);
    const kept = () => stopped.of(call.threadId);
    return recovering(events, { client, call, signal, internal, maxWaitMs, seen, kept });
  };
  streamCallback.load = createLoad({ client, maxWaitMs, stopped });
  return streamCallback;
}

/**
 * The turn a Stop ended, as the page showed it: the question sent, then the messages the
 * stream brought after it (the newest version of each), the last of them marked
 * cancelled, as assistant-ui never marks a LangGraph message itself.
 */
function shownTurn(sent, seen) {
  const question = [...sent].reverse().find((m) => m && m.type === "human") ?? null;
  const after = [];
  let past = question === null || question.id == null || !seen.has(question.id);
  for (const [id, message] of seen) {
    if (past && message.type !== "human") after.push(message);
    if (question !== null && id === question.id) past = true;
  }
  const last = after.length - 1;
  if (last >= 0 && after[last].type === "ai") after[last] = { ...after[last], status: STOPPED_STATUS };
  return question === null ? after : [question, ...after];
}

/** The payload upstream built, resumable, tagged, and naming its run to `call`. */
function tagged(payload, call) {
  return {
    ...payload,
    streamResumable: true,
    metadata: { ...(payload.metadata || {}), [REQUEST_ID_KEY]: call.requestId },
    onRunCreated(meta) {
      call.runId = call.runId ?? meta?.run_id ?? null;
      payload.onRunCreated?.(meta);
    },
  };
}

function cancelRun(client, call) {
  if (typeof client.runs.cancel !== "function") return Promise.resolve(null);
  const { apiUrl, headers } = routeOf(client);
  return cancelStoppedRun({
    threadId: call.threadId,
    runId: call.runId,
    requestId: call.requestId,
    cancel: (threadId, runId) => client.runs.cancel(threadId, runId, true),
    find: { url: apiUrl, headers },
  });
}

/** The messages an event carries, by id: the newest version of each the stream showed. */
function noteMessages(chunk, seen) {
  let list = null;
  if (MESSAGE_EVENTS.has(chunk.event) && Array.isArray(chunk.data)) list = chunk.data;
  else if (chunk.event === "values" && Array.isArray(chunk.data?.messages)) list = chunk.data.messages;
  for (const message of list || []) {
    if (message && message.id != null) seen.set(message.id, message);
  }
}

/** `a` and `b` as one signal: aborted when either is. */
function eitherSignal(a, b) {
  if (!a) return b;
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const both = new AbortController();
  for (const signal of [a, b]) {
    if (signal.aborted) both.abort(signal.reason);
    else signal.addEventListener("abort", () => both.abort(signal.reason), { once: true });
  }
  return both.signal;
}

/**
 * The run followed through the route from the moment it has an id: `answer` (the
 * settled answer, or null when the route failed or the follow was left), and `over`,
 * which resolves `STREAM_GRACE_MS` after the route said the run is complete: a stream
 * still open then can only be stalled or retrying.
 */
function followRun(client, call, signal, maxWaitMs) {
  const { apiUrl, headers } = routeOf(client);
  const answer = settleFinalAnswer({ apiUrl, threadId: call.threadId, runId: call.runId, headers, signal, maxWaitMs })
    .catch(() => null);
  const over = answer.then((settled) =>
    settled && settled.complete ? new Promise((resolve) => setTimeout(resolve, STREAM_GRACE_MS)) : NEVER,
  );
  return { answer, over };
}

const NEVER = new Promise(() => {});

/**
 * Yield upstream's events as they come, the run followed through the route meanwhile;
 * once the stream ended (or, the route having said the run is over, was ended), end on
 * the thread's state with the route's answer (see the header).
 */
async function* recovering(events, { client, call, signal, internal, maxWaitMs, seen, kept }) {
  const iterator = events[Symbol.asyncIterator]();
  const canFollow = Boolean(routeOf(client).apiUrl);
  let follow = null;
  let failure = null;
  let runFailed = false;
  try {
    for (;;) {
      if (follow === null && canFollow && call.runId && call.threadId) {
        follow = followRun(client, call, internal.signal, maxWaitMs);
      }
      const next = iterator.next();
      const step = await Promise.race([
        next.then(
          (result) => ({ result }),
          (error) => ({ error }),
        ),
        follow ? follow.over.then(() => ({ over: true })) : NEVER,
      ]);
      if (step.over) {
        // Not awaited: a stream waiting out its retry delay settles late, if at all.
        next.catch(() => {});
        internal.abortStream();
        iterator.return?.()?.catch?.(() => {});
        break;
      }
      if (step.error !== undefined) {
        failure = step.error;
        break;
      }
      if (step.result.done) break;
      // The user's Stop is final: a part the stream had read before its abort goes no
      // further (its turn keeps what it showed at Stop).
      if (signal?.aborted) break;
      const chunk = step.result.value;
      if (chunk.event === "metadata" && chunk.data?.run_id) call.runId = call.runId ?? chunk.data.run_id;
      if (chunk.event === "error") runFailed = true;
      noteMessages(chunk, seen);
      yield withKept(chunk, kept());
    }
    if (signal?.aborted || runFailed || !call.threadId || !canFollow) {
      if (failure !== null) throw failure;
      return;
    }
    if (!call.runId) {
      // The stream died before naming its run: find it by its tag (none: no run was made).
      const { apiUrl, headers } = routeOf(client);
      const found = { url: apiUrl, threadId: call.threadId, requestId: call.requestId, headers, signal };
      call.runId = await findRun(found).catch(() => null);
      if (!call.runId) {
        if (failure !== null) throw failure;
        return;
      }
    }
    follow = follow ?? followRun(client, call, internal.signal, maxWaitMs);
    const answer = await follow.answer;
    if (signal?.aborted) return;
    if (!answer || !answer.complete) {
      if (failure !== null) throw failure;
      return;
    }
    yield* authoritative(client, call, answer, seen, signal, kept());
  } finally {
    internal.abort();
  }
}

/** A `values` event (assistant-ui's whole list) with the thread's stopped turns in it. */
function withKept(chunk, turns) {
  if (chunk.event !== "values" || !Array.isArray(chunk.data?.messages) || turns.length === 0) return chunk;
  const messages = withStoppedTurns(chunk.data.messages, turns);
  return messages === chunk.data.messages ? chunk : { ...chunk, data: { ...chunk.data, messages } };
}

/** The thread's state as a `values` event, the answer message showing the route's text. */
async function* authoritative(client, call, answer, seen, signal, turns) {
  let state = null;
  try {
    state = typeof client.threads?.getState === "function" ? await client.threads.getState(call.threadId) : null;
  } catch {
    state = null;
  }
  if (signal?.aborted) return;
  if (state && state.values && Array.isArray(state.values.messages)) {
    const messages = withStoppedTurns(withFinalAnswer(state.values.messages, answer), turns);
    const values = { ...state.values, messages };
    yield { event: "values", data: values };
    const interrupts = interruptsOf(state);
    if (interrupts.length) yield { event: "updates", data: { __interrupt__: interrupts } };
    return;
  }
  if (answer.content && answer.message_id) {
    const known = seen.get(answer.message_id) ?? { id: answer.message_id, type: "ai", content: "" };
    yield { event: "messages/complete", data: [replaceText(known, answer.content)] };
  }
}
