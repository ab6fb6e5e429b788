// `withFinalAnswer(LangGraphAgent)`: @ag-ui/langgraph's agent (or a subclass of it, such
// as @copilotkit/runtime/langgraph's) that never reports a run finished on a cut stream:
// LangGraphAgent ends the AG-UI run on whatever state it reads when its stream ends.

import { cancelStoppedRun } from "../core/cancel.js";
import { describe, RunGone, ThreadGone } from "../core/errors.js";
import { STREAM_GRACE_MS } from "../core/follow.js";
import { withExactlyOnce } from "../core/once.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY, findRun, settleFinalAnswer } from "../core/settle.js";
import { StoppedTurns, withStoppedTurns } from "../core/stopped.js";
import { newRequestId } from "../core/stream.js";
import { TextLedger } from "./ledger.js";
import { shownMessages, withAnswerText } from "./messages.js";

/** Thrown into LangGraphAgent's loop once `RUN_ERROR` has ended the AG-UI run. */
const ENDED = Symbol("@evoscientist/final-answer/ag-ui: the run ended with RUN_ERROR");

/** The `code` of a `RUN_ERROR` for a failure to follow the run (not the run's own). */
export function followErrorCode(error) {
  if (error instanceof RunGone) return "run_not_found";
  if (error instanceof ThreadGone) return "thread_not_found";
  return "final_answer_unavailable";
}

/**
 * A subscriber LangGraphAgent writes to that can be shut: once the run ended with
 * `RUN_ERROR`, what LangGraphAgent would still send (a snapshot, `RUN_FINISHED`, its own
 * error) goes nowhere.
 */
function gate(subscriber) {
  let shut = false;
  return {
    next: (event) => (shut ? undefined : subscriber.next(event)),
    error: (error) => (shut ? undefined : subscriber.error(error)),
    complete: () => (shut ? undefined : subscriber.complete()),
    get closed() {
      return shut || subscriber.closed;
    },
    shut() {
      shut = true;
    },
  };
}

/**
 * `Base` (LangGraphAgent or a subclass) whose runs end on the route's settled answer.
 *
 * LangGraphAgent streams a run with `client.runs.stream` and, when that iterator ends,
 * reads `threads.getState` once and sends `MESSAGES_SNAPSHOT` and `RUN_FINISHED`: a
 * stream cut mid-answer ends the AG-UI run on the truncated state of a run still going.
 * Here the stream it iterates is followed through the route too (`wait=` long-polls)
 * from the moment the run has an id; when the stream ends or fails (or says `error`), or
 * is still open `STREAM_GRACE_MS` after the route said the run is over, the route's
 * settled answer ends the run: LangGraphAgent's own ending on the settled state, after
 * the text events the client still needs; or, for a run that failed or was lost,
 * `RUN_ERROR` with the route's error, and nothing after it. The submit is tagged with a
 * request id and sent through `exactlyOnceFetch`, so a POST cut before its response
 * joins its run instead of making a second.
 *
 * Stop (`abortRun`, the runtime's `/stop`) cancels the run on the server (by the id the
 * stream named, else found by the submit's tag) and ends the AG-UI run cleanly where the
 * client's text stopped. The turn as the client got it is kept per thread, on every clone
 * the runtime makes of the agent, and every later `MESSAGES_SNAPSHOT` of that thread
 * shows it: a cancelled node writes no message.
 */
