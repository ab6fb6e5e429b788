// `load` for @assistant-ui/react-langgraph's `useLangGraphRuntime`: what a thread shows
// when its runtime mounts (a reload, a thread opened from the list). assistant-ui calls
// it once and rejoins no run still going, so a plain state read would show a reload
// mid-run without its answer, for good.

import { withFinalAnswer } from "../core/messages.js";
import { settleFinalAnswer } from "../core/settle.js";
import { withStoppedTurns } from "../core/stopped.js";

/** The route's base URL and headers: the langgraph server's, as the SDK client sends. */
export function routeOf(client) {
  const runs = client.runs || {};
  return { apiUrl: runs.apiUrl, headers: { ...(runs.defaultHeaders || {}) } };
}

/** The interrupts a thread's state holds (its tasks'), as assistant-ui takes them. */
export function interruptsOf(state) {
  const tasks = Array.isArray(state?.tasks) ? state.tasks : [];
  return tasks.flatMap((task) => (Array.isArray(task?.interrupts) ? task.interrupts : []));
}

/**
 * `load(threadId, {signal})` for the threads of `client`: `{messages, interrupts}` once
 * the thread's latest run is over (or `maxWaitMs` passed), the turns of `stopped`
 * (a `StoppedTurns`) kept. The run is followed through the route (`?wait=` long-polls;
 * the thread shows as loading meanwhile), and the thread's state is returned with the
 * route's text in the answer message and the stopped turns as they were shown at Stop.
 */
export function createLoad({ client, maxWaitMs, stopped }) {
  return async (threadId, { signal } = {}) => {
    const { apiUrl, headers } = routeOf(client);
    let answer = null;
    if (apiUrl) {
      try {
        answer = await settleFinalAnswer({ apiUrl, threadId, headers, signal, maxWaitMs });
      } catch (error) {
        if (signal?.aborted) throw error;
        // A thread with no run yet, or a server without the route: its state is all there is.
      }
    }
    const state = await client.threads.getState(threadId, undefined, { signal });
    const values = state?.values ?? {};
    let messages = Array.isArray(values.messages) ? values.messages : [];
    // The state read after the route's answer holds that run; a run since is its own.
    const sameRun = answer !== null && (state?.metadata?.run_id ?? answer.run_id) === answer.run_id;
    if (sameRun && answer.complete && answer.status !== "error") messages = withFinalAnswer(messages, answer);
    return { messages: withStoppedTurns(messages, stopped.of(threadId)), interrupts: interruptsOf(state) };
  };
}
