// F2/F3: the settle loop's backoff, long-poll, retries, thread_not_found vs an absent route.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Reconciler,
  RunGone,
  ThreadGone,
  Unrecoverable,
  backoffMs,
  settleFinalAnswer,
} from "../../src/core/index.js";
import {
  ai,
  human,
  state,
  fakeClock,
  jsonResponse,
  mockServer,
} from "../fixtures.mjs";

test("backoff: 1 s, 2 s, 4 s, then every 5 s", () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5].map(backoffMs), [1000, 2000, 4000, 5000, 5000, 5000]);
});

test("F3: polls with backoff when the server answers at once, until complete", async () => {
  const clock = fakeClock();
  let n = 0;
  const { fetchImpl, calls } = mockServer([
    [/final-answer$/, () => jsonResponse(200, { content: `v${++n}`, complete: n >= 6 })],
  ]);
  const seen = [];
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...clock });
  const answer = await reconciler.settle(240_000, (a) => seen.push(a.content));
  assert.equal(answer.content, "v6");
  assert.deepEqual(seen, ["v1", "v2", "v3", "v4", "v5", "v6"]);
  // No sleep after the first read: it only learnt that the route is there.
  assert.deepEqual(clock.sleeps, [1000, 2000, 4000, 5000]);
  assert.equal(calls[0].search, "?run_id=r"); // first ask: no wait
  assert.equal(calls[1].search, "?run_id=r&wait=30"); // then long-poll, capped at 30 s
});

test("F3: a server that holds the request (long-poll) is asked again at once", async () => {
  const clock = fakeClock();
  let n = 0;
  const { fetchImpl } = mockServer([
    [
      /final-answer$/,
      ({ search }) => {
        if (search.includes("wait=")) clock.advance(30_000);
        return jsonResponse(200, { content: "x", complete: ++n >= 4 });
      },
    ],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...clock });
  await reconciler.settle(240_000);
  assert.deepEqual(clock.sleeps, []);
});

test("F3: the long-poll follows the first read at once, so a run's end is seen as it comes", async () => {
  // A run that ends 300 ms after the first read: the long-poll is already held then.
  const clock = fakeClock();
  const endsAt = clock.clock() + 300;
  const { fetchImpl, calls } = mockServer([
    [
      /final-answer$/,
      ({ search }) => {
        if (search.includes("wait=") && clock.clock() < endsAt) clock.advance(endsAt - clock.clock());
        return jsonResponse(200, { content: "x", complete: clock.clock() >= endsAt });
      },
    ],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...clock });
  const answer = await reconciler.settle(240_000);
  assert.equal(answer.complete, true);
  assert.equal(clock.clock() - endsAt, 0, "the end was read when it came");
  assert.deepEqual(clock.sleeps, []);
  assert.deepEqual(calls.map((c) => c.search), ["?run_id=r", "?run_id=r&wait=30"]);
});

test("F3: network errors are retried, not fatal; the deadline returns the latest answer", async () => {
  const clock = fakeClock();
  let n = 0;
  const { fetchImpl } = mockServer([
    [
      /final-answer$/,
      () => {
        n += 1;
        if (n <= 2) throw new TypeError("Failed to fetch");
        if (n === 3) return jsonResponse(503, { error: { code: "store_unavailable" } });
        return jsonResponse(200, { content: "still running", complete: false });
      },
    ],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...clock });
  const answer = await reconciler.settle(20_000);
  assert.equal(answer.content, "still running");
  assert.equal(answer.complete, false);
  const failing = new Reconciler({
    url: "http://x",
    threadId: "t",
    fetchImpl: async () => {
      throw new TypeError("Failed to fetch");
    },
    ...fakeClock(),
  });
  await assert.rejects(failing.settle(10_000), Unrecoverable);
});

