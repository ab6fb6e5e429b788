// `createLangGraphStreamWithRecovery`: the `stream` callback `useLangGraphRuntime`
// (@assistant-ui/react-langgraph 0.14) takes, as `unstable_createLangGraphStream` builds
// it, plus the final-answer route. The request is upstream's own (its builder is called
// with a client whose `runs.stream` adds three fields), so the input, command, checkpoint
// and config it sends, and every event it yields, stay assistant-ui's.
//
// What assistant-ui does without it (0.14.25, dist/useLangGraphMessages.js): a cut that
// the SDK cannot resume throws out of `for await`, and the turn is marked failed; a clean
// early end applies the last `values` event it saw, a truncated answer; nothing rejoins
// the run. And `unstable_createLangGraphStream` sends `onDisconnect: "cancel"`, so the
// server cancels the run when the browser's connection drops: the answer is never
// written. Here:
// - `onDisconnect` defaults to "continue" (an app's own value is kept), and a cancel the
//   user asks for (assistant-ui aborts `config.abortSignal`) cancels the run itself;
// - the submit is tagged with a request id and the client's fetch made exactly-once
//   (core/once.js): a POST cut before its response never starts a second run;
// - once the stream ends, however it ended, the run is followed through the route until
//   it settles (the newest text shown meanwhile), then the thread's state is yielded as
//   a `values` event with the route's text in the answer message: assistant-ui replaces
//   its messages with these, so the turn ends on the checkpoint's answer, never failed.
//   A run that ended in error keeps the error event the stream gave it.

import { unstable_createLangGraphStream } from "@assistant-ui/react-langgraph";

import { routeAnswers } from "../core/answers.js";
import { replaceText, withFinalAnswer } from "../core/messages.js";
import { withExactlyOnce } from "../core/once.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY, findRun } from "../core/settle.js";
import { newRequestId } from "../core/stream.js";

const MESSAGE_EVENTS = new Set(["messages/partial", "messages/complete"]);

/**
 * `unstable_createLangGraphStream(options)` that keeps the run alive across a dropped
 * connection and ends each turn on the route's answer. Options: those of
 * `unstable_createLangGraphStream` (`client`, `assistantId`, `streamMode`,
 * `onDisconnect`, default "continue" here), and `recovery: { maxWaitMs }` (default
 * 240 s: how long to follow a run after its stream ended).
 */
export function createLangGraphStreamWithRecovery(options) {
  const { client, assistantId, streamMode, onDisconnect = "continue", recovery = {} } = options;
  withExactlyOnce(client);
  const maxWaitMs = recovery.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;

  return async (messages, config) => {
    const call = { threadId: null, runId: null, requestId: newRequestId() };
    const tagging = {
      runs: {
        stream(threadId, assistant, payload) {
          call.threadId = threadId;
          return client.runs.stream(threadId, assistant, tagged(payload, call));
        },
      },
    };
    const upstream = unstable_createLangGraphStream({
      client: tagging,
      assistantId,
      ...(streamMode === undefined ? {} : { streamMode }),
      onDisconnect,
    });
    const events = await upstream(messages, config);
    const signal = config.abortSignal;
    // The server no longer cancels on a drop: a cancel the user asked for is sent.
    signal?.addEventListener("abort", () => cancelRun(client, call), { once: true });
    return recovering(events, { client, call, signal, maxWaitMs });
  };
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

function routeOf(client) {
  const runs = client.runs || {};
  return { apiUrl: runs.apiUrl, headers: { ...(runs.defaultHeaders || {}) } };
}

async function cancelRun(client, call) {
  try {
    if (!call.runId && call.threadId) {
      const { apiUrl, headers } = routeOf(client);
      call.runId = await findRun({ url: apiUrl, threadId: call.threadId, requestId: call.requestId, headers });
    }
    if (call.runId && typeof client.runs.cancel === "function") {
      await client.runs.cancel(call.threadId, call.runId);
    }
  } catch {
    // the run ended meanwhile, or the server is gone: nothing left to cancel
  }
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

function interruptsOf(state) {
  const tasks = Array.isArray(state?.tasks) ? state.tasks : [];
  return tasks.flatMap((task) => (Array.isArray(task?.interrupts) ? task.interrupts : []));
}

/**
 * Yield upstream's events as they come; then follow the run through the route and end
 * on the thread's state with the route's answer (see the header).
 */
async function* recovering(events, { client, call, signal, maxWaitMs }) {
  const seen = new Map();
  let failure = null;
  let runFailed = false;
  try {
    for await (const chunk of events) {
      if (chunk.event === "metadata" && chunk.data?.run_id) call.runId = call.runId ?? chunk.data.run_id;
      if (chunk.event === "error") runFailed = true;
      noteMessages(chunk, seen);
      yield chunk;
    }
  } catch (error) {
    failure = error;
  }
  if (signal?.aborted || runFailed || !call.threadId) {
    if (failure !== null) throw failure;
    return;
  }
  const { apiUrl, headers } = routeOf(client);
  if (!apiUrl) {
    if (failure !== null) throw failure;
    return;
  }
  if (!call.runId) {
    // The stream died before naming its run: find it by its tag (none: no run was made).
    call.runId = await findRun({ url: apiUrl, threadId: call.threadId, requestId: call.requestId, headers, signal }).catch(
      () => null,
    );
    if (!call.runId) {
      if (failure !== null) throw failure;
      return;
    }
  }
  let answer = null;
  try {
    const updates = routeAnswers({ apiUrl, threadId: call.threadId, runId: call.runId, headers, signal, maxWaitMs });
    for await (const update of updates) {
      if (update.answer) answer = update.answer;
      const latest = update.latest;
      if (latest && !latest.complete && latest.content && latest.message_id) {
        // The stream is gone and the run goes on: its newest text, in its message.
        const known = seen.get(latest.message_id) ?? { id: latest.message_id, type: "ai", content: "" };
        yield { event: "messages/partial", data: [replaceText(known, latest.content)] };
      }
    }
  } catch (error) {
    if (signal?.aborted) return;
    throw failure ?? error;
  }
  if (!answer || !answer.complete) {
    if (failure !== null) throw failure;
    return;
  }
  yield* authoritative(client, call, answer, seen, signal);
}

/** The thread's state as a `values` event, the answer message showing the route's text. */
async function* authoritative(client, call, answer, seen, signal) {
  let state = null;
  try {
    state = typeof client.threads?.getState === "function" ? await client.threads.getState(call.threadId) : null;
  } catch {
    state = null;
  }
  if (signal?.aborted) return;
  if (state && state.values && Array.isArray(state.values.messages)) {
    const values = { ...state.values, messages: withFinalAnswer(state.values.messages, answer) };
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
