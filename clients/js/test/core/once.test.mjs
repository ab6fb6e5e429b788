// exactlyOnceFetch against fetch() stand-ins: a submit whose response never came is
// joined, never sent blindly again; anything else passes through.

import assert from "node:assert/strict";
import { test } from "node:test";

import { exactlyOnceFetch, submitOf, taggedRun, withExactlyOnce } from "../../src/core/index.js";
import { fakeClock, jsonResponse, mockServer, sseResponse } from "../fixtures.mjs";

const SUBMIT_URL = "http://x/threads/t/runs/stream";
const REQUEST = "req-1";

function submitInit(extra = {}, metadata = { recovery_request_id: REQUEST }) {
  return {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: JSON.stringify({ assistant_id: "A", stream_resumable: true, metadata, ...extra }),
  };
}

const tagged = (runId, requestId = REQUEST) => ({ run_id: runId, metadata: { recovery_request_id: requestId } });
const posts = (calls) => calls.filter((c) => c.method === "POST");
const networkError = () => {
  throw new TypeError("fetch failed");
};

test("a submit is recognised by its path and request id; anything else is not", () => {
  assert.equal(submitOf(SUBMIT_URL, submitInit()).requestId, REQUEST);
  assert.equal(submitOf(SUBMIT_URL, submitInit()).threadUrl, "http://x/threads/t");
  assert.equal(submitOf("http://x/api/threads/t/runs/stream", submitInit()).threadUrl, "http://x/api/threads/t");
  assert.equal(submitOf(SUBMIT_URL, submitInit({}, {})), null, "no request id");
  assert.equal(submitOf(SUBMIT_URL, { ...submitInit(), method: "GET" }), null);
  assert.equal(submitOf("http://x/threads/t/runs", submitInit()), null);
  assert.equal(submitOf(SUBMIT_URL, { method: "POST", body: "{" }), null);
  // The server lists newest first: the oldest tagged run is the first POST's.
  assert.equal(taggedRun([tagged("r3", "other"), tagged("r2"), tagged("r1")], REQUEST), "r1");
  assert.equal(taggedRun([], REQUEST), null);
});

test("without a request id, a failed submit fails as before, and nothing is looked up", async () => {
  const { fetchImpl, calls } = mockServer([[/^POST /, networkError]]);
  const once = exactlyOnceFetch(fetchImpl);
  await assert.rejects(once(SUBMIT_URL, submitInit({}, {})), TypeError);
  await assert.rejects(once(SUBMIT_URL, submitInit({}, {})), TypeError);
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    "POST /threads/t/runs/stream",
    "POST /threads/t/runs/stream",
  ]);
});

test("a submit cut before its response joins the run it made, replaying from the start", async () => {
  const { fetchImpl, calls } = mockServer([
    [/^POST /, networkError],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("run-1")])],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => sseResponse(["event: end\r\n\r\n"])],
  ]);
  const seen = [];
  const once = exactlyOnceFetch(fetchImpl, { onResubmit: (info) => seen.push(info) });
  const response = await once(SUBMIT_URL, submitInit());
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-location"), "/threads/t/runs/run-1");
  assert.equal(posts(calls).length, 1);
  const join = calls.at(-1);
  // "Before the first event" to both servers: the JS server reads "0-0" as NaN, no replay.
  assert.equal(join.headers.get("last-event-id"), "-1");
  assert.equal(join.headers.get("x-api-key"), "k", "the submit's auth goes along");
  assert.equal(join.headers.get("content-type"), null);
  assert.equal(seen[0].action, "joined");
  assert.equal(seen[0].runId, "run-1");
});

test("the SDK's re-send of the same request looks the run up first and joins it", async () => {
  let first = true;
  const { fetchImpl, calls } = mockServer([
    [/^POST /, () => {
      if (!first) throw new Error("posted twice");
      first = false;
      return jsonResponse(502, { detail: "bad gateway" }); // the SDK retries a 5xx
    }],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("run-1")])],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => sseResponse([])],
  ]);
  const once = exactlyOnceFetch(fetchImpl);
  assert.equal((await once(SUBMIT_URL, submitInit())).status, 502);
  assert.equal((await once(SUBMIT_URL, submitInit())).status, 200);
  assert.equal((await once(SUBMIT_URL, submitInit())).status, 200);
  assert.equal(posts(calls).length, 1);
  // Once known, the run is joined without another lookup.
  assert.equal(calls.filter((c) => c.path === "/threads/t/runs").length, 1);
});