export function withFinalAnswer(Base) {
  return class FinalAnswerAgent extends Base {
    constructor(config) {
      super(config);
      withExactlyOnce(this.client);
      /** The turns the user stopped, per thread (`StoppedTurns`). */
      this.stoppedTurns = new StoppedTurns();
    }

    clone() {
      // LangGraphAgent's clone makes a new SDK client unless the app gave one.
      const copy = super.clone();
      withExactlyOnce(copy.client);
      // The runtime runs and stops each request on a clone of the agent it was given: a
      // turn stopped on one is shown by the next one's snapshots.
      copy.stoppedTurns = this.stoppedTurns;
      return copy;
    }

    /** The route's base URL and headers: the langgraph server's, as the SDK client sends. */
    finalAnswerOptions() {
      const config = this.config ?? {};
      const own = config.finalAnswer ?? {};
      const headers = { ...(config.propertyHeaders ?? {}) };
      if (config.langsmithApiKey) headers["x-api-key"] = config.langsmithApiKey;
      Object.assign(headers, (config.headerFactory ? config.headerFactory() : this.headers) ?? {});
      return {
        apiUrl: own.apiUrl ?? config.deploymentUrl ?? this.client?.threads?.apiUrl,
        headers: { ...headers, ...(own.headers ?? {}) },
        maxWaitMs: own.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
        fetch: own.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      };
    }

    async prepareStream(input, streamMode) {
      const run = {
        requestId: newRequestId(),
        runId: null,
        threadId: input.threadId,
        controller: new AbortController(), // aborted by the user's Stop
        request: new AbortController(), // the SDK's request, aborted once it is left
        follow: null, // the route's answer, followed beside the stream (`followAnswer`)
        finalState: null, // the thread's state, read once the route said the run is over
        text: new TextLedger(),
        answer: null,
      };
      this.finalAnswerRun = run;
      // Stopped before the run was asked for (the runtime's stop came first).
      if (this.cancelRequested) this.stop(run);
      // LangGraphAgent passes `forwardedProps` on to `client.runs.stream`'s payload.
      const props = input.forwardedProps ?? {};
      const forwardedProps = {
        ...props,
        metadata: { ...(props.metadata ?? {}), [REQUEST_ID_KEY]: run.requestId },
        // A cut stream is rejoined from where it broke; the run goes on without it.
        streamResumable: props.streamResumable ?? true,
        onDisconnect: props.onDisconnect ?? "continue",
        onRunCreated: (created) => {
          if (created && created.run_id) run.runId ??= created.run_id;
          return props.onRunCreated?.(created);
        },
        // A stream left (a Stop, or still open once the run is over) ends the SDK's request.
        signal: run.request.signal,
      };
      return super.prepareStream({ ...input, forwardedProps }, streamMode);
    }

    async handleStreamEvents(prepared, threadId, subscriber, input, streamModes) {
      const run = this.finalAnswerRun;
      if (!prepared || !prepared.streamResponse || !run) {
        return super.handleStreamEvents(prepared, threadId, subscriber, input, streamModes);
      }
      const shut = gate(subscriber);
      const streamResponse = this.followRun(prepared.streamResponse, threadId, run, shut);
      const { client } = this; // followRun may lend the ending a client reading the final state
      try {
        return await super.handleStreamEvents({ ...prepared, streamResponse }, threadId, shut, input, streamModes);
      } finally {
        this.client = client;
      }
    }

    dispatchEvent(event) {
      const run = this.finalAnswerRun;
      if (event && event.type === "MESSAGES_SNAPSHOT") {
        let { messages } = event;
        if (run && run.answer) messages = withAnswerText(messages, run.answer);
        const threadId = run?.threadId ?? this.activeRun?.threadId ?? this.threadId;
        messages = withStoppedTurns(messages, this.stoppedTurns.of(threadId));
        if (messages !== event.messages) event = { ...event, messages };
      }
      const sent = super.dispatchEvent(event);
      if (run && sent !== false) run.text.record(event);
      return sent;
    }

    abortRun() {
      const run = this.finalAnswerRun;
      if (run) this.stop(run);
      // LangGraphAgent would cancel `activeRun.id`, which is the AG-UI run's id until the
      // stream names the server's: the Stop's cancel is `stop`'s, by the right id.
      this.cancelSent = true;
      return super.abortRun();
    }

    /**
     * The user's Stop: nothing more of `run` is passed on, the turn as the client got it
     * is kept, and the run is cancelled on the server (found by its tag when no response
     * named it). Once per run; a run already settled (its ending under way) is over.
     */
    stop(run) {
      if (run.controller.signal.aborted || run.answer) return;
      run.controller.abort();
      run.request.abort();
      this.stoppedTurns.stop(run.threadId, shownMessages(this.messages, run.text));
      const options = this.finalAnswerOptions();
      // Not awaited: the page goes idle at once; the cancel never rejects.
      void cancelStoppedRun({
        threadId: run.threadId,
        runId: run.runId,
        requestId: run.requestId,
        cancel: (threadId, runId) => this.client.runs.cancel(threadId, runId, true),
        find: { url: options.apiUrl, headers: options.headers, fetchImpl: options.fetch },
      });
    }

    /**
     * The SDK's run stream, passed through part by part until it ends, fails, says
     * `error`, or is left once the route said the run is over; then the run's settled
     * answer. Returns to LangGraphAgent's ending when the run succeeded or was
     * interrupted (or the user stopped it); otherwise ends the AG-UI run with `RUN_ERROR`
     * and throws `ENDED`.
     */
    async *followRun(stream, threadId, run, shut) {
      const { signal } = run.controller;
      const options = this.finalAnswerOptions();
      // Followed beside the stream from the moment the run has an id.
      const runOver = () => {
        if (run.follow === null && run.runId) {
          run.follow = followAnswer(threadId, run, options);
          // LangGraphAgent's ending reads the thread's state twice, one read after the
          // other, once the stream is left: read it as soon as the run is over, while the
          // stream has its grace, so the turn ends without waiting on either.
          run.finalState = run.follow.answer
            .then((settled) => (settled && settled.complete ? this.client.threads.getState(threadId) : null))
            .catch(() => null);
        }
        return run.follow?.over ?? null;
      };
      let failure = null;
      let errorPart = null;
      try {
        for await (const part of partsOf(stream, signal, runOver, () => run.request.abort())) {
          if (part && part.event === "metadata" && part.data && part.data.run_id) {
            run.runId ??= part.data.run_id;
          }
          if (part && part.event === "error") {
            errorPart = part; // an ending only if the route says the run failed
            break;
          }
          yield part;
        }
      } catch (error) {
        failure = error;
      }
      if (signal.aborted) return this.endShownText(run);
      let answer = run.follow ? await run.follow.answer : null;
      if (signal.aborted) return this.endShownText(run);
      try {
        if (!answer) {
          const runId =
            run.runId ??
            (await findRun({
              url: options.apiUrl,
              threadId,
              requestId: run.requestId,
              headers: options.headers,
              fetchImpl: options.fetch,
              signal,
            }));
          if (!runId) {
            // The server made no run: nothing to follow.
            if (failure) throw failure;
            if (errorPart) this.endWithError(shut, errorMessage(errorPart.data), "run_failed");
            return;
          }
          run.runId = runId;
          answer = await settleFinalAnswer({
            apiUrl: options.apiUrl,
            threadId,
            runId,
            headers: options.headers,
            maxWaitMs: options.maxWaitMs,
            fetch: options.fetch,
            signal,
          });
        }
      } catch (error) {
        if (error === ENDED) throw error;
        // The user stopped the run meanwhile: LangGraphAgent ends it where the text stopped.
        if (signal.aborted) return this.endShownText(run);
        this.endWithError(shut, describe(error), followErrorCode(error));
      }
      if (!answer.complete) {
        this.endWithError(shut, `run ${answer.run_id} did not settle within ${options.maxWaitMs} ms`, "run_unsettled");
      }
      if (answer.status === "error") {
        const error = answer.error ?? {};
        this.endWithError(shut, error.message ?? "the run failed", error.code ?? "run_failed");
      }
      // Success or interrupt: LangGraphAgent's ending reads the settled state.
      run.answer = answer;
      if (run.finalState) this.client = readingFinalState(this.client, threadId, run.finalState);
      this.completeText(run, answer);
    }

    /** Ends the client's open text and tool call, the answer's text made whole first. */
    completeText(run, answer) {
      this.endOpen(run.text.completion(answer));
    }

    /**
     * Ends the client's open text and tool call where they stopped (a Stop), so that
     * LangGraphAgent's `RUN_FINISHED` passes the event verifier.
     */
    endShownText(run) {
      this.endOpen(run.text.open().map((messageId) => ({ type: "TEXT_MESSAGE_END", messageId })));
    }

    /** The open tool call's end, then `textEvents`; LangGraphAgent's message in progress cleared. */
    endOpen(textEvents) {
      const activeId = this.activeRun?.id;
      const progress = activeId != null ? this.messagesInProcess?.[activeId] : null;
      if (progress && progress.toolCallId) {
        this.dispatchEvent({ type: "TOOL_CALL_END", toolCallId: progress.toolCallId });
      }
      for (const event of textEvents) this.dispatchEvent(event);
      if (activeId != null && this.messagesInProcess) this.messagesInProcess[activeId] = null;
    }

    endWithError(shut, message, code) {
      shut.next({ type: "RUN_ERROR", message, code });
      shut.complete();
      shut.shut();
      throw ENDED;
    }
  };
}

