// The run follower behind `useStreamWithRecovery`: follows each run one hook instance
// streams (a submit, a join, the SDK's own rejoin after a reload) through the
// final-answer route from the moment its id is known, and keeps what the page must show
// once the route says the run is over. Framework-free: the hook feeds it the SDK's
// callbacks and loading flag, and reads `final`, `answers` and `recovery` back.

import { cancelStoppedRun } from "../core/cancel.js";
import { IDLE_RECOVERY, RouteFollower, STREAM_GRACE_MS, within } from "../core/follow.js";
import { StoppedTurns } from "../core/stopped.js";
import { answerText } from "../core/text.js";

/** How long a submit after a Stop waits for the stopped run's cancel to land. */
export const STOP_LIMIT_MS = 5000;

export function runStorage(reconnectOnMount) {
  if (typeof window === "undefined") return null;
  if (reconnectOnMount === true) return window.sessionStorage;
  if (typeof reconnectOnMount === "function") return reconnectOnMount();
  return null;
}

/** The SDK's own key for the run a `reconnectOnMount` hook rejoins. */
export function rejoinKey(threadId) {
  return `lg:stream:${threadId}`;
}

/**
 * Follows the runs of one hook instance. Lives in a ref: React state only carries what
 * the page renders (`version` bumps re-render it).
 */
export class RunFollower extends RouteFollower {
  constructor(rerender) {
    super(rerender);
    // this.run: {threadId, runId, requestId, controller, streaming, dropError}
    // this.final: {run, runId, threadId, answer, values}
    // this.config: {apiUrl, headers, maxWaitMs, client, storage, stop, messagesKey}
    this.stopping = false;
    // The turns the user stopped, per thread, as shown at Stop (core/stopped.js; the hook
    // puts its client's here: core/stopped-reads.js); the messages the view last showed;
    // the cancel of the run last stopped, under way.
    this.stopped = new StoppedTurns();
    this.shown = [];
    this.cancelling = null;
    // The SDK's message list as the app last read it through the view (its `messages`,
    // or its `values`' list). Never read from the SDK here: in SDK 1.9+ each field read
    // adds stream modes to the next run, and the follower must not ask for a mode the
    // app did not (see view.js).
    this.streamMessages = null;
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
    this.streamMessages = null;
    this.recovery = IDLE_RECOVERY;
  }

  /**
   * A stream begins: a submit (`requestId`) or a join (`runId`), recorded before the SDK
   * starts it, so that `onCreated` — which can come before React re-renders — finds it.
   */
  begin({ requestId = null, runId = null } = {}) {
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
    this.begin({ runId });
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
    if (run.userStopped) return;
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
      if (run.requestId) run.runId = await this.findTagged(run);
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
    // While the run goes on, a stream that is gone still gets the newest text.
    const answer = await this.settle(run, () => !run.streaming);
    if (answer === null || signal.aborted || run !== this.run) return;
    if (answer.message_id && answer.content && this.answers.get(answer.message_id) !== answer.content) {
      // Shown now, in the message the stream began: the state read below is another
      // round trip (a loaded machine's CI once took 1.09 s from the run's end to here).
      this.answers.set(answer.message_id, answer.content);
      this.rerender();
    }
    let values = null;
    try {
      // The thread's state carries what the stream missed (tool results, later steps).
      const state = await this.config.client.threads.getState(run.threadId, undefined, { signal });
      if (!state.metadata || state.metadata.run_id === run.runId) values = state.values;
    } catch {
      // The route's answer alone still fixes the text.
    }
    if (signal.aborted || run !== this.run) return;
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

  /**
   * The user pressed Stop. The run, if it is not over, is left (nothing more of it is
   * shown), what the page shows of its turn is kept (`stopped`), and it is cancelled on
   * the server, found by its tag if no response named it; then the history is read
   * again, so that the next submit goes on from the stopped turn, not from before it.
   */
  userStop() {
    const run = this.run;
    if (!run || run.userStopped) return;
    if (this.final && this.final.run === run && this.final.answer.complete) return;
    run.userStopped = true;
    run.controller.abort();
    const threadId = run.threadId ?? this.threadId;
    this.stopped.stop(threadId, this.shown);
    const { client, storage, apiUrl, headers } = this.config;
    // The SDK's stop() cancels the run it stored for a rejoin: here it is cancelled once.
    if (storage && threadId) storage.removeItem(rejoinKey(threadId));
    this.setRecovery({ status: "stopped", complete: true, recovered: false, error: null });
    const refresh = this.config.refreshHistory;
    // The history is then read again only while the page still shows the thread: it is
    // the shown thread's, and another thread's read into it would show there.
    this.cancelling = cancelStoppedRun({
      threadId,
      runId: run.runId,
      requestId: run.requestId,
      cancel: (thread, runId) => client.runs.cancel(thread, runId, true),
      find: { url: apiUrl, headers },
    }).then(() => (threadId && threadId === this.threadId ? refresh(threadId) : undefined));
  }

  /** A submit after a Stop waits for the stopped run's cancel (the thread is busy till then). */
  async beforeSubmit() {
    const cancelling = this.cancelling;
    if (cancelling === null) return;
    await within(cancelling, STOP_LIMIT_MS);
    if (this.cancelling === cancelling) this.cancelling = null;
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
    // SDK 1.9's stop() returns at once, but its isLoading stays true until a reconnect
    // backoff it is sleeping out ends (tens of seconds): the run is over for the app now.
    run.stopped = true;
    this.stopping = true;
    try {
      // SDK 1.15's stop() is async (it re-reads the thread after calling onStop).
      Promise.resolve(this.config.stop()).catch(() => {});
    } finally {
      this.stopping = false;
    }
    this.rerender(); // the view no longer says it loads (view.js)
  }

  /** The text the stream showed for `messageId`: "" if the app never read messages. */
  shownText(messageId) {
    const list = this.streamMessages;
    const messages = Array.isArray(list) ? list : [];
    const message = messages.find((m) => m && m.id === messageId);
    return message ? answerText(message.content) : "";
  }
}
