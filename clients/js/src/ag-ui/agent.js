// `withFinalAnswer(LangGraphAgent)`: @ag-ui/langgraph's agent (or a subclass of it, such
// as @copilotkit/runtime/langgraph's) that never reports a run finished on a cut stream.
//
// LangGraphAgent 0.0.43 streams a run with `client.runs.stream` and, when that iterator
// ends, reads `threads.getState` once and sends `MESSAGES_SNAPSHOT` and `RUN_FINISHED`: a
// stream cut mid-answer (cleanly, or after the SDK gave up rejoining) ends the AG-UI run
// on the truncated state of a run that is still executing. A stream that throws fails
// the observable instead, and an `error` event is followed by `RUN_FINISHED` as well.
//
// Here the stream LangGraphAgent iterates is the SDK's, followed: when it ends or fails
// (or says `error`), the run is followed through the final-answer route (`wait=`
// long-polls) until the route says it settled. Then LangGraphAgent's own ending runs on
// the settled state, after the text events the client still needs; or, when the run
// failed or was lost, `RUN_ERROR` with the route's error ends the AG-UI run and nothing
// follows it. Every event the stream carries passes through as LangGraphAgent makes it.
// The run's submit is tagged with a request id and sent through `exactlyOnceFetch`, so a
// POST cut before its response joins the run it made instead of making a second.

import { describe, RunGone, ThreadGone } from "../core/errors.js";
import { withExactlyOnce } from "../core/once.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY, findRun, settleFinalAnswer } from "../core/settle.js";
import { newRequestId } from "../core/stream.js";
import { TextLedger } from "./ledger.js";
import { withAnswerText } from "./messages.js";

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

export function withFinalAnswer(Base) {
  return class FinalAnswerAgent extends Base {
    constructor(config) {
      super(config);
      withExactlyOnce(this.client);
    }

    clone() {
      // LangGraphAgent's clone makes a new SDK client unless the app gave one.
      const copy = super.clone();
      withExactlyOnce(copy.client);
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
        controller: new AbortController(),
        text: new TextLedger(),
        answer: null,
      };
      this.finalAnswerRun = run;
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
      return super.handleStreamEvents({ ...prepared, streamResponse }, threadId, shut, input, streamModes);
    }

    dispatchEvent(event) {
      const run = this.finalAnswerRun;
      if (run && run.answer && event && event.type === "MESSAGES_SNAPSHOT") {
        event = { ...event, messages: withAnswerText(event.messages, run.answer) };
      }
      const sent = super.dispatchEvent(event);
      if (run && sent !== false) run.text.record(event);
      return sent;
    }

    abortRun() {
      this.finalAnswerRun?.controller.abort();
      return super.abortRun();
    }

    /**
     * The SDK's run stream, passed through part by part; after its end (or failure, or
     * `error` part), the run followed to its settled answer. Returns to LangGraphAgent's
     * ending when the run succeeded or was interrupted; otherwise ends the AG-UI run with
     * `RUN_ERROR` and throws `ENDED`.
     */
    async *followRun(stream, threadId, run, shut) {
      let failure = null;
      let errorPart = null;
      try {
        for await (const part of stream) {
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
        if (this.cancelRequested || run.controller.signal.aborted) throw error;
        failure = error;
      }
      if (this.cancelRequested || run.controller.signal.aborted) return; // the app stopped it
      const options = this.finalAnswerOptions();
      const { signal } = run.controller;
      let answer;
      try {
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
      } catch (error) {
        if (error === ENDED) throw error;
        // The app stopped the run meanwhile: LangGraphAgent ends it as it ends a stop.
        if (signal.aborted) return;
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
      this.completeText(run, answer);
    }

    /** Ends the client's open text and tool call, the answer's text made whole first. */
    completeText(run, answer) {
      const activeId = this.activeRun?.id;
      const progress = activeId != null ? this.messagesInProcess?.[activeId] : null;
      if (progress && progress.toolCallId) {
        this.dispatchEvent({ type: "TOOL_CALL_END", toolCallId: progress.toolCallId });
      }
      for (const event of run.text.completion(answer)) this.dispatchEvent(event);
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

function errorMessage(data) {
  if (data && typeof data === "object" && typeof data.message === "string") return data.message;
  return typeof data === "string" ? data : JSON.stringify(data);
}
