// The route's path and query parameters, validated as the Python route does: every
// failure is a 422 naming the parameter; a parameter given empty means its default.

export const MAX_ID_LENGTH = 256;
export const MAX_WAIT_SECONDS = 60;
export const FORMATS = ["json", "text"];
const TRUE = new Set(["true", "1", "yes"]);
const FALSE = new Set(["false", "0", "no"]);
// What Python's float() reads: a decimal number, or inf/nan (out of range below).
const NUMBER = /^[+-]?(?:(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)$/i;
// Python's str.isprintable(): no control, format, surrogate, private or unassigned
// character, and no separator but the ASCII space.
const NOT_PRINTABLE = /[\p{C}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;

export class InvalidRequest extends Error {
  name = "InvalidRequest";
}

/** An id of 1–256 printable characters without `/` (UUIDs and 8-hex TUI ids alike). */
export function validateId(value, name) {
  const length = [...value].length;
  if (length < 1 || length > MAX_ID_LENGTH) {
    throw new InvalidRequest(`${name} must be 1-${MAX_ID_LENGTH} characters long`);
  }
  if (NOT_PRINTABLE.test(value) || value.includes("/") || value !== value.trim()) {
    throw new InvalidRequest(`${name} must be printable characters without '/' or edge spaces`);
  }
  return value;
}

function single(params, name) {
  const values = params.getAll(name);
  if (values.length > 1) throw new InvalidRequest(`${name} given more than once`);
  return values.length && values[0] !== "" ? values[0] : null;
}

/** Python's `repr` of a printable string, as the Python route's messages quote values. */
export function pythonRepr(value) {
  const text = String(value).replace(/\\/g, "\\\\");
  if (text.includes("'") && !text.includes('"')) return `"${text}"`;
  return `'${text.replace(/'/g, "\\'")}'`;
}

export function parseWait(raw) {
  if (raw == null || raw === "") return 0;
  const text = raw.trim();
  if (!NUMBER.test(text)) {
    throw new InvalidRequest(`wait must be a number of seconds, got ${pythonRepr(raw)}`);
  }
  const seconds = /^[+-]?inf/i.test(text) ? (text.startsWith("-") ? -Infinity : Infinity) : Number(text.replace(/_/g, ""));
  if (!(seconds >= 0 && seconds <= MAX_WAIT_SECONDS)) {
    throw new InvalidRequest(`wait must be between 0 and ${MAX_WAIT_SECONDS} seconds`);
  }
  return seconds;
}

export function parseBool(raw, name) {
  if (raw == null || raw === "") return false;
  const lowered = raw.trim().toLowerCase();
  if (TRUE.has(lowered)) return true;
  if (FALSE.has(lowered)) return false;
  throw new InvalidRequest(`${name} must be true or false, got ${pythonRepr(raw)}`);
}

/** `{threadId, runId, wait, includeReasoning, format}` from the path's id and the query. */
export function parseQuery(threadId, params) {
  const runId = single(params, "run_id");
  const format = (single(params, "format") ?? "json").toLowerCase();
  if (!FORMATS.includes(format)) {
    throw new InvalidRequest(`format must be one of ${FORMATS.join(", ")}, got ${pythonRepr(format)}`);
  }
  return {
    threadId: validateId(threadId, "thread_id"),
    runId: runId === null ? null : validateId(runId, "run_id"),
    wait: parseWait(single(params, "wait")),
    includeReasoning: parseBool(single(params, "include_reasoning"), "include_reasoning"),
    format,
  };
}
