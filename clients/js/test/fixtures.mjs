// Test fixtures: SSE streams shaped like langgraph-api 0.16.7's (CRLF, id after data),
// and fetch() stand-ins for the settle and stream loops' unit tests.

export const enc = new TextEncoder();


export function frame(event, data, id) {
  let text = `event: ${event}\r\ndata: ${JSON.stringify(data)}\r\n`;
  if (id !== undefined) text += `id: ${id}\r\n`;
  return `${text}\r\n`;
}

export function chunkMessage(content, id = "lc_run--m1") {
  return [{ type: "AIMessageChunk", id, content }, { langgraph_node: "agent" }];
}

export const REASONING = "The user asks — “naïve” 🧪 question; I think first.";
export const ANSWER_TOKENS = ["## Answer\n\n", "Températures — ", "🧪 données ", "naïves.\n", "Done."];
export const ANSWER = ANSWER_TOKENS.join("");

export function runStream({ terminal = null, runId = "run-1" } = {}) {
  let text = frame("metadata", { run_id: runId, attempt: 1 }, "1-0");
  let n = 1;
  text += frame(
    "messages",
    [{ type: "AIMessageChunk", id: "lc_tool", content: "", tool_call_chunks: [] }, {}],
    `${++n}-0`,
  );
  text += frame("messages", [{ type: "tool", id: "t1", content: "note: prior work" }, {}], `${++n}-0`);
  for (const word of REASONING.split(/(?<= )/)) {
    text += frame("messages", chunkMessage([{ type: "reasoning", reasoning: word, index: 0 }]), `${++n}-0`);
  }
  for (const token of ANSWER_TOKENS) {
    text += frame("messages", chunkMessage([{ type: "text", text: token, index: 1 }]), `${++n}-0`);
  }
  text += ": heartbeat\r\n\r\n";
  if (terminal) text += frame(terminal, terminal === "error" ? { error: "boom" } : null);
  return text;
}

export function splitBytes(bytes, cuts) {
  const parts = [];
  let start = 0;
  for (const cut of cuts) {
    parts.push(bytes.slice(start, cut));
    start = cut;
  }
  parts.push(bytes.slice(start));
  return parts;
}


export function jsonResponse(status, body, headers = {}) {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export function mockServer(routes) {
  const calls = [];
  const fetchImpl = async (url, init = {}) => {
    const { pathname, search } = new URL(url);
    calls.push({ method: init.method || "GET", path: pathname, search, headers: init.headers, body: init.body });
    for (const [pattern, handler] of routes) {
      if (pattern.test(`${init.method || "GET"} ${pathname}`)) return handler({ pathname, search, init, calls });
    }
    return jsonResponse(404, { detail: "Not Found" });
  };
  return { fetchImpl, calls };
}

export function fakeClock() {
  let t = 0;
  const sleeps = [];
  return {
    clock: () => t,
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
    advance: (ms) => {
      t += ms;
    },
    sleeps,
  };
}

export function sseResponse(parts, { fail = null, stall = false, signal, headers = {} } = {}) {
  let i = 0;
  const body = new ReadableStream({
    start(controller) {
      signal?.addEventListener("abort", () => controller.error(signal.reason), { once: true });
    },
    pull(controller) {
      if (i < parts.length) {
        controller.enqueue(typeof parts[i] === "string" ? enc.encode(parts[i]) : parts[i]);
        i += 1;
        return undefined;
      }
      if (fail) {
        controller.error(fail);
        return undefined;
      }
      if (stall) return new Promise(() => {});
      controller.close();
      return undefined;
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      location: "/threads/t/runs/run-1/stream",
      "content-location": "/threads/t/runs/run-1",
      ...headers,
    },
  });
}

export const FINAL = { content: ANSWER, complete: true, status: "success", run_id: "run-1", source: "checkpointer" };

// Thread states in the langgraph API's JSON shape.
export const human = (content, id = "h") => ({ type: "human", id, content });
export const ai = (content, id = "a") => ({ type: "ai", id, content });

export function state(messages, extra = {}) {
  return {
    values: { messages },
    next: [],
    tasks: [],
    metadata: { run_id: "run-1" },
    checkpoint: { checkpoint_id: "cp-1" },
    created_at: "2026-01-01T00:00:00+00:00",
    ...extra,
  };
}