test("a run that shows up late within the window is joined", async () => {
  const time = fakeClock();
  let lookups = 0;
  const { fetchImpl, calls } = mockServer([
    [/^POST /, networkError],
    [/^GET \/threads\/t\/runs$/, () => {
      lookups += 1;
      return jsonResponse(200, lookups < 4 ? [tagged("old", "other")] : [tagged("run-1")]);
    }],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => sseResponse([])],
  ]);
  const once = exactlyOnceFetch(fetchImpl, { sleep: time.sleep, clock: time.clock });
  assert.equal((await once(SUBMIT_URL, submitInit())).status, 200);
  assert.equal(posts(calls).length, 1);
  assert.equal(lookups, 4);
});

test("no run within the window: posted once more, refusing to queue behind another", async () => {
  const time = fakeClock();
  let attempt = 0;
  const { fetchImpl, calls } = mockServer([
    [/^POST /, () => {
      attempt += 1;
      if (attempt === 1) networkError();
      return sseResponse([]);
    }],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [])],
  ]);
  const seen = [];
  const once = exactlyOnceFetch(fetchImpl, {
    sleep: time.sleep,
    clock: time.clock,
    onResubmit: (info) => seen.push(info.action),
  });
  assert.equal((await once(SUBMIT_URL, submitInit())).status, 200);
  const sent = posts(calls);
  assert.equal(sent.length, 2);
  assert.equal(JSON.parse(sent[1].body).multitask_strategy, "reject");
  assert.equal(JSON.parse(sent[1].body).metadata.recovery_request_id, REQUEST);
  assert.ok(time.clock() >= 2000, "the window was waited out");
  assert.deepEqual(seen, ["posted"]);
});

test("a 409 on the second post: the first POST's run appeared and is joined", async () => {
  const time = fakeClock();
  let attempt = 0;
  let created = false;
  const { fetchImpl, calls } = mockServer([
    [/^POST /, () => {
      attempt += 1;
      if (attempt === 1) networkError();
      created = true; // the first POST became a run just now
      return jsonResponse(409, { detail: "Thread is already running a task." });
    }],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, created ? [tagged("run-1")] : [])],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => sseResponse([])],
  ]);
  const once = exactlyOnceFetch(fetchImpl, { sleep: time.sleep, clock: time.clock });
  const response = await once(SUBMIT_URL, submitInit());
  assert.equal(response.status, 200);
  assert.equal(calls.at(-1).path, "/threads/t/runs/run-1/stream");
  assert.equal(posts(calls).length, 2);
});

test("a 409 from another run: the app's own strategy decides", async () => {
  for (const [strategy, want] of [[undefined, 200], ["reject", 409]]) {
    const time = fakeClock();
    let attempt = 0;
    const { fetchImpl, calls } = mockServer([
      [/^POST /, ({ init }) => {
        attempt += 1;
        if (attempt === 1) networkError();
        const body = JSON.parse(init.body);
        if (body.multitask_strategy === "reject") return jsonResponse(409, { detail: "busy" });
        return sseResponse([]); // queued behind the other run
      }],
      [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("theirs", "other")])],
    ]);
    const once = exactlyOnceFetch(fetchImpl, { sleep: time.sleep, clock: time.clock });
    const extra = strategy ? { multitask_strategy: strategy } : {};
    const response = await once(SUBMIT_URL, submitInit(extra));
    assert.equal(response.status, want, String(strategy));
    // Queued as the app asked (no strategy: the server's "enqueue"), or its own 409.
    assert.equal(JSON.parse(posts(calls).at(-1).body).multitask_strategy, strategy);
  }
});

test("a stopped submit is not looked up: the abort stands", async () => {
  const controller = new AbortController();
  const { fetchImpl, calls } = mockServer([
    [/^POST /, () => {
      controller.abort();
      networkError();
    }],
  ]);
  const once = exactlyOnceFetch(fetchImpl);
  await assert.rejects(once(SUBMIT_URL, { ...submitInit(), signal: controller.signal }), {
    name: "AbortError",
    message: /^AbortError: /,
  });
  assert.equal(calls.length, 1);
});