/**
 * The route's answer for `run`, followed beside its stream: `answer` (the settled answer,
 * or null when the route could not be followed or the user stopped the run) and `over`,
 * which resolves once the route says the run is over (never otherwise).
 */
function followAnswer(threadId, run, options) {
  const answer = settleFinalAnswer({
    apiUrl: options.apiUrl,
    threadId,
    runId: run.runId,
    headers: options.headers,
    maxWaitMs: options.maxWaitMs,
    fetch: options.fetch,
    signal: run.controller.signal,
  }).catch(() => null);
  const over = answer.then((settled) => (settled && settled.complete ? undefined : NEVER));
  return { answer, over };
}

/**
 * `client`, whose `threads.getState(threadId)` gives `finalState` (a promise of the state
 * read once the run was over; null if that read failed, then the state is read anew).
 */
function readingFinalState(client, threadId, finalState) {
  const threads = Object.create(client.threads);
  threads.getState = (id, ...rest) =>
    id === threadId && rest.length === 0
      ? finalState.then((state) => state ?? client.threads.getState(id))
      : client.threads.getState(id, ...rest);
  return Object.assign(Object.create(client), { threads });
}

const NEVER = new Promise(() => {});
const STOPPED = Symbol("stopped");
const PAST_DEADLINE = Symbol("past the deadline");

