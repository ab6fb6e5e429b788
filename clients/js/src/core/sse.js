// Server-Sent Events parsing, pure: bytes (or strings) in, `{event, data, id}` out, as a
// browser's `fetch` reader sees a langgraph run stream.

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
