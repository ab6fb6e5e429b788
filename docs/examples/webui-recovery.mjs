/**
 * webui-recovery.mjs — stream a langgraph run from a browser and always end with the
 * complete final answer, even when the SSE stream is cut, reset or stalls mid-run.
 *
 * For the authors of @evoscientist/webui. Dependency-free ES module; it uses only what a
 * browser has (`fetch`, `ReadableStream.getReader()`, `TextDecoder`, `AbortController`,
 * `crypto.randomUUID()`), and runs unchanged under Node ≥ 18. It mirrors the Python
 * reference client in `EvoScientist/recovery/` (stream_text.py, reconcile.py, client.py)
 * and implements the spec's F1–F3 and F2a
 * (`docs/superpowers/specs/2026-07-06-webui-sse-checkpoint-fallback-design.md`).
 *
 * Why: `langgraph dev` (langgraph-api 0.16.7) sends `metadata`, then the requested stream
 * modes, `error` when a run fails — and NO terminal event when a run succeeds. A clean
 * close and a cut look alike, so the stream alone can never prove the answer is whole.
 *
 * The flow of `streamWithRecovery()`:
 *
 *  - Stream. `POST {url}/threads/{id}/runs/stream` with `stream_mode: "messages-tuple"`,
 *    `stream_resumable: true` and `metadata.recovery_request_id` (a fresh UUID that tags
 *    the run, so it can be found even if the response naming it never arrives). Bytes are
 *    decoded with `TextDecoder(…, {stream: true})` (a UTF-8 character may straddle two
 *    reads) into a line buffer that keeps an incomplete trailing line (a partial frame)
 *    for the next read; SSE lines (`event:`, `data:`, `id:`, `:comment`; CRLF, CR or LF)
 *    are dispatched on a blank line. An event still incomplete when the body ends is
 *    dropped, as EventSource does.
 *  - F1, truncation: the stream is `truncated` unless an `end` or `error` event arrived.
 *    A drop is the reader throwing (cut/reset: "network error", Node: "terminated"), a
 *    stall (no byte for `stallTimeout` ms — the server sends a heartbeat every 5 s — then
 *    the request is aborted with an AbortController), or a close without a terminal event.
 *  - Resume (what the langgraph SDK does, first layer): after a drop, if the response
 *    named its run's join stream, `GET` it with `Last-Event-ID` and continue from there
 *    (up to 5 attempts, 1 s, 2 s, 4 s… apart, reset by progress); on a clean close the
 *    run is asked (`GET /threads/{id}/runs/{run}`) and the stream is rejoined only while
 *    the run is pending/running.
 *    Browser note: cross-origin, `Location` is NOT readable (CORS exposes only safelisted
 *    headers; langgraph-api adds `content-location`), so the join path is derived from
 *    `Content-Location` (`/threads/T/runs/R` + `/stream`) when `Location` reads as null.
 *  - F2, reconcile — always, whether or not the stream looked whole: ask
 *    `GET {url}/api/threads/{id}/final-answer?run_id=R` (R from the `metadata` event, the
 *    `Content-Location` header, or — if neither arrived — by listing the thread's runs for
 *    our `recovery_request_id`) and REPLACE the shown text with its `content` (never
 *    append: the streamed tokens are a prefix of the same message). An answer not written
 *    yet (`content: ""`, `complete: false`) does not blank the streamed text.
 *  - F3: until `complete`, long-poll with `wait=` (≤ 30 s) and, whenever the server
 *    answered quickly, back off 1 s, 2 s, 4 s, then every 5 s, up to `maxWait` (240 s).
 *    Network errors here ("Failed to fetch" right after a cut, on a pooled connection the
 *    cut killed), timeouts and HTTP errors are retried, never fatal.
 *  - F2a: a 404 WITHOUT `error.code: "thread_not_found"` means an older server without
 *    the route: read `GET /threads/{id}` (status) + `GET /threads/{id}/state` and extract
 *    the answer here (`answerFromState`): the last AI message after the last human one
 *    with non-empty text; text blocks joined, reasoning blocks and a leading inline
 *    `<think>…</think>` excluded; complete iff the thread is not busy and `next` is empty
 *    (or the run errored/was interrupted). A 404 WITH `thread_not_found` → `ThreadGone`.
 *
 * Usage in the WebUI:
 *
 *   import { streamWithRecovery, ThreadGone } from "./webui-recovery.mjs";
 *   const result = await streamWithRecovery({
 *     url: "http://127.0.0.1:2024", threadId, assistantId: "EvoScientist",
 *     input: { messages: [{ role: "user", content: question }] },
 *     onUpdate: (text) => bubble.setText(text),        // replace, never append
 *     signal: abortOnThreadSwitch.signal,              // optional: user cancel
 *   });
 *   if (result.recovered) bubble.note("⚠ stream dropped — recovered from checkpoint");
 *   if (!result.complete) bubble.note("the run has not finished yet");
 *
 * The result is the route's final-answer body (`content`, `complete`, `status`, `run_id`,
 * `completed_at`, `source`, …) plus `recovered` (the route's text differs from what the
 * stream showed), `truncated` (F1: the stream did not prove its end — no `end`, nor an
 * `error` for a run that really failed; always true for a successful run against
 * langgraph-api 0.16.7, which sends no terminal event), `streamError` (the error that
 * ended streaming for good, as a string, or null), `streamTerminalEvent` /
 * `streamErrorEvent` (what the stream itself said), `drops` (every drop seen, resumed or
 * not) and `resumes` (join-stream reconnects).
 */

