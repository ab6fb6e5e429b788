"use client";
// `useStreamWithRecovery`: `useStream` from @langchain/langgraph-sdk/react, plus the
// route. Same options, same return value, and `recovery`. It wraps the SDK's hook (no
// fork): the SDK keeps streaming, rejoining, tool calls, interrupts, history, submit and
// stop; this hook follows every run through the final-answer route from the moment its
// id is known, and once the route says the run is complete, `messages` (and
// `values.messages`) show the thread's state with the route's answer text in place of
// whatever the stream showed — replaced, never appended, so neither a truncated nor a
// doubled (replayed) prefix survives the run's end.

import { Client } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { useEffect, useMemo, useRef, useState } from "react";

import { ThreadGone } from "./errors.js";
import { historyLimit, useThreadHistory } from "./history.js";
import { applyAnswers, withFinalAnswer } from "./messages.js";
import { exactlyOnceFetch } from "./once.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY, findRun, settleFinalAnswer } from "./settle.js";
import { newRequestId } from "./stream.js";
import { answerText } from "./text.js";

/** How long a stream may go on after the route said its run is over before it is ended:
 * by then it can only be stalled or replaying (the SDK retries a cut up to ~20 s). */
export const STREAM_GRACE_MS = 300;

export const IDLE_RECOVERY = Object.freeze({
  status: "idle",
  complete: false,
  recovered: false,
  error: null,
});

function runStorage(reconnectOnMount) {
  if (typeof window === "undefined") return null;
  if (reconnectOnMount === true) return window.sessionStorage;
  if (typeof reconnectOnMount === "function") return reconnectOnMount();
  return null;
}

/** The SDK's own key for the run a `reconnectOnMount` hook rejoins. */
function rejoinKey(threadId) {
  return `lg:stream:${threadId}`;
}

function routeHeaders(options) {
  const headers = { ...(options.defaultHeaders || {}) };
  if (options.apiKey) headers["x-api-key"] = options.apiKey;
  return headers;
}

/**
 * Follows the runs of one hook instance. Lives in a ref: React state only carries what
 * the page renders (`version` bumps re-render it).
 */
class RunTracker {
  constructor(rerender) {
    this.rerender = rerender;
    this.threadId = null;
    this.run = null; // {threadId, runId, requestId, controller, streaming, dropError}
    this.answers = new Map(); // message id → authoritative text, for this thread
    this.final = null; // {threadId, runId, answer, messages}
    this.recovery = IDLE_RECOVERY;
    this.stopping = false;
    this.config = null; // {apiUrl, headers, maxWaitMs, client, storage, stop, baseMessages}
  }

  setRecovery(next) {
    this.recovery = Object.freeze({ ...this.recovery, ...next });
    this.rerender();
  }

  switchThread(threadId) {
    if (threadId === this.threadId) return;
    const run = this.run;
    if (run && run.streaming && run.threadId == null) {
      // The submit that started this run created the thread: same run, now named.
      run.threadId = threadId;
      this.threadId = threadId;
      return;
    }
    if (run) {
      run.controller.abort();
      this.run = null;
    }
    this.threadId = threadId;
    this.answers = new Map();
    this.final = null;
    this.recovery = IDLE_RECOVERY;
  }

  /**
   * A stream begins: a submit (`requestId`) or a join (`runId`), recorded before the SDK
   * starts it, so that `onCreated` — which can come before React re-renders — finds it.
   */
  streamStarted({ requestId = null, runId = null } = {}) {
    if (this.run) this.run.controller.abort();
    this.run = {
      threadId: this.threadId,
      runId,
      requestId,
      controller: new AbortController(),
      streaming: true,
      loading: false,
      watching: false,
      dropError: undefined,
    };
    this.final = null;
    this.setRecovery({ status: "streaming", complete: false, recovered: false, error: null });
    if (runId) this.watch(this.run);
  }

  /** The SDK's `isLoading` changed. */
  loadingChanged(isLoading, error) {
    if (!isLoading) {
      this.streamEnded(error);
      return;
    }
    const run = this.run;
    if (run && run.streaming && !run.loading) {
      run.loading = true; // the stream submit() or joinStream() began
      return;
    }
    // A stream this hook did not begin: the SDK's rejoin of the run it stored.
    const storage = this.config.storage;
    const runId = this.threadId && storage ? storage.getItem(rejoinKey(this.threadId)) : null;
    this.streamStarted({ runId });
    this.run.loading = true;
  }

  /** The server named the run (`onCreated`). */
  runCreated(meta) {
    const run = this.run;
    if (!run || !meta || !meta.run_id) return;
    run.runId = meta.run_id;
    if (meta.thread_id) run.threadId = meta.thread_id;
    this.watch(run);
  }

