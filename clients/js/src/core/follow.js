// Following a run through the final-answer route: the part both bindings' `RunFollower`
// classes share (react/follower.js, langchain-react/follower.js). Each keeps its own run
// shape and decides when a run's stream is gone; this finds a run by the request id its
// submit was tagged with, and waits for the route to say the run is over, keeping the
// newest text it reads for a stream that is gone.

import { ThreadGone } from "./errors.js";
import { DEFAULT_MAX_WAIT_MS, findRun, settleFinalAnswer } from "./settle.js";

/** How long a stream may go on after the route said its run is over before it is ended:
 * by then it can only be stalled or replaying (the SDK retries a cut up to ~20 s). */
export const STREAM_GRACE_MS = 300;

export const IDLE_RECOVERY = Object.freeze({
  status: "idle",
  complete: false,
  recovered: false,
  error: null,
});

/** `promise`, or undefined once `ms` passed, whichever comes first. */
export function within(promise, ms) {
  let timer;
  const limit = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/**
 * The headers the route is asked with, from a hook's options: the app's own headers and
 * API key, as the binding's client sends them, so a route behind the same auth answers.
 */
export function routeHeaders(options) {
  const headers = { ...(options.defaultHeaders || {}) };
  if (options.apiKey) headers["x-api-key"] = options.apiKey;
  return headers;
}

/**
 * The state both followers share: `run` (with its `threadId`, `runId`, `requestId` and
 * `controller`), `answers` (message id → the route's text, for this thread), `final`,
 * `recovery`, and `config` (set by the hook on every render: at least `apiUrl`,
 * `headers` and `maxWaitMs`).
 */
export class RouteFollower {
  constructor(rerender) {
    this.rerender = rerender;
    this.threadId = null;
    this.run = null;
    this.answers = new Map();
    this.final = null;
    this.recovery = IDLE_RECOVERY;
    this.config = null;
  }

  setRecovery(next) {
    this.recovery = Object.freeze({ ...this.recovery, ...next });
    this.rerender();
  }

  /** The run `run`'s submit made, found by the request id it was tagged with. */
  findTagged(run) {
    return findRun({
      url: this.config.apiUrl,
      threadId: run.threadId,
      requestId: run.requestId,
      headers: this.config.headers,
      signal: run.controller.signal,
    });
  }

  /**
   * The route's answer once `run` is over; meanwhile, while `streamGone()`, the newest
   * text the route reads is kept in `answers`. Null when the run was left (another began,
   * or it was aborted) or the route failed: `recovery` then says why.
   */
  async settle(run, streamGone) {
    const { signal } = run.controller;
    try {
      return await settleFinalAnswer({
        apiUrl: this.config.apiUrl,
        threadId: run.threadId,
        runId: run.runId,
        headers: this.config.headers,
        maxWaitMs: this.config.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
        signal,
        onUpdate: (latest) => {
          if (signal.aborted || !streamGone() || !latest.content || !latest.message_id) return;
          this.answers.set(latest.message_id, latest.content);
          this.rerender();
        },
      });
    } catch (error) {
      if (signal.aborted || run !== this.run) return null;
      if (error instanceof ThreadGone) this.final = null;
      this.setRecovery({ status: "failed", complete: false, error });
      return null;
    }
  }

  /** The hook unmounted: its run is no longer followed. */
  dispose() {
    if (this.run) this.run.controller.abort();
  }
}