export const STREAM_MODE = "messages-tuple";
export const TERMINAL_EVENTS = new Set(["end", "error"]);
export const AI_CHUNK_TYPES = new Set(["AIMessageChunk", "ai"]);
export const REQUEST_ID_KEY = "recovery_request_id";

export const DEFAULT_MAX_WAIT_MS = 240_000;
export const DEFAULT_STALL_TIMEOUT_MS = 15_000;
export const BACKOFF_MS = [1000, 2000, 4000];
export const STEADY_BACKOFF_MS = 5000;
export const LONG_POLL_SECONDS = 30;
/** Extra time beyond `wait` (plus connecting) before a held request counts as lost. */
export const READ_MARGIN_MS = 10_000;
export const CONNECT_MARGIN_MS = 10_000;
export const MAX_RECONNECT_ATTEMPTS = 5;
export const FIND_RUN_ATTEMPTS = 5;
export const MAX_ERROR_MESSAGE = 2000;

const START_CHANNEL = "__start__";
const REPLAY_FROM_START = "0-0";

// ---------------------------------------------------------------------------------------
// Errors

/** The server says the thread does not exist: nothing to recover. */
export class ThreadGone extends Error {
  constructor(threadId) {
    super(`thread ${JSON.stringify(threadId)} not found`);
    this.name = "ThreadGone";
    this.threadId = threadId;
  }
}

/** No answer could be read before the deadline. */
export class Unrecoverable extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "Unrecoverable";
  }
}

/** A non-2xx answer; retryable during F2/F3. */
export class HttpStatusError extends Error {
  constructor(status, url, body = "") {
    super(`HTTP ${status} from ${url}${body ? `: ${String(body).slice(0, 200)}` : ""}`);
    this.name = "HttpStatusError";
    this.status = status;
  }
}

/** No byte arrived on the stream for `stallTimeout` ms. */
export class StallError extends Error {
  constructor(ms) {
    super(`no data for ${ms} ms: stream stalled`);
    this.name = "StallError";
  }
}

/** Failures worth another try: network errors, timeouts, HTTP errors, garbled bodies. */
export function isRetryable(error) {
  if (error instanceof ThreadGone) return false;
  if (error instanceof HttpStatusError || error instanceof StallError) return true;
  if (error instanceof TypeError || error instanceof SyntaxError) return true; // "Failed to fetch", bad JSON
  const name = error && error.name;
  return name === "AbortError" || name === "TimeoutError";
}

function describe(error) {
  if (error == null) return null;
  const cause = error.cause && error.cause.message ? ` (${error.cause.message})` : "";
  return `${error.name || "Error"}: ${error.message}${cause}`;
}

// ---------------------------------------------------------------------------------------
// SSE parsing: bytes → events, as a browser's fetch reader sees them

/**
 * An incremental SSE parser. `push(chunk)` takes a `Uint8Array` (or a string) and returns
 * the events completed by it, as `{event, data, id}` (`data` is the raw string; `id` the
 * last event id in force). Incomplete trailing lines and events wait for the next chunk.
 * `end()` flushes the decoder and returns nothing: per the SSE spec, an event not closed
 * by a blank line when the body ends is discarded (it may be a cut frame).
 */
