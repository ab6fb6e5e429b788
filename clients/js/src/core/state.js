// F2a: the final-answer body computed client-side from `GET /threads/{id}/state` (and the
// thread's status), for a server without the route — the route's contract, `source: "api"`.

import { answerText, contentText } from "./text.js";

export const MAX_ERROR_MESSAGE = 2000;
const START_CHANNEL = "__start__";

function messageKind(message) {
  if (!message || typeof message !== "object") return null;
  const kind = message.type ?? message.role;
  if (kind === "human" || kind === "user") return "human";
  if (kind === "ai" || kind === "assistant") return "ai";
  return kind == null ? null : String(kind);
}

/** The last AI message after the last human message with text: `{content, messageId}`. */
export function finalAnswer(messages) {
  const list = Array.isArray(messages) ? messages : [];
  let start = 0;
  for (let i = list.length - 1; i >= 0; i -= 1) {
    if (messageKind(list[i]) === "human" && contentText(list[i].content).trim()) {
      start = i + 1;
      break;
    }
  }
  for (let i = list.length - 1; i >= start; i -= 1) {
    if (messageKind(list[i]) !== "ai") continue;
    const content = answerText(list[i].content);
    if (content.trim()) return { content, messageId: list[i].id ?? null };
  }
  return { content: "", messageId: null };
}

function runError(code, message, retryable) {
  return { code, message: String(message).slice(0, MAX_ERROR_MESSAGE), retryable };
}

function errorString(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function interruptEntry(value) {
  if (value && typeof value === "object") return { id: value.id ?? null, value: value.value ?? null };
  return { id: null, value };
}

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
  if (errors.length) {
    result = { status: "error", error: runError("run_failed", errorString(errors[0]), false), interrupts: [] };
  } else if (interrupts.length) {
    result = { status: "interrupted", error: null, interrupts };
  } else if (next.length) {
    result = { status: "running", error: null, interrupts: [] };
  } else {
    result = { status: "success", error: null, interrupts: [] };
  }
  const complete = result.status !== "running";
  // The server's view of the thread wins where it knows better.
  if (threadStatus === "busy") {
    return complete ? { status: "running", error: null, interrupts: [] } : result;
  }
  if (threadStatus === "error" && result.status !== "error") {
    return {
      status: "error",
      error: runError("run_failed", "the run failed; see the server log", false),
      interrupts: [],
    };
  }
  if (threadStatus === "interrupted" && result.status === "running") {
    return { status: "interrupted", error: null, interrupts: result.interrupts };
  }
  if (threadStatus === "idle" && result.status === "running") {
    return {
      status: "error",
      error: runError(
        "run_stopped",
        "the run stopped before finishing (cancelled, or the server restarted)",
        true,
      ),
      interrupts: [],
    };
  }
  return result;
}

/**
 * The final-answer body, computed client-side from a thread state in the langgraph API's
 * JSON shape (F2a) — the same contract as the route, with `source: "api"`.
 */
export function answerFromState(threadId, state, { threadStatus = null, source = "api" } = {}) {
  const values = (state && state.values) || {};
  const messages = values && Array.isArray(values.messages) ? values.messages : [];
  const run = statusFromState(state, threadStatus);
  // Input still waiting in __start__ has not reached the messages: no answer yet.
  const waitingInput = ((state && state.next) || []).includes(START_CHANNEL);
  const answer = waitingInput ? { content: "", messageId: null } : finalAnswer(messages);
  const complete = run.status !== "running" && run.status !== "pending";
  const metadata = (state && state.metadata) || {};
  const updatedAt = (state && state.created_at) ?? null;
  return {
    content: answer.content,
    completed_at: complete ? updatedAt : null,
    complete,
    status: run.status,
    thread_id: threadId,
    run_id: metadata.run_id != null ? String(metadata.run_id) : null,
    checkpoint_id: (state && state.checkpoint && state.checkpoint.checkpoint_id) ?? null,
    message_id: answer.messageId,
    updated_at: updatedAt,
    source,
    error: run.error,
    interrupts: run.interrupts,
  };
}

/** A run asked for whose first checkpoint is not written yet. */
export function pendingAnswer(threadId, runId, source = "api") {
  return {
    content: "",
    completed_at: null,
    complete: false,
    status: "pending",
    thread_id: threadId,
    run_id: runId ?? null,
    checkpoint_id: null,
    message_id: null,
    updated_at: null,
    source,
    error: null,
    interrupts: [],
  };
}
