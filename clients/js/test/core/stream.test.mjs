// streamWithRecovery against fetch() stand-ins: resume, replace, stall, lost response, cancel.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  joinPathFromHeaders,
  newRequestId,
  streamWithRecovery,
} from "../../src/core/index.js";
import {
  ANSWER,
  ANSWER_TOKENS,
  FINAL,
  chunkMessage,
  enc,
  frame,
  jsonResponse,
  mockServer,
  runStream,
  sseResponse,
} from "../fixtures.mjs";

test("a cut mid-frame: the rest is replayed from the join stream with Last-Event-ID, then reconciled", async () => {
  const bytes = enc.encode(runStream());
  const cut = bytes.length - 40;
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/runs\/stream$/, ({ init }) =>
      sseResponse([bytes.slice(0, cut)], { fail: new TypeError("network error"), signal: init.signal })],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, ({ init }) => {
      const lastId = init.headers["Last-Event-ID"];
      const text = new TextDecoder().decode(bytes);
      const start = text.indexOf(`\r\n\r\n`, text.indexOf(`id: ${lastId}\r\n`)) + 4;
      return sseResponse([text.slice(start)], { signal: init.signal });
    }],
    [/^GET \/threads\/t\/runs\/run-1$/, () => jsonResponse(200, { status: "success" })],
    [/final-answer$/, () => jsonResponse(200, FINAL)],
  ]);
  const updates = [];
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: { messages: [] },
    onUpdate: (t) => updates.push(t), fetchImpl, sleep: async () => {},
  });
  assert.equal(result.content, ANSWER);
  assert.equal(result.recovered, false, "the replay completed the text");
  assert.equal(result.truncated, true);
  assert.equal(result.resumes, 1);
  assert.equal(result.drops.length, 1);
  assert.equal(result.streamError, null);
  assert.equal(updates.at(-1), ANSWER);
  const post = calls[0];
  assert.equal(post.method, "POST");
  const sent = JSON.parse(post.body);
  assert.equal(sent.stream_mode, "messages-tuple");
  assert.equal(sent.stream_resumable, true);
  assert.match(sent.metadata.recovery_request_id, /^[0-9a-f-]{36}$/);
  assert.ok(calls[1].headers["Last-Event-ID"], "resumed from the last id");
});

test("a cut with no resume: the route's text replaces the partial text", async () => {
  const text = runStream();
  const cut = text.indexOf("naïves");
  const { fetchImpl } = mockServer([
    [/^POST /, ({ init }) => sseResponse([text.slice(0, cut)], { fail: new TypeError("terminated"), signal: init.signal })],
    [/final-answer$/, () => jsonResponse(200, FINAL)],
  ]);
  const updates = [];
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null, resume: false,
    onUpdate: (t) => updates.push(t), fetchImpl, sleep: async () => {},
  });
  assert.ok(updates.length > 1);
  assert.ok(ANSWER.startsWith(updates.at(-2)) && updates.at(-2) !== ANSWER);
  assert.equal(updates.at(-1), ANSWER, "replaced, not appended");
  assert.equal(result.recovered, true);
  assert.equal(result.truncated, true);
  assert.match(result.streamError, /terminated/);
});

test("a stall is detected after stallTimeout and aborted", async () => {
  const text = runStream();
  const { fetchImpl } = mockServer([
    [/^POST /, ({ init }) => sseResponse([text.slice(0, 400)], { stall: true, signal: init.signal })],
    [/final-answer$/, () => jsonResponse(200, FINAL)],
  ]);
  const started = Date.now();
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null, resume: false,
    stallTimeout: 100, fetchImpl, sleep: async () => {},
  });
  assert.ok(Date.now() - started < 5000);
  assert.match(result.streamError, /StallError/);
  assert.equal(result.content, ANSWER);
});

test("no response at all: the run is found by its recovery_request_id", async () => {
  let requestId = null;
  const { fetchImpl, calls } = mockServer([
    [/^POST /, ({ init }) => {
      requestId = JSON.parse(init.body).metadata.recovery_request_id;
      throw new TypeError("fetch failed");
    }],
    [/^GET \/threads\/t\/runs$/, () =>
      jsonResponse(200, [
        { run_id: "other", metadata: { recovery_request_id: "nope" } },
        { run_id: "run-1", metadata: { recovery_request_id: requestId } },
      ])],
    [/final-answer$/, () => jsonResponse(200, FINAL)],
  ]);
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null, fetchImpl, sleep: async () => {},
  });
  assert.equal(result.content, ANSWER);
  assert.equal(result.recovered, true);
  assert.ok(calls.some((c) => c.path.endsWith("final-answer") && c.search.includes("run_id=run-1")));
});