export function createSseParser() {
  const decoder = new TextDecoder("utf-8");
  let buffer = "";
  let eventType = "";
  let data = [];
  let hasData = false;
  let idBuffer = null;
  let started = false;
  const parser = {
    /** The last event id dispatched (null until the server sent one). */
    lastEventId: null,
    /** Whether bytes of an unfinished event (or line) are pending. */
    get pending() {
      return buffer.length > 0 || hasData || eventType !== "";
    },
    push(chunk) {
      let text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      if (!started && text.length > 0) {
        started = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a leading BOM
      }
      buffer += text;
      return drain(false);
    },
    end() {
      buffer += decoder.decode();
      drain(true);
      buffer = "";
      eventType = "";
      data = [];
      hasData = false;
      return [];
    },
  };

  function drain(final) {
    const events = [];
    let start = 0;
    for (;;) {
      let cr = buffer.indexOf("\r", start);
      let lf = buffer.indexOf("\n", start);
      if (cr === -1 && lf === -1) break;
      let end;
      let next;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR at the very end may be the first half of a CRLF split across reads.
        if (cr === buffer.length - 1 && !final) break;
        end = cr;
        next = buffer[cr + 1] === "\n" ? cr + 2 : cr + 1;
      } else {
        end = lf;
        next = lf + 1;
      }
      const event = line(buffer.slice(start, end));
      if (event) events.push(event);
      start = next;
    }
    buffer = buffer.slice(start);
    return events;
  }

  function line(text) {
    if (text === "") return dispatch();
    if (text[0] === ":") return null; // comment (heartbeats)
    const colon = text.indexOf(":");
    let field = text;
    let value = "";
    if (colon !== -1) {
      field = text.slice(0, colon);
      value = text.slice(colon + 1);
      if (value[0] === " ") value = value.slice(1);
    }
    if (field === "event") eventType = value;
    else if (field === "data") {
      data.push(value);
      hasData = true;
    } else if (field === "id" && !value.includes("\0")) idBuffer = value;
    return null;
  }

  function dispatch() {
    if (idBuffer !== null) parser.lastEventId = idBuffer;
    const event = hasData
      ? { event: eventType || "message", data: data.join("\n"), id: parser.lastEventId }
      : null;
    eventType = "";
    data = [];
    hasData = false;
    return event;
  }

  return parser;
}

/** Parse a whole byte/string sequence at once: `{events, pending, lastEventId}`. */
export function parseSse(chunks) {
  const parser = createSseParser();
  const events = [];
  for (const chunk of chunks) events.push(...parser.push(chunk));
  const pending = parser.pending;
  parser.end();
  return { events, pending, lastEventId: parser.lastEventId };
}

/** The JSON payload of an event's `data`, or the raw string if it is not JSON. */
export function eventData(raw) {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

// ---------------------------------------------------------------------------------------
// Message text: what langchain_core's `message.text` and EvoScientist's extraction do

const LEADING_THINK = /^\s*<think>([\s\S]*?)(?:<\/think>|$)\s*/;

/** Split a leading inline `<think>…</think>` (an unclosed one swallows the rest). */
export function splitThink(text) {
  const match = LEADING_THINK.exec(text);
  if (!match) return [text, ""];
  return [text.slice(match[0].length), match[1].trim()];
}

/** Text of a message's content: a string as is; else `text` blocks (and bare strings) joined. */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const block of content) {
    if (typeof block === "string") out += block;
    else if (block && block.type === "text" && typeof block.text === "string") out += block.text;
  }
  return out;
}

/** The user-visible text: text blocks joined, reasoning blocks and inline think removed. */
export function answerText(content) {
  return splitThink(contentText(content))[0];
}

function mergeDicts(left, right) {
  const merged = { ...left };
  for (const [key, value] of Object.entries(right)) {
    const current = merged[key];
    if (!(key in merged) || (value != null && current == null)) merged[key] = value;
    else if (value == null) continue;
    else if (typeof current === "string" && typeof value === "string") {
      if (key === "index" && current.startsWith("lc_")) continue;
      if (["id", "output_version", "model_provider"].includes(key) && current === value) continue;
      merged[key] = current + value;
    } else if (Array.isArray(current) && Array.isArray(value)) {
      merged[key] = mergeLists(current, value);
    } else if (typeof current === "object" && typeof value === "object") {
      merged[key] = mergeDicts(current, value);
    } else if (typeof current === "number" && typeof value === "number") {
      merged[key] = ["index", "created", "timestamp"].includes(key) ? value : current + value;
    }
  }
  return merged;
}

