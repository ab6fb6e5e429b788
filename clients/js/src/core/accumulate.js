// F1 bookkeeping: the text a `messages-tuple` stream has shown so far, its run id, and
// whether it ended provably (`end` / `error`). langgraph-api sends no terminal event when
// a run succeeds, so a stream alone never proves its answer whole.

import { eventData } from "./sse.js";
import { answerText, mergeContent } from "./text.js";

export const TERMINAL_EVENTS = new Set(["end", "error"]);
export const AI_CHUNK_TYPES = new Set(["AIMessageChunk", "ai"]);

/** The message (or message chunk) a `messages` event (of any subgraph) carries, or null. */
export function messageOfEvent(event, data) {
  if (event.split("|")[0] !== "messages" || !Array.isArray(data) || !data.length) return null;
  const message = data[0];
  return message && typeof message === "object" ? message : null;
}

/**
 * Accumulates `messages-tuple` events into the text a UI shows (mirror of the Python
 * `StreamText`). `feed(event, data)` returns true when the shown text changed.
 * `truncated` is F1 on the stream alone (no `end`/`error` seen); `streamWithRecovery`
 * refines it once the route has said whether the run really failed.
 *
 * `gap()` says the events that follow may not follow on from those before: a stream
 * joined where the server may not have replayed the run from its first event. Until the
 * run's `metadata` event (its first) shows nothing was missed, a message first seen is
 * never shown (its first chunks may be gone: "to …" for "Answer to …"), and one seen
 * before keeps the text it had (a chunk may be gone between).
 */
export function createStreamAccumulator() {
  const messages = new Map(); // message id → merged content
  const order = [];
  const unseenStart = new Set(); // ids first seen across a gap: never shown
  const frozen = new Set(); // ids seen before a gap: kept as they were
  let gapOpen = false;
  const acc = {
    runId: null,
    terminalEvent: null,
    error: null,
    events: 0,
    gap() {
      gapOpen = true;
    },
    feed(event, data) {
      acc.events += 1;
      if (event === "metadata" && data && typeof data === "object" && !Array.isArray(data)) {
        if (data.run_id != null) acc.runId = data.run_id;
        gapOpen = false; // a run (attempt) starts here: what follows is all of it
      } else if (TERMINAL_EVENTS.has(event)) {
        acc.terminalEvent = event;
        if (event === "error") acc.error = data;
      } else {
        const message = messageOfEvent(event, data);
        if (message) return feedMessage(message);
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
    if (unseenStart.has(key) || frozen.has(key)) return false;
    if (gapOpen) {
      // An id-less chunk is a message of its own (its key is new): nothing to remember.
      if (message.id) (messages.has(key) ? frozen : unseenStart).add(key);
      return false;
    }
    const before = acc.text;
    const content = message.content || "";
    // Every message of the id so far is a chunk of it: LangGraph's JS server types its
    // chunks `ai`, not `AIMessageChunk`, and neither server sends a streamed message
    // whole again (the SDK's own rebuild concatenates them alike).
    if (messages.has(key)) {
      messages.set(key, mergeContent(messages.get(key), content));
    } else {
      order.push(key);
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
