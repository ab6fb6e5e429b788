// Follows the runs of one v2 stream controller (`StreamController`, under @langchain/react's
// and @langchain/svelte's `useStream`) through the final-answer route, with no framework.
// It also ends streams: the controller reconnects a cut `/stream/events` without a cursor
// and can stay loading long after the run ended, so once the route says the run is over the
// controller is rebound to the thread (`disconnect()`, then hydrating from state).

import { cancelStoppedRun } from "../core/cancel.js";
import { IDLE_RECOVERY, RouteFollower, STREAM_GRACE_MS, within } from "../core/follow.js";
import { StoppedTurns } from "../core/stopped.js";
import { answerText } from "../core/text.js";

/** How long a submit after a Stop waits for the stopped run's cancel to land. */
export const STOP_LIMIT_MS = 5000;

export class RunFollower extends RouteFollower {
  constructor(rerender) {
    super(rerender);
    // this.run: {threadId, runId, requestId, controller, watching, reconnected, baseError}
    // this.final: {run, answer}: the route said `run` is over
    // this.config, set by the hook on every render: {apiUrl, headers, maxWaitMs,
    // isLoading(), baseMessages(), baseError(), shown(), refresh(threadId),
    // cancel(threadId, runId)}.
    this.frozen = null; // messages shown while the controller is rebound
    this.refreshing = null; // the rebinding under way
    // The turns the user stopped, per thread, as shown at Stop (core/stopped.js), and the
    // cancel of the run last stopped, under way.
    this.stopped = new StoppedTurns();
    this.cancelling = null;
    // Threads whose latest run was cancelled (a Stop here, or as the route says).
    this.cancelledLast = new Set();
  }

  /** A run begins (`requestId`: our submit; `runId` null and no request: a joined run). */
  begin({ requestId = null, runId = null } = {}) {
    if (this.run) this.run.controller.abort();
    this.run = {
      threadId: this.threadId,
      runId,
      requestId,
      controller: new AbortController(),
      watching: false,
      reconnected: false,
      refreshed: false,
      baseError: this.config ? this.config.baseError() : undefined,
    };
    this.final = null;
    this.setRecovery({ status: "streaming", complete: false, recovered: false, error: null });
    return this.run;
  }

  /** The binding made the thread id for a submit (`onThreadId`): same run, now named. */
  threadNamed(threadId) {
    if (this.run && this.run.threadId == null) this.run.threadId = threadId;
    if (threadId === this.threadId) return;
    this.threadId = threadId;
    this.answers = new Map();
    this.frozen = null;
  }

  /**
   * The thread the hook shows changed (mount, switch, reload): follow its latest turn,
   * which may be a run in progress that this page did not start.
   */
  threadShown(threadId) {
    if (threadId === this.threadId) return;
    if (this.run) this.run.controller.abort();
    this.run = null;
    this.forget(threadId);
    if (threadId) this.watch(this.begin());
  }

  forget(threadId) {
    this.threadId = threadId;
    this.answers = new Map();
    this.final = null;
    this.frozen = null;
    this.recovery = IDLE_RECOVERY;
  }

  /** Whether the latest run of `threadId` was cancelled (its next `run.start` is a
   * fresh run's, which langgraph-api's sockets mistake for a resume: once.js). */
  latestRunCancelled(threadId) {
    return this.cancelledLast.has(threadId);
  }

  /** The server accepted the submit's `run.start` (`onCreated`). */
  runCreated(runId) {
    const run = this.run;
    if (run && runId && run.threadId) this.cancelledLast.delete(run.threadId);
    if (!run || !runId || (run.runId && run.runId !== runId && run.watching)) return;
    run.runId = runId;
    run.threadId = run.threadId ?? this.threadId;
    this.watch(run);
  }

  /** The binding's `submit()` returned: when no response named its run, find it by tag. */
  async submitReturned(run) {
    if (run !== this.run || run.runId || run.watching) return;
    run.threadId = run.threadId ?? this.threadId;
    if (!run.threadId || !run.requestId) {
      this.setRecovery({ status: "failed", error: this.config.baseError() ?? null });
      return;
    }
    try {
      run.runId = await this.findTagged(run);
    } catch (error) {
      if (!run.controller.signal.aborted) this.setRecovery({ status: "failed", error });
      return;
    }
    if (run !== this.run) return;
    if (!run.runId) {
      // No run was made: nothing to recover; the binding's error stands.
      this.setRecovery({ status: "failed", error: this.config.baseError() ?? null });
      return;
    }
    this.watch(run);
  }

  /** `isLoading` changed: a run this page did not submit (a resume, a rejoin) is followed. */
  loadingChanged(isLoading) {
    if (isLoading) {
      const idle = this.run === null || (this.final !== null && this.final.run === this.run);
      if (idle && this.threadId && this.frozen === null) this.watch(this.begin());
      return;
    }
    if (this.run && !this.final && this.recovery.status === "streaming") {
      this.setRecovery({ status: "settling" });
    }
  }