function mergeLists(left, right) {
  const merged = [...left];
  for (const item of right) {
    const mergeable =
      item &&
      typeof item === "object" &&
      (Number.isInteger(item.index) ||
        (typeof item.index === "string" && item.index.startsWith("lc_")));
    const at = mergeable
      ? merged.findIndex(
          (prev) =>
            prev &&
            typeof prev === "object" &&
            prev.index === item.index &&
            (!prev.id || !item.id || prev.id === item.id),
        )
      : -1;
    if (at === -1) {
      merged.push(item);
    } else {
      const { type: _type, ...rest } = item;
      merged[at] = mergeDicts(merged[at], rest);
    }
  }
  return merged;
}

/**
 * Merge two chunks' `content` as langchain's `AIMessageChunk + AIMessageChunk` does:
 * strings concatenate; content blocks with the same `index` merge (their `text` /
 * `reasoning` strings concatenate); other blocks append.
 */
export function mergeContent(left, right) {
  let merged = left == null ? "" : Array.isArray(left) ? [...left] : left;
  if (typeof merged === "string") {
    if (typeof right === "string") return merged + right;
    return [merged, ...(right || [])];
  }
  if (Array.isArray(right)) return mergeLists(merged, right);
  if (merged.length && typeof merged[merged.length - 1] === "string") {
    merged[merged.length - 1] += right;
  } else if (right !== "" && merged.length) {
    merged.push(right);
  }
  return merged;
}

// ---------------------------------------------------------------------------------------
// F1 bookkeeping: the text a stream has shown, and whether it ended provably

/**
 * Accumulates `messages-tuple` events into the text a UI shows (mirror of the Python
 * `StreamText`). `feed(event, data)` returns true when the shown text changed.
 * `truncated` is F1 on the stream alone (no `end`/`error` seen); `streamWithRecovery`
 * refines it once the route has said whether the run really failed.
 */
export function createStreamAccumulator() {
  const messages = new Map(); // message id → merged content
  const order = [];
  const acc = {
    runId: null,
    terminalEvent: null,
    error: null,
    events: 0,
    feed(event, data) {
      acc.events += 1;
      if (event === "metadata" && data && typeof data === "object" && !Array.isArray(data)) {
        if (data.run_id != null) acc.runId = data.run_id;
      } else if (TERMINAL_EVENTS.has(event)) {
        acc.terminalEvent = event;
        if (event === "error") acc.error = data;
      } else if (event.split("|")[0] === "messages" && Array.isArray(data) && data.length) {
        return feedMessage(data[0]);
      }
      return false;
    },
    /** The newest AI message with answer text (reasoning and inline think excluded). */
    get text() {
      for (let i = order.length - 1; i >= 0; i -= 1) {
        const text = answerText(messages.get(order[i]));
        if (text.trim()) return text;
      }
      return "";
    },
    get provedComplete() {
      return acc.terminalEvent !== null;
    },
    get truncated() {
      return acc.terminalEvent === null;
    },
  };

  function feedMessage(message) {
    if (!message || typeof message !== "object" || !AI_CHUNK_TYPES.has(message.type)) {
      return false;
    }
    const key = String(message.id || order.length);
    const before = acc.text;
    const content = message.content || "";
    if (messages.has(key) && message.type === "AIMessageChunk") {
      messages.set(key, mergeContent(messages.get(key), content));
    } else {
      // A whole message replaces whatever chunks came before it.
      if (!messages.has(key)) order.push(key);
      messages.set(key, content);
    }
    return acc.text !== before;
  }

  return acc;
}

/** Feed parsed SSE events (raw `data` strings) at once: `{text, runId, truncated, …}`. */
export function accumulateEvents(events) {
  const acc = createStreamAccumulator();
  for (const { event, data } of events) {
    acc.feed(event, typeof data === "string" ? eventData(data) : data);
  }
  return {
    text: acc.text,
    runId: acc.runId,
    terminalEvent: acc.terminalEvent,
    error: acc.error,
    truncated: acc.truncated,
  };
}

// ---------------------------------------------------------------------------------------
// F2a: the answer from `GET /threads/{id}/state` (+ the thread's status)

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

// ---------------------------------------------------------------------------------------
// F2/F3: ask the server until the run settles

/** Delay before retry `attempt` (0-based): 1 s, 2 s, 4 s, then every 5 s. */
export function backoffMs(attempt) {
  return attempt < BACKOFF_MS.length ? BACKOFF_MS[attempt] : STEADY_BACKOFF_MS;
}

function now() {
  return globalThis.performance ? globalThis.performance.now() : Date.now();
}