  /** The base stream stopped loading: cleanly, by an error, a cut, or a stop. */
  async streamEnded(error) {
    const run = this.run;
    if (!run || !run.streaming) return;
    run.streaming = false;
    run.dropError = error;
    if (this.final && this.final.run === run) {
      // Settled while the stream still ran: judge what it showed now that it is over.
      this.setRecovery({ recovered: this.recovered(run, this.final.answer) });
      return;
    }
    this.setRecovery({ status: "settling" });
    if (run.runId || run.watching) return;
    run.threadId = run.threadId ?? this.threadId;
    if (!run.threadId) {
      this.setRecovery({ status: "failed", error: error ?? new Error("no thread was created") });
      return;
    }
    // The response naming the run never arrived: find it by the id the submit tagged it with.
    try {
      if (run.requestId) {
        run.runId = await findRun({
          url: this.config.apiUrl,
          threadId: run.threadId,
          requestId: run.requestId,
          headers: this.config.headers,
          signal: run.controller.signal,
        });
      }
    } catch (caught) {
      if (run.controller.signal.aborted) return;
      this.setRecovery({ status: "failed", error: caught });
      return;
    }
    if (run !== this.run) return;
    if (!run.runId) {
      // No run was created: nothing to recover; the SDK's error stands.
      this.setRecovery({ status: "failed", error: error ?? new Error("the server created no run") });
      return;
    }
    this.watch(run);
  }

  async watch(run) {
    if (run.watching || !run.runId || !run.threadId) return;
    run.watching = true;
    const { signal } = run.controller;
    let answer;
    try {
      answer = await settleFinalAnswer({
        apiUrl: this.config.apiUrl,
        threadId: run.threadId,
        runId: run.runId,
        headers: this.config.headers,
        maxWaitMs: this.config.maxWaitMs,
        signal,
        onUpdate: (latest) => {
          // While the run goes on, a stream that is gone still gets the newest text.
          if (run.streaming || signal.aborted || !latest.content || !latest.message_id) return;
          this.answers.set(latest.message_id, latest.content);
          this.rerender();
        },
      });
    } catch (error) {
      if (signal.aborted || run !== this.run) return;
      this.setRecovery({ status: "failed", complete: false, error });
      if (error instanceof ThreadGone) this.final = null;
      return;
    }
    if (signal.aborted || run !== this.run) return;
    const shown = this.shownText(answer.message_id);
    let values = null;
    try {
      // The thread's state carries what the stream missed (tool results, later steps).
      const state = await this.config.client.threads.getState(run.threadId, undefined, { signal });
      if (!state.metadata || state.metadata.run_id === run.runId) values = state.values;
    } catch {
      // The route's answer alone still fixes the text.
    }
    if (signal.aborted || run !== this.run) return;
    if (answer.message_id && answer.content) this.answers.set(answer.message_id, answer.content);
    this.final = { run, runId: run.runId, threadId: run.threadId, answer, values };
    this.setRecovery({
      status: answer.complete ? "settled" : "failed",
      complete: !!answer.complete,
      recovered: this.recovered(run, answer),
      error: answer.complete ? null : new Error("the run did not finish within maxWaitMs"),
    });
    // The SDK refetches its history only after a clean end; a stale head would make the
    // next submit fork from before this run.
    this.config.refreshHistory(run.threadId);
    if (answer.complete && run.streaming) {
      setTimeout(() => this.endStream(run), STREAM_GRACE_MS);
    }
  }

  /** Whether the route's answer differs from what the stream showed (so far). */
  recovered(run, answer) {
    const dropped = run.dropError !== undefined && answer.status !== "error";
    return dropped || this.shownText(answer.message_id) !== (answer.content ?? "");
  }

  /** End a stream whose run is over: stalled, or retrying a cut the route already covered. */
  endStream(run) {
    if (run !== this.run || !run.streaming) return;
    // Without the rejoin key, the SDK's stop() does not cancel the (finished) run.
    if (this.config.storage && run.threadId) this.config.storage.removeItem(rejoinKey(run.threadId));
    this.stopping = true;
    try {
      this.config.stop();
    } finally {
      this.stopping = false;
    }
  }

  shownText(messageId) {
    const messages = this.config.baseMessages() || [];
    const message = messages.find((m) => m && m.id === messageId);
    return message ? answerText(message.content) : "";
  }
}

/**
 * `useStream(options)` that always ends a run showing the thread's authoritative answer.
 * Extra option: `recovery: { maxWaitMs }` (default 240 s: how long to follow a run whose
 * stream is gone). Extra return value: `recovery: { status, complete, recovered, error }`
 * with `status` one of `idle`, `streaming`, `settling` (the stream ended; the run is
 * being followed), `settled`, `failed`.
 */