function pause(ms) {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
}

/**
 * `stream`'s parts as they come, until the user stops the run (`signal`, at once: a
 * stream being rejoined may send nothing for a while), or `STREAM_GRACE_MS` after
 * `runOver()` (a promise, null while there is none yet) resolved: a stream still open
 * then is stalled, waiting to rejoin a cut, or a backlog a busy runtime is still reading,
 * and the route's answer ends the turn sooner than any of them would. A stream left
 * before its end is closed, and `leave()` called (to end its request).
 */
async function* partsOf(stream, signal, runOver, leave) {
  const iterator = stream[Symbol.asyncIterator]();
  const stopped = new Promise((resolve) => {
    if (signal.aborted) resolve(STOPPED);
    else signal.addEventListener("abort", () => resolve(STOPPED), { once: true });
  });
  let deadline = null; // resolves PAST_DEADLINE STREAM_GRACE_MS after the route said the run is over
  let ended = false;
  try {
    while (!signal.aborted) {
      const over = deadline === null ? runOver() : null;
      if (over) deadline = over.then(() => pause(STREAM_GRACE_MS)).then(() => PAST_DEADLINE);
      const contenders = [iterator.next(), stopped];
      if (deadline) contenders.push(deadline);
      const next = await Promise.race(contenders);
      if (next === STOPPED || next === PAST_DEADLINE) return;
      if (next.done) {
        ended = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!ended) {
      leave();
      Promise.resolve(iterator.return?.()).catch(() => {});
    }
  }
}

function errorMessage(data) {
  if (data && typeof data === "object" && typeof data.message === "string") return data.message;
  return typeof data === "string" ? data : JSON.stringify(data);
}