function abortError(signal) {
  if (signal && signal.reason !== undefined) return signal.reason;
  const error = new Error("aborted");
  error.name = "AbortError";
  return error;
}

/** Sleep `ms`, rejecting early if `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      if (signal) signal.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    function onAbort() {
      clearTimeout(timer);
      reject(abortError(signal));
    }
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** `fetch` with a time limit, also cancelled by the caller's `signal`. */
async function fetchWithin(fetchImpl, url, init, ms, signal) {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    const error = new Error(`no answer within ${ms} ms`);
    error.name = "TimeoutError";
    controller.abort(error);
  }, ms);
  const onAbort = () => controller.abort(abortError(signal));
  if (signal) {
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  }
  try {
    const response = await fetchImpl(url, { ...init, signal: controller.signal });
    // Read the body inside the time limit too.
    const body = await response.text();
    return { status: response.status, ok: response.ok, body };
  } finally {
    clearTimeout(timer);
    if (signal) signal.removeEventListener("abort", onAbort);
  }
}

function join(base, path) {
  return base.replace(/\/+$/, "") + path;
}

function jsonBody(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorCode(text) {
  const body = jsonBody(text);
  const error = body && typeof body === "object" ? body.error : null;
  return error && typeof error === "object" ? error.code ?? null : null;
}

function formatSeconds(seconds) {
  return String(Number(seconds.toPrecision(6)));
}

/**
 * Reads one run's final answer: through the route, or (F2a) from raw state.
 * Options `sleep` and `clock` exist for tests.
 */
export class Reconciler {
  constructor({
    url,
    threadId,
    runId = null,
    fetchImpl = globalThis.fetch,
    headers = {},
    signal = undefined,
    sleep: sleepImpl = sleep,
    clock = now,
  }) {
    this.url = url;
    this.threadId = threadId;
    this.runId = runId;
    this.fetchImpl = fetchImpl;
    this.headers = headers;
    this.signal = signal;
    this.sleep = sleepImpl;
    this.clock = clock;
    this.threadPath = `/threads/${encodeURIComponent(threadId)}`;
    /** null: not asked yet; true: the route answers; false: old server (F2a). */
    this.routeAvailable = null;
  }

  async get(path, timeoutMs) {
    const url = join(this.url, path);
    return fetchWithin(
      this.fetchImpl,
      url,
      { method: "GET", headers: { Accept: "application/json", ...this.headers }, cache: "no-store" },
      timeoutMs,
      this.signal,
    );
  }

  /** One read. Throws `ThreadGone`, or a retryable error. */
  async fetch(waitSeconds = 0) {
    if (this.routeAvailable !== false) {
      const answer = await this.fetchRoute(waitSeconds);
      if (answer !== null) return answer;
    }
    return this.fetchState();
  }

  async fetchRoute(waitSeconds) {
    const params = new URLSearchParams();
    if (this.runId) params.set("run_id", this.runId);
    if (waitSeconds > 0) params.set("wait", formatSeconds(waitSeconds));
    const query = params.toString();
    const path = `/api${this.threadPath}/final-answer${query ? `?${query}` : ""}`;
    const response = await this.get(
      path,
      CONNECT_MARGIN_MS + waitSeconds * 1000 + READ_MARGIN_MS,
    );
    if (response.status === 404) {
      if (errorCode(response.body) === "thread_not_found") throw new ThreadGone(this.threadId);
      this.routeAvailable = false;
      return null;
    }
    if (!response.ok) throw new HttpStatusError(response.status, path, response.body);
    const body = JSON.parse(response.body);
    this.routeAvailable = true;
    return body;
  }

  async fetchState() {
    const limit = CONNECT_MARGIN_MS + READ_MARGIN_MS;
    const thread = await this.get(this.threadPath, limit);
    if (thread.status === 404 || thread.status === 422) throw new ThreadGone(this.threadId);
    if (!thread.ok) throw new HttpStatusError(thread.status, this.threadPath, thread.body);
    const state = await this.get(`${this.threadPath}/state`, limit);
    if (!state.ok) throw new HttpStatusError(state.status, `${this.threadPath}/state`, state.body);
    const body = JSON.parse(state.body);
    const status = (JSON.parse(thread.body) || {}).status ?? null;
    if (this.runId && ((body && body.metadata) || {}).run_id !== this.runId) {
      // The state has not reached our run yet: its answer is not the one asked for.
      return pendingAnswer(this.threadId, this.runId, "api");
    }
    return answerFromState(this.threadId, body, { threadStatus: status });
  }

  /** Read until `complete` or `maxWaitMs` pass; then the latest answer. */
  async settle(maxWaitMs, onAnswer = null) {
    const deadline = this.clock() + maxWaitMs;
    let latest = null;
    let lastError = null;
    let attempt = 0;
    for (;;) {
      let remaining = deadline - this.clock();
      const wait = this.routeAvailable
        ? Math.min(LONG_POLL_SECONDS, Math.max(remaining, 0) / 1000)
        : 0;
      const started = this.clock();
      try {
        latest = await this.fetch(wait);
        if (onAnswer) onAnswer(latest);
        if (latest.complete) return latest;
      } catch (error) {
        if (!isRetryable(error) || (this.signal && this.signal.aborted)) throw error;
        lastError = error;
      }
      remaining = deadline - this.clock();
      if (remaining <= 0) {
        if (latest === null) {
          throw new Unrecoverable(
            `no answer within ${maxWaitMs} ms: ${describe(lastError)}`,
            lastError ?? undefined,
          );
        }
        return latest;
      }
      const held = (this.clock() - started) / 1000;
      if (wait > 0 && held >= wait / 2 && lastError === null) continue; // long-polled: ask again
      await this.sleep(Math.min(backoffMs(attempt), remaining), this.signal);
      attempt += 1;
      lastError = null;
    }
  }
}

/**
 * The id of the run tagged with `requestId`, when the stream died before naming it
 * (`GET /threads/{id}/runs?limit=20`). Null when none is found.
 */
export async function findRun({
  url,
  threadId,
  requestId,
  fetchImpl = globalThis.fetch,
  headers = {},
  signal = undefined,
  sleep: sleepImpl = sleep,
}) {
  const path = `/threads/${encodeURIComponent(threadId)}/runs?limit=20`;
  for (let attempt = 0; attempt < FIND_RUN_ATTEMPTS; attempt += 1) {
    try {
      const response = await fetchWithin(
        fetchImpl,
        join(url, path),
        { method: "GET", headers: { Accept: "application/json", ...headers }, cache: "no-store" },
        CONNECT_MARGIN_MS + READ_MARGIN_MS,
        signal,
      );
      if (response.status === 404) return null;
      if (!response.ok) throw new HttpStatusError(response.status, path, response.body);
      for (const run of JSON.parse(response.body) || []) {
        if (((run && run.metadata) || {})[REQUEST_ID_KEY] === requestId) return run.run_id;
      }
      return null;
    } catch (error) {
      if (!isRetryable(error) || (signal && signal.aborted)) throw error;
      await sleepImpl(backoffMs(attempt), signal);
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// The stream, with the SDK-style resume layer

function runIdFromPath(path) {
  const match = /\/runs\/([^/?#]+)/.exec(path || "");
  return match ? decodeURIComponent(match[1]) : null;
}

/** The join-stream path of a run stream response, if readable and same-origin. */
export function joinPathFromHeaders(headers, baseUrl) {
  const location = headers.get("location");
  const contentLocation = headers.get("content-location");
  let path = location;
  if (!path && contentLocation) path = `${contentLocation.replace(/\/+$/, "")}/stream`;
  if (!path) return null;
  try {
    const base = new URL(baseUrl);
    const resolved = new URL(path, base.href.endsWith("/") ? base.href : `${base.href}/`);
    if (resolved.origin !== base.origin) return null; // never follow to another origin
    return /^[a-z]+:/i.test(path) ? resolved.pathname + resolved.search : path;
  } catch {
    return null;
  }
}

function reconnectDelayMs(attempt) {
  const delay = Math.min(5000, 1000 * 2 ** attempt);
  return delay + Math.random() * delay * 0.25;
}

/**
 * Read one SSE response body into `onEvent`, aborting via `controller` when no byte has
 * arrived for `stallTimeout` ms. Resolves on a clean close; rejects on a drop.
 */
async function readBody(response, parser, onEvent, watchdog) {
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      watchdog.kick();
      if (done) break;
      for (const event of parser.push(value)) onEvent(event);
    }
    parser.end();
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // a reader with a pending read cannot be released; the abort ends it
    }
  }
}

function createWatchdog(controller, stallTimeout) {
  let timer = null;
  const watchdog = {
    stalled: false,
    kick() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        watchdog.stalled = true;
        controller.abort(new StallError(stallTimeout));
      }, stallTimeout);
    },
    stop() {
      clearTimeout(timer);
    },
  };
  return watchdog;
}