/** A submit cut before its response, whose run is joined with `joinBody` as its stream. */
function cutBeforeTheResponse(joinBody) {
  let requestId = null;
  return mockServer([
    [/^POST /, ({ init }) => {
      requestId = JSON.parse(init.body).metadata.recovery_request_id;
      throw new TypeError("fetch failed");
    }],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [{ run_id: "run-1", metadata: { recovery_request_id: requestId } }])],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, ({ init }) => sseResponse([joinBody], { signal: init.signal })],
    [/^GET \/threads\/t\/runs\/run-1$/, () => jsonResponse(200, { status: "success" })],
    [/final-answer$/, () => jsonResponse(200, FINAL)],
  ]);
}

test("a submit cut before its response, joined mid-answer: no text that is not the answer's start", async () => {
  // A server that did not replay the join from the run's first event (LangGraph's JS
  // server, given "0-0"): the answer's chunks after its first, no `metadata`.
  let joinBody = "";
  ANSWER_TOKENS.slice(1).forEach((token, i) => {
    joinBody += frame("messages", chunkMessage([{ type: "text", text: token, index: 1 }]), `${i + 9}`);
  });
  const { fetchImpl } = cutBeforeTheResponse(joinBody);
  const updates = [];
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null,
    onUpdate: (t) => updates.push(t), fetchImpl, sleep: async () => {},
  });
  assert.equal(result.resubmitted, "joined run-1");
  for (const shown of updates) assert.ok(ANSWER.startsWith(shown), `shown ${JSON.stringify(shown)}`);
  assert.deepEqual(updates, [ANSWER], "the route's answer, nothing before it");
  assert.equal(result.content, ANSWER);
  assert.equal(result.recovered, true);
});

test("a submit cut before its response, its join replayed from the first event: streamed as usual", async () => {
  const { fetchImpl } = cutBeforeTheResponse(runStream());
  const updates = [];
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null,
    onUpdate: (t) => updates.push(t), fetchImpl, sleep: async () => {},
  });
  assert.equal(result.resubmitted, "joined run-1");
  assert.equal(updates.length, ANSWER_TOKENS.length, "token by token");
  assert.equal(updates.at(-1), ANSWER);
  assert.equal(result.recovered, false, "the replay showed the whole answer");
});

test("a refused run (no run created) rejects", async () => {
  const { fetchImpl } = mockServer([
    [/^POST /, () => jsonResponse(409, { detail: "Thread is busy" })],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [])],
  ]);
  await assert.rejects(
    streamWithRecovery({ url: "http://x", threadId: "t", assistantId: "A", input: null, fetchImpl }),
    /HTTP 409/,
  );
});

test("the caller's signal cancels the stream and the reconciliation", async () => {
  const text = runStream();
  const controller = new AbortController();
  const { fetchImpl } = mockServer([
    [/^POST /, ({ init }) => sseResponse([text.slice(0, 400)], { stall: true, signal: init.signal })],
    [/final-answer$/, () => jsonResponse(200, { ...FINAL, complete: false })],
  ]);
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(
    streamWithRecovery({ url: "http://x", threadId: "t", assistantId: "A", input: null, fetchImpl, signal: controller.signal }),
    { name: "AbortError" },
  );
  const later = new AbortController();
  const updates = [];
  const pending = streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null, resume: false, stallTimeout: 20,
    fetchImpl, signal: later.signal, onUpdate: (t) => updates.push(t),
    sleep: (ms, signal) => { later.abort(); return new Promise((_, reject) => signal.aborted && reject(signal.reason)); },
  });
  await assert.rejects(pending, { name: "AbortError" });
});