export function useStreamWithRecovery(options) {
  const { recovery: recoveryOptions, ...streamOptions } = options;
  const [, setVersion] = useState(0);
  const trackerRef = useRef(null);
  if (trackerRef.current === null) {
    trackerRef.current = new RunTracker(() => setVersion((v) => v + 1));
  }
  const tracker = trackerRef.current;
  const storageRef = useRef(undefined);
  if (storageRef.current === undefined) storageRef.current = runStorage(options.reconnectOnMount);

  const [ownThreadId, setOwnThreadId] = useState(options.threadId ?? null);
  const threadId = "threadId" in options ? (options.threadId ?? null) : ownThreadId;

  const client = useMemo(
    () =>
      options.client ??
      new Client({
        apiUrl: options.apiUrl,
        apiKey: options.apiKey,
        // The SDK re-sends a POST whose response never came (see once.js): each submit
        // is tagged with a request id, and this fetch joins its run instead.
        callerOptions: {
          ...options.callerOptions,
          fetch: exactlyOnceFetch(options.callerOptions?.fetch),
        },
        defaultHeaders: options.defaultHeaders,
      }),
    [options.client, options.apiKey, options.apiUrl, options.callerOptions, options.defaultHeaders],
  );
  const ownHistory = useThreadHistory(client, threadId, historyLimit(options.fetchStateHistory), {
    enabled: options.thread == null,
    skipFetch: () => tracker.run !== null && tracker.run.streaming,
    onError: options.onError,
  });
  const thread = options.thread ?? ownHistory;

  const base = useStream({
    ...streamOptions,
    client,
    thread,
    onThreadId(id) {
      setOwnThreadId(id);
      tracker.switchThread(id);
      options.onThreadId?.(id);
    },
    onCreated(meta) {
      tracker.runCreated(meta);
      options.onCreated?.(meta);
    },
    onStop(args) {
      if (!tracker.stopping) options.onStop?.(args);
    },
  });

  const messagesKey = options.messagesKey ?? "messages";
  tracker.config = {
    apiUrl: client.threads?.apiUrl ?? options.apiUrl,
    headers: routeHeaders(options),
    maxWaitMs: recoveryOptions?.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    client,
    refreshHistory: (id) => thread.mutate(id).catch(() => {}),
    storage: storageRef.current,
    stop: base.stop,
    baseMessages: () => base.messages,
  };
  if (tracker.threadId !== threadId && !(tracker.run && tracker.run.streaming)) {
    tracker.switchThread(threadId);
  }

  const loadingRef = useRef(false);
  useEffect(() => {
    if (base.isLoading === loadingRef.current) return;
    loadingRef.current = base.isLoading;
    tracker.loadingChanged(base.isLoading, base.error);
  }, [base.isLoading]);

  useEffect(() => {
    tracker.mounted = true;
    return () => {
      tracker.mounted = false;
      // Not at once: StrictMode unmounts and remounts a component on the spot.
      setTimeout(() => {
        if (!tracker.mounted) tracker.run?.controller.abort();
      }, 0);
    };
  }, []);

  const submit = (values, submitOptions) => {
    const requestId = newRequestId();
    tracker.streamStarted({ requestId });
    return base.submit(values, {
      ...submitOptions,
      metadata: { ...(submitOptions?.metadata || {}), [REQUEST_ID_KEY]: requestId },
    });
  };
  const joinStream = (runId, ...rest) => {
    tracker.streamStarted({ runId });
    return base.joinStream(runId, ...rest);
  };

  const final = tracker.final;
  const settled = final !== null && final.threadId === threadId && !base.isLoading;
  let overlaid = null; // once per render: stable identities for the app's memos
  const overlay = () => {
    overlaid ??= overlayValues();
    return overlaid;
  };
  const overlayValues = () => {
    const baseValues = base.values;
    let values = settled && final.values ? { ...baseValues, ...final.values } : baseValues;
    let messages = Array.isArray(values?.[messagesKey]) ? values[messagesKey] : [];
    messages = applyAnswers(messages, tracker.answers);
    if (settled) messages = withFinalAnswer(messages, final.answer);
    if (values && values[messagesKey] === messages) return values;
    values = { ...(values || {}), [messagesKey]: messages };
    return values;
  };
  // The error that ended a stream is not the run's while the route follows the run, nor
  // once the route says it succeeded: `recovery` tells the user instead.
  const run = tracker.run;
  const following = tracker.recovery.status === "settling";
  const recoveredFine =
    tracker.recovery.status === "settled" && final !== null && final.answer.status !== "error";
  const dropped =
    run !== null && run.dropError !== undefined && (following || recoveredFine);

  return new Proxy(base, {
    get(target, prop) {
      switch (prop) {
        case "messages":
          return overlay()[messagesKey] ?? [];
        case "values":
          return overlay();
        case "error":
          // A drop the route recovered from is not the run's error.
          return dropped && target.error === run.dropError ? undefined : target.error;
        case "recovery":
          return tracker.recovery;
        case "submit":
          return submit;
        case "joinStream":
          return joinStream;
        default:
          return Reflect.get(target, prop, target);
      }
    },
    has(target, prop) {
      return prop === "recovery" || Reflect.has(target, prop);
    },
  });
}
