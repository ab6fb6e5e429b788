// The final-answer body the route serves and the clients compute, in one shape: its
// `complete` and `completed_at` follow from its status.
// Mirrors evoscientist_final_answer/answer/result.py.

import { isComplete, runState } from "./status.js";

/** `completed_at` and `complete` of an answer in `status`, last written at `updatedAt`. */
function completion(status, updatedAt) {
  const complete = isComplete(status);
  return { completed_at: complete ? updatedAt : null, complete };
}

/**
 * The body, fields in the documented order. `reasoning` is added last when given (the
 * route's `include_reasoning`).
 */
export function answerRecord({
  threadId,
  status,
  content = "",
  reasoning,
  runId = null,
  checkpointId = null,
  messageId = null,
  updatedAt = null,
  source = "api",
  error = null,
  interrupts = [],
}) {
  const body = {
    content,
    ...completion(status, updatedAt),
    status,
    thread_id: threadId,
    run_id: runId,
    checkpoint_id: checkpointId,
    message_id: messageId,
    updated_at: updatedAt,
    source,
    error,
    interrupts,
  };
  if (reasoning !== undefined) body.reasoning = reasoning;
  return body;
}

/** `answer` with its status, error and interrupts replaced by `state`'s (`runState`). */
export function withRunState(answer, state) {
  if (state.status === answer.status && state.error === answer.error && state.interrupts === answer.interrupts) {
    return answer;
  }
  return {
    ...answer,
    status: state.status,
    ...completion(state.status, answer.updated_at),
    error: state.error,
    interrupts: state.interrupts,
  };
}

/** Where `answer`'s run stands, without its text (`runState`'s shape). */
export function runStateOf(answer) {
  return runState(answer.status, answer.error, answer.interrupts);
}

/** A run asked for whose first checkpoint is not written yet. */
export function pendingAnswer(threadId, runId, source = "api") {
  return answerRecord({ threadId, status: "pending", runId: runId ?? null, source });
}