test("join path: Location, else Content-Location (a browser cannot read Location cross-origin)", () => {
  const h = (o) => new Headers(o);
  assert.equal(joinPathFromHeaders(h({ location: "/threads/t/runs/r/stream" }), "http://x"), "/threads/t/runs/r/stream");
  assert.equal(joinPathFromHeaders(h({ "content-location": "/threads/t/runs/r" }), "http://x"), "/threads/t/runs/r/stream");
  assert.equal(joinPathFromHeaders(h({ location: "http://evil.example/threads/t/runs/r/stream" }), "http://x"), null);
  assert.equal(joinPathFromHeaders(h({}), "http://x"), null);
  assert.match(newRequestId(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

// --------------------------------------------------------------------------------------

test("a Stop cancels the run and ends on the text shown at Stop, nothing more", async () => {
  const text = runStream();
  const cut = text.indexOf("naïves");
  const { fetchImpl, calls } = mockServer([
    // The stream stalls after a prefix of the answer: the user stops it.
    [/^POST \/threads\/t\/runs\/stream$/, ({ init }) => sseResponse([text.slice(0, cut)], { stall: true, signal: init.signal })],
    [/^POST \/threads\/t\/runs\/run-1\/cancel$/, () => jsonResponse(200, {})],
    [/final-answer$/, () => jsonResponse(200, FINAL)],
  ]);
  const stop = new AbortController();
  const updates = [];
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: { messages: [] },
    onUpdate: (shown) => {
      updates.push(shown);
      if (shown.includes("🧪 données")) setTimeout(() => stop.abort(), 5);
    },
    fetchImpl, stopSignal: stop.signal, sleep: async () => {},
  });
  const shownAtStop = updates.at(-1);
  assert.ok(shownAtStop.endsWith("🧪 données "), shownAtStop);
  assert.equal(result.status, "stopped");
  assert.equal(result.stopped, true);
  assert.equal(result.complete, true);
  assert.equal(result.content, shownAtStop);
  assert.equal(result.run_id, "run-1");
  const cancel = calls.find((c) => c.path === "/threads/t/runs/run-1/cancel");
  assert.ok(cancel && cancel.method === "POST" && cancel.search === "?wait=1", JSON.stringify(calls));
  assert.ok(!calls.some((c) => c.path.includes("final-answer")), "a stopped run is not settled");
});

test("a Stop before the response named the run cancels the run its tag finds", async () => {
  let tag = null;
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/runs\/stream$/, ({ init }) => {
      tag = JSON.parse(init.body).metadata.recovery_request_id;
      return new Promise((resolve, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
    }],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [{ run_id: "run-9", metadata: { recovery_request_id: tag } }])],
    [/^POST \/threads\/t\/runs\/run-9\/cancel$/, () => jsonResponse(200, {})],
  ]);
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 20);
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null, fetchImpl, stopSignal: stop.signal, sleep: async () => {},
  });
  assert.deepEqual([result.status, result.content, result.run_id], ["stopped", "", "run-9"]);
  assert.ok(calls.some((c) => c.path === "/threads/t/runs/run-9/cancel"));
});

test("leaving (signal) is not a Stop: it rejects and cancels nothing", async () => {
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/runs\/stream$/, ({ init }) => sseResponse([runStream().slice(0, 200)], { stall: true, signal: init.signal })],
  ]);
  const leave = new AbortController();
  const stop = new AbortController();
  setTimeout(() => leave.abort(), 20);
  await assert.rejects(
    streamWithRecovery({
      url: "http://x", threadId: "t", assistantId: "A", input: null, fetchImpl,
      signal: leave.signal, stopSignal: stop.signal, sleep: async () => {},
    }),
  );
  assert.ok(!calls.some((c) => c.path.endsWith("/cancel")));
});

test("rejoins that keep failing: the backoff asks the route, and a run over ends the retries", async () => {
  const bytes = enc.encode(runStream());
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/runs\/stream$/, ({ init }) =>
      sseResponse([bytes.slice(0, bytes.length - 40)], { fail: new TypeError("network error"), signal: init.signal })],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => Promise.reject(new TypeError("fetch failed"))],
    [/final-answer/, () => jsonResponse(200, FINAL)],
  ]);
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: { messages: [] },
    fetchImpl, sleep: async () => {},
  });
  assert.equal(result.content, ANSWER);
  const rejoins = calls.filter((call) => /runs\/run-1\/stream$/.test(call.path));
  const asked = calls.filter((call) => /final-answer$/.test(call.path));
  assert.equal(rejoins.length, 1, "one rejoin failed; the route said the run was over");
  assert.match(asked[0].search, /run_id=run-1&wait=\d/, "a long-poll of the backoff");
});

test("followRun: a stream still open after the route said its run is over ends then, not at the stall timeout", async () => {
  const text = runStream();
  let routeReads = 0;
  const { fetchImpl, calls } = mockServer([
    // The run's stream names its run, then stalls: no byte, no close.
    [/^POST /, ({ init }) => sseResponse([text.slice(0, 400)], { stall: true, signal: init.signal })],
    [/final-answer/, () => {
      routeReads += 1;
      return jsonResponse(200, FINAL);
    }],
  ]);
  const started = Date.now();
  const result = await streamWithRecovery({
    url: "http://x", threadId: "t", assistantId: "A", input: null,
    stallTimeout: 60_000, followRun: true, fetchImpl, sleep: async () => {},
  });
  assert.ok(Date.now() - started < 5000, "ended by the route, long before the stall timeout");
  assert.equal(result.content, ANSWER);
  assert.equal(result.streamError, null);
  assert.ok(routeReads >= 1);
  assert.equal(calls.filter((call) => /runs\/run-1\/stream$/.test(call.path)).length, 0, "no rejoin");
  assert.match(result.drops.join(" "), /route said the run is over/);
});
