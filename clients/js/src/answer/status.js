// Where a run stands: its statuses and completeness, its errors, and the thread status's
// overlay.
// Mirrors evoscientist_final_answer/answer/status.py.

export const START_CHANNEL = "__start__";
export const MAX_ERROR_MESSAGE = 2000;
export const RUN_FAILED_MESSAGE = "the run failed; see the server log";
export const RUN_STOPPED_MESSAGE = "the run stopped before finishing (cancelled, or the server restarted)";

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

/** The run is no longer executing (`success`, `error`, `interrupted`): a poller may stop. */
export function isComplete(status) {
  return status === "success" || status === "error" || status === "interrupted";
}

/** `{status, error, interrupts}`: where a run stands, without its answer. */
export function runState(status, error = null, interrupts = []) {
  return { status, error, interrupts };
}

/** An answer's `error`; its message cut at `MAX_ERROR_MESSAGE` characters. */
export function runError(code, message, retryable) {
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

/** `{id, value}` of an interrupt as an API gives it. */
export function interruptEntry(value) {
  if (value && typeof value === "object") return { id: value.id ?? null, value: value.value ?? null };
  return { id: null, value };
}

/**
 * The server's status of the thread applied where it knows better than the state:
 * `busy` holds a finished-looking run running; `idle` with work left is a stopped run.
 */
export function overlayThreadStatus(state, threadStatus) {
  if (threadStatus === "busy") return isComplete(state.status) ? runState("running") : state;
  if (threadStatus === "error" && state.status !== "error") {
    return runState("error", runError("run_failed", RUN_FAILED_MESSAGE, false));
  }
  if (threadStatus === "interrupted" && state.status === "running") {
    return runState("interrupted", null, state.interrupts);
  }
  if (threadStatus === "idle" && state.status === "running") {
    return runState("error", runError("run_stopped", RUN_STOPPED_MESSAGE, true));
  }
  return state;
}
