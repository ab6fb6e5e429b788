// The answer from a thread state in the langgraph API's JSON shape: the client's F2a path
// (`GET /threads/{id}/state`) and the route's read.
// Mirrors evoscientist_final_answer/answer/state.py.

import { NO_ANSWER, finalAnswer, latestTurn } from "./extract.js";
import { answerRecord } from "./result.js";
import { START_CHANNEL, errorFromTasks, interruptEntry, overlayThreadStatus, runState } from "./status.js";

/** Status of the run from `next`, `tasks`, `interrupts`, and the thread's own status. */
export function statusFromState(state, threadStatus = null) {
  const next = (state && state.next) || [];
  const tasks = (state && state.tasks) || [];
  const errors = [];
  let interrupts = [];
  for (const task of tasks) {
    if (task && task.error) errors.push(task.error);
    if (task && Array.isArray(task.interrupts) && task.interrupts.length) {
      interrupts.push(...task.interrupts.map(interruptEntry));
    }
  }
  if (!interrupts.length && Array.isArray(state && state.interrupts) && state.interrupts.length) {
    interrupts = state.interrupts.map(interruptEntry);
  }
  let result;
  if (errors.length) result = runState("error", errorFromTasks(errors));
  else if (interrupts.length) result = runState("interrupted", null, interrupts);
  else if (next.length) result = runState("running");
  else result = runState("success");
  return overlayThreadStatus(result, threadStatus);
}

function messagesOf(state) {
  const values = (state && state.values) || {};
  return values && Array.isArray(values.messages) ? values.messages : [];
}

/** Input still waiting in __start__ has not reached the messages: its turn has none yet. */
function inputWaiting(state) {
  return ((state && state.next) || []).includes(START_CHANNEL);
}

/** The latest turn's messages in a thread state (none while its input waits). */
export function latestTurnOfState(state) {
  return inputWaiting(state) ? [] : latestTurn(messagesOf(state));
}

/**
 * The final-answer body, computed from a thread state in the langgraph API's JSON
 * shape — the route's contract, with `source: "api"` unless told otherwise.
 */
export function answerFromState(
  threadId,
  state,
  { threadStatus = null, source = "api", includeReasoning = false } = {},
) {
  const run = statusFromState(state, threadStatus);
  const answer = inputWaiting(state) ? NO_ANSWER : finalAnswer(messagesOf(state));
  const metadata = (state && state.metadata) || {};
  return answerRecord({
    threadId,
    status: run.status,
    content: answer.content,
    reasoning: includeReasoning ? answer.reasoning : undefined,
    runId: metadata.run_id != null ? String(metadata.run_id) : null,
    checkpointId: (state && state.checkpoint && state.checkpoint.checkpoint_id) ?? null,
    messageId: answer.messageId,
    updatedAt: (state && state.created_at) ?? null,
    source,
    error: run.error,
    interrupts: run.interrupts,
  });
}