test("a request its signal aborted fails once, as an abort: the SDK's caller does not retry it", async () => {
  // The SDK's AsyncCaller retries "Failed to fetch" and anything else not named an abort
  // by its message; useStream's next submit waits behind those retries (SDK 1.9.25).
  const { Client } = await import("@langchain/langgraph-sdk");
  const controller = new AbortController();
  let calls = 0;
  const browserFetch = async (_input, init) => {
    calls += 1;
    if (init.signal.aborted) throw new DOMException("signal is aborted without reason", "AbortError");
    setTimeout(() => controller.abort(), 50); // the user's Stop, during the caller's backoff
    throw new TypeError("Failed to fetch");
  };
  const client = withExactlyOnce(new Client({ apiUrl: "http://127.0.0.1:9", callerOptions: { fetch: browserFetch } }));
  const rejoin = client.runs.asyncCaller.fetch("http://127.0.0.1:9/threads/t/runs/r/stream", {
    method: "GET",
    signal: controller.signal,
  });
  await assert.rejects(rejoin, { name: "AbortError" });
  assert.equal(calls, 2, "tried again after the abort");
});

test("a gone thread: the lookup's 404 is the answer", async () => {
  const { fetchImpl } = mockServer([[/^POST /, networkError]]);
  const once = exactlyOnceFetch(fetchImpl);
  assert.equal((await once(SUBMIT_URL, submitInit())).status, 404);
});

test("a submit that makes its thread: the lookup's 404 is a run not made yet, and the late one is joined", async () => {
  // A new chat's first submit creates its thread (`if_not_exists: "create"`); cut before it
  // reached the server, its thread is not there until the request arrives.
  const time = fakeClock();
  let lookups = 0;
  const { fetchImpl, calls } = mockServer([
    [/^POST /, networkError],
    [/^GET \/threads\/t\/runs$/, () => {
      lookups += 1;
      return lookups < 3 ? jsonResponse(404, { detail: "Thread not found" }) : jsonResponse(200, [tagged("run-1")]);
    }],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => sseResponse([])],
  ]);
  const once = exactlyOnceFetch(fetchImpl, { sleep: time.sleep, clock: time.clock });
  assert.equal((await once(SUBMIT_URL, submitInit({ if_not_exists: "create" }))).status, 200);
  assert.equal(posts(calls).length, 1);
  assert.equal(lookups, 3);
});

test("an app's own SDK client gets its submits made exactly-once in place, once", async () => {
  const { Client } = await import("@langchain/langgraph-sdk");
  const { fetchImpl, calls } = mockServer([
    [/^POST /, networkError],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("run-1")])],
    [/^GET \/threads\/t\/runs\/run-1\/stream$/, () => sseResponse(["event: end\r\ndata: null\r\n\r\n"])],
    [/^GET \/threads\/t\/state$/, () => jsonResponse(200, { values: {} })],
  ]);
  const client = new Client({ apiUrl: "http://x", apiKey: null, callerOptions: { fetch: fetchImpl } });
  assert.equal(withExactlyOnce(client), client, "the app's own client, kept");
  withExactlyOnce(client); // a second render: not wrapped twice
  const events = [];
  for await (const event of client.runs.stream("t", "A", {
    input: {},
    metadata: { recovery_request_id: REQUEST },
    streamResumable: true,
  })) {
    events.push(event.event);
  }
  assert.equal(posts(calls).length, 1, "one POST: the cut submit's run is joined");
  assert.deepEqual(
    calls.filter((c) => c.path === "/threads/t/runs").length,
    1,
    "one lookup: the fetch is wrapped once",
  );
  assert.ok(calls.some((c) => c.path === "/threads/t/runs/run-1/stream"));
  // Anything else passes through untouched.
  await client.threads.getState("t");
  assert.equal(calls.at(-1).path, "/threads/t/state");
  // Another client shape is left alone.
  const other = { runs: {} };
  assert.equal(withExactlyOnce(other), other);
  assert.deepEqual(other, { runs: {} });
});