/**
 * Stream a run and return its authoritative final answer (see the header).
 *
 * @param {object} options
 * @param {string} options.url            server base URL (e.g. "http://127.0.0.1:2024")
 * @param {string} options.threadId
 * @param {string} options.assistantId
 * @param {object|null} options.input     run input, e.g. {messages: [{role, content}]}
 * @param {number} [options.maxWait=240000]      ms to follow an unfinished run (F3)
 * @param {number} [options.stallTimeout=15000]  ms without a byte before a stall
 * @param {(text: string) => void} [options.onUpdate]  the text to show, replaced each time
 * @param {() => void} [options.onReconcile]  called once the stream ended and F2 starts
 * @param {typeof fetch} [options.fetchImpl=fetch]
 * @param {Record<string,string>} [options.headers]  extra request headers (auth)
 * @param {boolean} [options.streamResumable=true]
 * @param {boolean} [options.resume=true]   rejoin the run's stream after a drop
 * @param {AbortSignal} [options.signal]    cancels everything (rejects with its reason)
 * @param {(ms: number, signal?: AbortSignal) => Promise<void>} [options.sleep]  for tests
 */
export async function streamWithRecovery({
  url,
  threadId,
  assistantId,
  input,
  maxWait = DEFAULT_MAX_WAIT_MS,
  stallTimeout = DEFAULT_STALL_TIMEOUT_MS,
  onUpdate = null,
  onReconcile = null,
  fetchImpl = globalThis.fetch,
  headers = {},
  streamResumable = true,
  resume = true,
  signal = undefined,
  sleep: sleepImpl = sleep,
}) {
  let shown = "";
  const show = (text) => {
    if (text !== shown) {
      shown = text;
      if (!onUpdate) return;
      try {
        onUpdate(text);
      } catch (error) {
        // A rendering bug must not read as a network drop: report it, carry on.
        setTimeout(() => {
          throw error;
        });
      }
    }
  };

  const stream = createStreamAccumulator();
  const requestId = newRequestId();
  const threadPath = `/threads/${encodeURIComponent(threadId)}`;
  const body = JSON.stringify({
    assistant_id: assistantId,
    ...(input == null ? {} : { input }), // as the SDK does: no key rather than null
    stream_mode: STREAM_MODE,
    stream_resumable: streamResumable,
    metadata: { [REQUEST_ID_KEY]: requestId },
  });

  let headerRunId = null;
  let joinPath = null;
  let lastEventId = null;
  let streamError = null;
  const drops = [];
  let resumes = 0;
  let resumedWithoutReplay = false;
  let attempts = 0;

  const onEvent = (sse) => {
    attempts = 0; // progress earns a fresh set of reconnect attempts
    if (sse.id != null) lastEventId = sse.id;
    if (stream.feed(sse.event, eventData(sse.data))) show(stream.text);
  };

  for (;;) {
    const reconnecting = joinPath !== null && (drops.length > 0 || resumes > 0);
    const controller = new AbortController();
    const onAbort = () => controller.abort(abortError(signal));
    if (signal) {
      if (signal.aborted) throw abortError(signal);
      signal.addEventListener("abort", onAbort, { once: true });
    }
    const watchdog = createWatchdog(controller, stallTimeout);
    let cause = null;
    try {
      const requestHeaders = { Accept: "text/event-stream", "Cache-Control": "no-store", ...headers };
      let init;
      let target;
      if (!reconnecting) {
        target = join(url, `${threadPath}/runs/stream`);
        init = { method: "POST", headers: { ...requestHeaders, "Content-Type": "application/json" }, body };
      } else {
        target = join(url, joinPath);
        let replayFrom = lastEventId;
        if (replayFrom === null && stream.events === 0) replayFrom = REPLAY_FROM_START;
        if (replayFrom !== null) requestHeaders["Last-Event-ID"] = replayFrom;
        else resumedWithoutReplay = true;
        init = { method: "GET", headers: requestHeaders };
        resumes += 1;
      }
      watchdog.kick();
      const response = await fetchImpl(target, { ...init, signal: controller.signal });
      watchdog.kick();
      if (!reconnecting) {
        const contentLocation = response.headers.get("content-location");
        headerRunId = runIdFromPath(contentLocation) ?? runIdFromPath(response.headers.get("location"));
        if (resume) joinPath = joinPathFromHeaders(response.headers, url);
      }
      if (!response.ok) {
        const text = await response.text().catch(() => "");
        const error = new HttpStatusError(response.status, target, text);
        // A reconnect refused by a restarting server (429/5xx) is retried like a drop.
        if (reconnecting && (response.status === 429 || response.status >= 500)) throw error;
        error.fatal = true;
        throw error;
      }
      const type = (response.headers.get("content-type") || "").split(";")[0].trim();
      if (type !== "text/event-stream") {
        throw new TypeError(`expected text/event-stream, got ${JSON.stringify(type)}`);
      }
      await readBody(response, createSseParser(), onEvent, watchdog);
    } catch (error) {
      const reason = watchdog.stalled ? new StallError(stallTimeout) : error;
      if (signal && signal.aborted) throw abortError(signal);
      drops.push(describe(reason));
      if ((error && error.fatal) || joinPath === null) streamError = reason;
      else cause = reason;
    } finally {
      watchdog.stop();
      if (signal) signal.removeEventListener("abort", onAbort);
      controller.abort(); // frees the connection if it is still open (no-op after a clean end)
    }
    if (streamError !== null) break;
    // A clean close looks like the end of the run: ask the run whether it still runs.
    if (cause === null && joinPath !== null && !stream.provedComplete) {
      cause = await checkRun(fetchImpl, url, joinPath, headers, signal);
      if (cause) drops.push(describe(cause));
    }
    if (cause === null) break;
    attempts += 1;
    if (attempts > MAX_RECONNECT_ATTEMPTS) {
      streamError = cause;
      break;
    }
    await sleepImpl(reconnectDelayMs(attempts - 1), signal);
  }

  const streamedText = stream.text;
  let runId = stream.runId ?? headerRunId;
  if (runId === null) {
    runId = await findRun({ url, threadId, requestId, fetchImpl, headers, signal, sleep: sleepImpl });
    if (runId === null) {
      // The run was never created: nothing to recover; the caller may retry.
      throw streamError ?? new Error("the server created no run");
    }
  }

  if (onReconcile) onReconcile();
  const reconciler = new Reconciler({ url, threadId, runId, fetchImpl, headers, signal, sleep: sleepImpl });
  const answer = await reconciler.settle(maxWait, (latest) => {
    // Replace, never append; an answer not written yet must not blank the stream's text.
    if (latest.content || latest.complete) show(latest.content ?? "");
  });
  // An `error` event proves an ending only if the run really failed: a join stream whose
  // run the server no longer knows (after a restart) reports "Run not found" the same way.
  const provedEnd =
    stream.terminalEvent === "end" ||
    (stream.terminalEvent === "error" && answer.status === "error");
  const truncated = streamError !== null || resumedWithoutReplay || !provedEnd;
  return {
    ...answer,
    recovered: (answer.content ?? "") !== streamedText,
    truncated,
    streamError: describe(streamError),
    streamTerminalEvent: stream.terminalEvent,
    streamErrorEvent: stream.error,
    drops,
    resumes,
  };
}