  /** The binding retries its event stream (`onReconnect`). */
  reconnecting() {
    const run = this.run;
    if (!run) return;
    run.reconnected = true;
    if (this.final && this.final.run === run && this.final.answer.complete) this.endStream(run);
  }

  async watch(run) {
    if (run.watching || !run.threadId) return;
    run.watching = true;
    const { signal } = run.controller;
    // While the run goes on, a stream that is gone still gets the newest text.
    const answer = await this.settle(run, () => !this.config.isLoading());
    if (answer === null || signal.aborted || run !== this.run) return;
    if (answer.complete && run.threadId) {
      if (answer.error && answer.error.code === "run_cancelled") this.cancelledLast.add(run.threadId);
      else this.cancelledLast.delete(run.threadId);
    }
    run.runId = run.runId ?? answer.run_id;
    const shown = this.shownText(answer.message_id);
    if (answer.message_id && answer.content) this.answers.set(answer.message_id, answer.content);
    this.final = { run, answer };
    this.setRecovery({
      status: answer.complete ? "settled" : "failed",
      complete: !!answer.complete,
      recovered: run.reconnected || shown !== (answer.content ?? ""),
      error: answer.complete ? null : new Error("the run did not finish within maxWaitMs"),
    });
    if (answer.complete) setTimeout(() => this.endStream(run), STREAM_GRACE_MS);
  }

  /**
   * The route said `run` is over; the binding still loads, retries its stream, or never
   * received the run: rebind it to the thread's state, which also ends the retry loop.
   */
  endStream(run) {
    if (run !== this.run || run.refreshed || !this.final || this.final.run !== run) return;
    const id = this.final.answer.message_id;
    const missing = id != null && !this.config.baseMessages().some((m) => m && m.id === id);
    if (!this.config.isLoading() && !run.reconnected && !missing) return;
    this.refresh(run);
  }

  /**
   * The user pressed Stop: true when it stopped a run that was not over. That run is left
   * (nothing more of it is shown), what its turn shows is kept (`stopped`), and it is
   * cancelled on the server here, found by its tag if no response named it: the
   * controller knows no run once a cut or a rebind took it.
   */
  userStop() {
    const run = this.run;
    if (!run || run.userStopped) return false;
    if (this.final && this.final.run === run && this.final.answer.complete) return false;
    run.userStopped = true;
    run.controller.abort();
    const threadId = run.threadId ?? this.threadId;
    if (threadId) this.cancelledLast.add(threadId);
    this.stopped.stop(threadId, this.config.shown());
    this.setRecovery({ status: "stopped", complete: true, recovered: false, error: null });
    // Then the controller is rebound to the thread: its stream ends (a cut one's retries
    // too), and over WebSocket its session, which langgraph-api 0.16 would take the next
    // `run.start` on as a resume of the run it still holds (cancelled: "interrupted").
    this.cancelling = cancelStoppedRun({
      threadId,
      runId: run.runId,
      requestId: run.requestId,
      cancel: this.config.cancel,
      find: { url: this.config.apiUrl, headers: this.config.headers },
    }).then(() => (run === this.run && threadId ? this.refresh(run) : undefined));
    return true;
  }

  /** A submit must not start while the binding still waits on a run that is over, nor
   * before a stopped run's cancel landed (the thread is busy till then). */
  async beforeSubmit() {
    const cancelling = this.cancelling;
    if (cancelling !== null) {
      await within(cancelling, STOP_LIMIT_MS);
      if (this.cancelling === cancelling) this.cancelling = null;
    }
    const run = this.run;
    if (run && this.final && this.final.run === run && this.final.answer.complete) {
      if (this.config.isLoading() && !run.refreshed) await this.refresh(run);
      else if (this.refreshing) await this.refreshing;
    }
  }

  refresh(run) {
    if (run.refreshed) return this.refreshing ?? Promise.resolve();
    run.refreshed = true;
    return this.rebound(run.threadId);
  }

  /** Rebind the controller to `threadId`, what the page shows kept meanwhile. */
  rebound(threadId) {
    this.frozen = this.config.shown();
    this.rerender();
    this.refreshing = this.config
      .refresh(threadId)
      .catch(() => {})
      .finally(() => {
        this.refreshing = null;
        this.frozen = null;
        this.rerender();
      });
    return this.refreshing;
  }

  /** Whether the binding's error belongs to a run the route said ended well. */
  hidesError(error) {
    const run = this.run;
    if (!run || error == null || error === run.baseError) return false;
    if (this.recovery.status === "settling") return true;
    return this.final !== null && this.final.run === run && this.final.answer.status !== "error";
  }

  shownText(messageId) {
    const message = this.config.baseMessages().find((m) => m && m.id === messageId);
    return message ? answerText(message.content) : "";
  }
}
