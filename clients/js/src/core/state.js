// F2a: the final-answer body computed client-side from `GET /threads/{id}/state` (and the
// thread's status), for a server without the route — the route's contract, `source: "api"`.

import { answerText, contentText, reasoningText } from "./text.js";

export const MAX_ERROR_MESSAGE = 2000;
const START_CHANNEL = "__start__";

function messageKind(message) {
  if (!message || typeof message !== "object") return null;
  const kind = message.type ?? message.role;
  if (kind === "human" || kind === "user") return "human";
  if (kind === "ai" || kind === "assistant") return "ai";
  return kind == null ? null : String(kind);
}

/**
 * The last AI message after the last human message with text:
 * `{content, reasoning, messageId}`.
 */
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
    if (content.trim()) {
      return { content, reasoning: reasoningText(list[i]), messageId: list[i].id ?? null };
    }
  }
  return { content: "", reasoning: "", messageId: null };
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

// A task cancelled mid-step: by Python langgraph (a sibling failed, or the run was
// cancelled while its writes were saved; or the node's own awaited call), or by an
// AbortSignal in langgraph.js.
export const CANCELLED_ERRORS = new Set([
  "CancelledError",
  "asyncio.CancelledError",
  "NodeCancelledError",
  "concurrent.futures._base.CancelledError",
  "AbortError",
]);
// Python langgraph keeps a task's exception as its repr: `RuntimeError('kaboom')`.
const EXCEPTION_REPR = /^([A-Za-z_][\w.]*)\(([\s\S]*)\)$/;
const PY_STRING = /^\s*(['"])((?:\\.|(?!\1)[^\\])*)\1\s*,?\s*$/;
const PY_ESCAPES = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };

/**
 * `[type name, "Type: text"]` of a task's error as an API gives it: Python's repr of the
 * exception (`RuntimeError('kaboom')`), an object with `name`/`message`, or any text.
 */
export function describeException(value) {
  if (value && typeof value === "object") {
    const name = typeof value.name === "string" ? value.name : typeof value.type === "string" ? value.type : null;
    const text = typeof value.message === "string" ? value.message : errorString(value);
    if (name) return [name, text ? `${name}: ${text}` : name];
    return [null, text];
  }
  const raw = String(value ?? "");
  if (raw.startsWith("{")) {
    // LangGraph's JS server keeps a task's error as the JSON of `{message, name}`.
    try {
      const parsed = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return describeException(parsed);
    } catch {
      // not JSON after all: the text as it is
    }
  }
  const match = EXCEPTION_REPR.exec(raw.trim());
  if (!match) return [null, raw];
  const [, name, args] = match;
  if (!args.trim()) return [name, name];
  const literal = PY_STRING.exec(args);
  if (!literal) return [name, raw];
  const text = literal[2].replace(/\\(.)/g, (escape, char) => PY_ESCAPES[char] ?? escape);
  return [name, `${name}: ${text}`];
}

/** The `error` of a run whose tasks failed with `errors`: the first real failure, else a
 * cancellation (the tasks langgraph cancelled because of a failure say so themselves). */
export function errorFromTasks(errors) {
  const described = errors.map(describeException);
  for (const [name, text] of described) {
    if (!CANCELLED_ERRORS.has(name)) return runError("run_failed", text, false);
  }
  const name = described.length ? described[0][0] : null;
  return runError("run_cancelled", `the run was cancelled mid-step (${name})`, false);
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
    result = { status: "error", error: errorFromTasks(errors), interrupts: [] };
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
export function answerFromState(
  threadId,
  state,
  { threadStatus = null, source = "api", includeReasoning = false } = {},
) {
  const values = (state && state.values) || {};
  const messages = values && Array.isArray(values.messages) ? values.messages : [];
  const run = statusFromState(state, threadStatus);
  // Input still waiting in __start__ has not reached the messages: no answer yet.
  const waitingInput = ((state && state.next) || []).includes(START_CHANNEL);
  const answer = waitingInput ? { content: "", reasoning: "", messageId: null } : finalAnswer(messages);
  const complete = run.status !== "running" && run.status !== "pending";
  const metadata = (state && state.metadata) || {};
  const updatedAt = (state && state.created_at) ?? null;
  const body = {
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
  if (includeReasoning) body.reasoning = answer.reasoning;
  return body;
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