test("F3: a route that long-polled, then refuses connections (its server restarting), is asked again every 0.5 s", async () => {
  const clock = fakeClock();
  let n = 0;
  const { fetchImpl } = mockServer([
    [
      /final-answer$/,
      () => {
        n += 1;
        if (n >= 2 && n <= 6) throw new TypeError("Failed to fetch");
        return jsonResponse(200, { content: n > 6 ? "done" : "", complete: n > 6 });
      },
    ],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...clock });
  const answer = await reconciler.settle(240_000);
  assert.equal(answer.content, "done");
  // Five refusals, each asked again after 0.5 s; a 503 or a server that never answered
  // still backs off (the test above).
  assert.deepEqual(clock.sleeps, [500, 500, 500, 500, 500]);
});

test("F2: a 404 with thread_not_found means the thread is gone", async () => {
  const { fetchImpl } = mockServer([
    [/final-answer$/, () => jsonResponse(404, { error: { code: "thread_not_found" } })],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", fetchImpl, ...fakeClock() });
  await assert.rejects(reconciler.settle(10_000), ThreadGone);
});

test("F2: a 404 with run_not_found means the run is gone, not the route", async () => {
  const { fetchImpl, calls } = mockServer([
    [/final-answer$/, () => jsonResponse(404, { error: { code: "run_not_found" } })],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...fakeClock() });
  const error = await reconciler.settle(10_000).catch((e) => e);
  assert.ok(error instanceof RunGone, String(error));
  assert.ok(error instanceof ThreadGone);
  assert.equal(error.runId, "r");
  assert.equal(calls.length, 1, "no fallback to the raw state");
});

test("F2a: a 404 without the code means an old server: read the state instead", async () => {
  const clock = fakeClock();
  let reads = 0;
  let threadReads = 0;
  const { fetchImpl, calls } = mockServer([
    [/final-answer$/, () => jsonResponse(404, { detail: "Not Found" })],
    [/^GET \/threads\/t$/, () => jsonResponse(200, { status: ++threadReads >= 2 ? "idle" : "busy" })],
    [
      /^GET \/threads\/t\/state$/,
      () => {
        reads += 1;
        const messages = [human("q"), ai(reads >= 2 ? "full answer" : "part")];
        const run_id = reads === 1 ? "older-run" : "r";
        return jsonResponse(200, state(messages, { metadata: { run_id }, next: reads >= 2 ? [] : ["agent"] }));
      },
    ],
  ]);
  const reconciler = new Reconciler({ url: "http://x", threadId: "t", runId: "r", fetchImpl, ...clock });
  const seen = [];
  const answer = await reconciler.settle(60_000, (a) => seen.push(a.status));
  assert.deepEqual(seen, ["pending", "success"]);
  assert.equal(answer.content, "full answer");
  assert.equal(answer.source, "api");
  assert.equal(calls.filter((c) => c.path.endsWith("final-answer")).length, 1, "the route is asked once");
  assert.deepEqual(clock.sleeps, [1000]);
});

// --------------------------------------------------------------------------------------

test("settleFinalAnswer: the route's answer once complete, polled with wait=", async () => {
  const answers = [
    { content: "", complete: false, status: "running", run_id: "r1" },
    { content: "whole", complete: true, status: "success", run_id: "r1" },
  ];
  const { fetchImpl, calls } = mockServer([
    [/final-answer$/, () => jsonResponse(200, answers.shift())],
  ]);
  const updates = [];
  const answer = await settleFinalAnswer({
    apiUrl: "http://api/",
    threadId: "t 1",
    runId: "r1",
    headers: { authorization: "Bearer x" },
    fetch: fetchImpl,
    sleep: async () => {},
    onUpdate: (latest) => updates.push(latest.status),
  });
  assert.equal(answer.content, "whole");
  assert.deepEqual(updates, ["running", "success"]);
  assert.equal(calls[0].path, "/api/threads/t%201/final-answer");
  assert.match(calls[0].search, /run_id=r1/);
  assert.doesNotMatch(calls[0].search, /wait=/, "the first ask learns whether the route exists");
  assert.match(calls[1].search, /run_id=r1&wait=/, "then it long-polls");
  assert.equal(calls[0].headers.authorization, "Bearer x");
  await assert.rejects(settleFinalAnswer({ threadId: "t" }), TypeError);
});
