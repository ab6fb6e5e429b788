// A thread's latest turn as its run streamed it: the state's messages as `messages`
// events, so a resume shows the whole turn the page had (reasoning, tool calls and their
// results, text), not only its answer. Pure: states in, events out, each message once.

import { latestTurnOfState } from "../answer/state.js";

export class TurnReplay {
  /** @param {string|null} runId  the run whose turn is replayed (the route's `run_id`) */
  constructor(runId = null) {
    this.runId = runId;
    this.replayed = new Set(); // message ids (or places in the turn) already replayed
  }

  /**
   * The `[event, data]` pairs of the turn's messages in `state` not replayed yet. None
   * from a state its run has not reached: its latest turn is an earlier run's.
   */
  events(state) {
    const stateRun = state?.metadata?.run_id;
    if (this.runId && stateRun != null && String(stateRun) !== this.runId) return [];
    const events = [];
    latestTurnOfState(state).forEach((message, at) => {
      if (!message || typeof message !== "object") return;
      const key = message.id != null ? `id:${message.id}` : `at:${at}`;
      if (this.replayed.has(key)) return;
      this.replayed.add(key);
      events.push(["messages", [message, {}]]);
    });
    return events;
  }
}
