// A run's end watched through the final-answer route while its stream is read. A stream
// that stalls after its run ended (no byte, no close) would otherwise hold the answer
// until the stall timeout; the bindings' followers end such a stream the same way
// (core/follow.js): the route said the run is over, and `STREAM_GRACE_MS` later the
// stream can only be stalled or replaying.

import { STREAM_GRACE_MS } from "./follow.js";
import { DEFAULT_MAX_WAIT_MS, Reconciler } from "./settle.js";

export class RunEndWatch {
  /**
   * @param {object} options  the Reconciler's (`url`, `threadId`, `fetchImpl`, `headers`,
   *   `sleep`), and `signal` (the watch ends with it) and `maxWait` (ms)
   */
  constructor({ signal, maxWait = DEFAULT_MAX_WAIT_MS, ...route }) {
    this.route = route;
    this.maxWait = maxWait;
    this.controller = new AbortController();
    this.runId = null;
    if (signal) {
      if (signal.aborted) this.controller.abort();
      else signal.addEventListener("abort", () => this.stop(), { once: true });
    }
  }

  /** Watch run `runId` (the first one named; later calls do nothing): `onOver()` once the
   * route says it is complete and `STREAM_GRACE_MS` has passed. */
  start(runId, onOver) {
    if (this.runId !== null || !runId) return;
    this.runId = runId;
    const { signal } = this.controller;
    const reconciler = new Reconciler({ ...this.route, runId, signal });
    reconciler.settle(this.maxWait).then(
      (answer) => {
        if (!answer.complete || signal.aborted) return;
        const timer = setTimeout(() => {
          if (!signal.aborted) onOver();
        }, STREAM_GRACE_MS);
        signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
      },
      () => {}, // stopped, or the route failed: the stream's own ending stands
    );
  }

  stop() {
    this.controller.abort();
  }
}