/**
 * A v4 UUID. `crypto.randomUUID()` exists only in secure contexts (https, localhost): a
 * WebUI opened over plain http on a LAN address falls back to `getRandomValues`.
 */
export function newRequestId() {
  const cryptoApi = globalThis.crypto;
  if (cryptoApi && typeof cryptoApi.randomUUID === "function") return cryptoApi.randomUUID();
  const bytes = new Uint8Array(16);
  if (cryptoApi && typeof cryptoApi.getRandomValues === "function") cryptoApi.getRandomValues(bytes);
  else for (let i = 0; i < 16; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** After a clean close without a terminal event: an Error to reconnect, else null. */
async function checkRun(fetchImpl, url, joinPath, headers, signal) {
  const runPath = joinPath.replace(/\/stream(?:\?.*)?$/, "");
  if (runPath === joinPath) return null;
  try {
    const response = await fetchWithin(
      fetchImpl,
      join(url, runPath),
      { method: "GET", headers: { Accept: "application/json", ...headers }, cache: "no-store" },
      CONNECT_MARGIN_MS + READ_MARGIN_MS,
      signal,
    );
    if (response.status === 429 || response.status >= 500) {
      return new HttpStatusError(response.status, runPath, response.body);
    }
    const status = response.ok ? (jsonBody(response.body) || {}).status : null;
    if (status === "pending" || status === "running") {
      return new Error("stream closed while the run was still pending or running");
    }
    return null;
  } catch (error) {
    if (signal && signal.aborted) throw error;
    // The restart that closed the stream can fail the check too: retry it like a drop.
    return isRetryable(error) ? error : null;
  }
}
