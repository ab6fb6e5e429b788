// The proxy useStreamWithRecovery returns over the SDK's return value (src/react/view.js).
// The SDK (1.9+) asks a run for the stream modes of the fields the app reads, through
// getters; the stand-in below has the same shape: getters that note each read, as the
// SDK's `trackStreamMode` does. The real SDK under a real server and browser:
// tests/js/test_browser_recovery.py (a healthy run streams as with bare useStream).

import assert from "node:assert/strict";
import { test } from "node:test";

import { STREAM_GRACE_MS } from "../../src/core/follow.js";
import { RunFollower } from "../../src/react/follower.js";
import { recoveryView, sameData } from "../../src/react/view.js";

function sdkHandle(values, { isLoading = false } = {}) {
  const reads = [];
  const handle = {
    get values() {
      reads.push("values");
      return values;
    },
    get messages() {
      reads.push("messages");
      return values.messages;
    },
    get toolCalls() {
      reads.push("toolCalls");
      return [];
    },
    isLoading,
    error: undefined,
    submit: () => {},
    joinStream: () => {},
    stop: () => {},
  };
  return { handle, reads };
}

function follower() {
  const t = new RunFollower(() => {});
  t.config = { messagesKey: "messages" };
  return t;
}

const streamed = {
  messages: [
    { type: "human", id: "h1", content: "q" },
    { type: "ai", id: "a1", content: "The answer is par" },
  ],
};

function view(base, t, threadId = "t1") {
  const submit = () => {};
  const joinStream = () => {};
  const stop = () => t.userStop();
  return recoveryView(base, { follower: t, threadId, messagesKey: "messages", submit, joinStream, stop });
}

test("reading messages reads the SDK's messages getter (so the run asks for tokens)", () => {
  const { handle, reads } = sdkHandle(streamed);
  const messages = view(handle, follower()).messages;
  assert.ok(reads.includes("messages"), reads);
  assert.equal(messages.at(-1).content, "The answer is par");
});

test("reading values reads only the SDK's values getter", () => {
  const { handle, reads } = sdkHandle(streamed);
  const stream = view(handle, follower());
  assert.equal(stream.values.messages.length, 2);
  assert.deepEqual(reads, ["values"]);
});

test("reading neither reads no SDK getter", () => {
  const { handle, reads } = sdkHandle(streamed, { isLoading: true });
  const stream = view(handle, follower());
  assert.equal(stream.isLoading, true);
  assert.equal(typeof stream.submit, "function");
  assert.equal(stream.recovery.status, "idle");
  assert.ok("recovery" in stream);
  assert.deepEqual(reads, []);
});

test("other getters pass through to the SDK's own", () => {
  const { handle, reads } = sdkHandle(streamed);
  assert.deepEqual(view(handle, follower()).toolCalls, []);
  assert.deepEqual(reads, ["toolCalls"]);
});

test("the follower judges what was shown from what the app read, reading the SDK no more", () => {
  const { handle, reads } = sdkHandle(streamed);
  const t = follower();
  void view(handle, t).values;
  reads.length = 0;
  assert.equal(t.shownText("a1"), "The answer is par");
  assert.equal(t.shownText("other"), "");
  assert.deepEqual(reads, []);
  // A page that never read messages was shown no text.
  assert.equal(follower().shownText("a1"), "");
});

test("once the run settled, the route's text replaces the streamed text (never appended)", () => {
  const { handle } = sdkHandle(streamed);
  const t = follower();
  const answer = { message_id: "a1", content: "The answer is parity.", status: "success", complete: true };
  t.final = { run: null, runId: "r1", threadId: "t1", answer, values: null };
  const stream = view(handle, t);
  const messages = stream.messages;
  assert.equal(messages.length, 2);
  assert.equal(messages[1].content, "The answer is parity.");
  assert.equal(messages[1].id, "a1");
  // One overlay per render: the same list through messages and values.
  assert.equal(stream.values.messages, messages);
  assert.equal(streamed.messages[1].content, "The answer is par", "the SDK's values untouched");
  // Another thread's answer is not applied.
  assert.equal(view(handle, t, "t2").messages[1].content, "The answer is par");
});

test("while the run still streams, the final text waits for the stream's end", () => {
  const { handle } = sdkHandle(streamed, { isLoading: true });
  const t = follower();
  const answer = { message_id: "a1", content: "The answer is parity.", status: "success", complete: true };
  t.final = { run: null, runId: "r1", threadId: "t1", answer, values: null };
  assert.equal(view(handle, t).messages[1].content, "The answer is par");
});

test("a stream the hook ended once its run was complete no longer loads, whatever the SDK says", () => {
  // SDK 1.9: stop() returns at once, isLoading stays true through a reconnect backoff.
  const { handle } = sdkHandle(streamed, { isLoading: true });
  const t = follower();
  const run = { streaming: true, stopped: false };
  t.run = run;
  const answer = { message_id: "a1", content: "The answer is parity.", status: "success", complete: true };
  t.final = { run, runId: "r1", threadId: "t1", answer, values: null };
  assert.equal(view(handle, t).isLoading, true, "not before the hook ended the stream");
  run.stopped = true; // endStream
  const stream = view(handle, t);
  assert.equal(stream.isLoading, false);
  assert.equal(stream.messages[1].content, "The answer is parity.");
  // A later run's stream loads as the SDK says.
  t.run = { streaming: true, stopped: false };
  assert.equal(view(handle, t).isLoading, true);
});

test("a settled answer shows before the thread's state is read (one round trip sooner)", async () => {
  let renders = 0;
  const t = new RunFollower(() => {
    renders += 1;
  });
  let stateRead;
  let stops = 0;
  const state = new Promise((resolve) => {
    stateRead = resolve;
  });
  t.config = {
    messagesKey: "messages",
    client: { threads: { getState: () => state } },
    refreshHistory: () => {},
    stop: () => {
      stops += 1;
    },
  };
  const answer = { complete: true, status: "success", message_id: "a1", content: "The answer is parts." };
  t.settle = async () => answer; // the route's long-poll, answered
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  t.threadId = "t1";
  t.begin({ runId: "run-1" }); // a joined run: followed at once (its stream stalls)
  await tick();
  const { handle } = sdkHandle(streamed, { isLoading: true });
  assert.equal(view(handle, t).messages.at(-1).content, "The answer is parts.");
  const rendered = renders;
  assert.equal(t.final, null, "the state has not been read yet");
  stateRead({ values: streamed, metadata: { run_id: "run-1" } });
  await tick();
  assert.equal(t.final.answer, answer);
  assert.ok(renders > rendered);
  // The stalled stream is ended a grace later, as before.
  await new Promise((resolve) => setTimeout(resolve, STREAM_GRACE_MS + 50));
  assert.equal(stops, 1);
  assert.equal(view(handle, t).isLoading, false);
});

test("Stop keeps what the turn showed, cancels the run, and never shows more of it", async () => {
  const t = new RunFollower(() => {});
  const cancels = [];
  const refreshed = [];
  let stateOfThread = { values: { messages: streamed.messages.slice(0, 1) } };
  t.config = {
    messagesKey: "messages",
    client: {
      runs: { cancel: async (threadId, runId, wait) => cancels.push([threadId, runId, wait]) },
      threads: { getState: async () => stateOfThread },
    },
    refreshHistory: async (id) => refreshed.push(id),
    storage: null,
    stop: () => {},
  };
  let answered;
  t.settle = () => new Promise((resolve) => (answered = resolve)); // the route's long-poll
  t.threadId = "t1";
  t.begin({ runId: "run-1" });
  const { handle } = sdkHandle(streamed, { isLoading: true });
  const stream = view(handle, t);
  assert.equal(stream.messages.at(-1).content, "The answer is par");
  stream.stop();
  assert.equal(t.recovery.status, "stopped");
  assert.equal(view(handle, t).isLoading, false, "idle at once, whatever the SDK says");
  await t.beforeSubmit();
  assert.deepEqual(cancels, [["t1", "run-1", true]]);
  assert.deepEqual(refreshed, ["t1"], "the next submit goes on from the stopped turn");
  // The route settles the cancelled run (no text): nothing of it replaces the page's.
  answered({ complete: true, status: "error", message_id: null, content: "" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(t.final, null);
  assert.equal(t.recovery.status, "stopped");
  // The SDK's stream values give way to the thread's state, which lacks the message;
  // then a next question: the stopped turn still shows what it showed at Stop.
  const { handle: rebound } = sdkHandle({
    messages: [streamed.messages[0], { type: "human", id: "h2", content: "next" }, { type: "ai", id: "a2", content: "Next." }],
  });
  const after = view(rebound, t).messages;
  assert.deepEqual(after.map((m) => m.id), ["h1", "a1", "h2", "a2"]);
  assert.equal(after[1].content, "The answer is par");
  // A Stop after the run settled stops nothing (the turn ended on its answer).
  t.begin({ runId: "run-2" });
  const answer = { complete: true, status: "success", message_id: "a2", content: "Next." };
  t.final = { run: t.run, runId: "run-2", threadId: "t1", answer, values: null };
  view(rebound, t).stop();
  assert.equal(cancels.length, 1);
  assert.notEqual(t.recovery.status, "stopped");
});

test("Stop before any response named the run cancels the run its tag finds", async () => {
  const t = new RunFollower(() => {});
  const cancels = [];
  const found = [];
  t.config = {
    apiUrl: "http://server.test",
    headers: {},
    messagesKey: "messages",
    client: { runs: { cancel: async (threadId, runId) => cancels.push([threadId, runId]) } },
    refreshHistory: async () => {},
    storage: null,
    stop: () => {},
  };
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (url) => {
    found.push(String(url));
    const runs = found.length < 2 ? [] : [{ run_id: "late-run", metadata: { recovery_request_id: t.run.requestId } }];
    return new Response(JSON.stringify(runs), { status: 200 });
  };
  try {
    t.threadId = "t1";
    t.begin({ requestId: "req-1" });
    t.run.requestId = "req-1";
    t.userStop();
    await t.beforeSubmit();
  } finally {
    globalThis.fetch = realFetch;
  }
  assert.ok(found.length >= 2 && found.every((url) => url.includes("/threads/t1/runs")), found);
  assert.deepEqual(cancels, [["t1", "late-run"]], "the POST that became a run later is cancelled");
});

// Transparency: while nothing is recovered, `messages` and `values` are the very objects
// the wrapped hook returned, whatever their shape (an app's tests may stand in for the
// SDK's hook with a `messages` kept apart from `values`).

function standInHandle() {
  const values = { todos: [] }; // no message list: a hand-made mock's shape
  const messages = streamed.messages;
  return { isLoading: false, error: undefined, values, messages, submit() {}, joinStream() {}, stop() {} };
}

test("nothing recovered: messages and values are the wrapped hook's own, even when they are two lists", () => {
  const handle = standInHandle();
  const stream = view(handle, follower());
  assert.equal(stream.messages, handle.messages);
  assert.equal(stream.values, handle.values);
  assert.ok(!("messages" in stream.values), "no message list added to values");
});

test("a run streamed whole and settled: the SDK's own objects stay (the route and the state say what it showed)", () => {
  const { handle } = sdkHandle(streamed);
  const t = follower();
  const answer = { message_id: "a1", content: "The answer is par", status: "success", complete: true };
  t.answers.set("a1", answer.content);
  const state = JSON.parse(JSON.stringify(streamed)); // the thread's state: equal, not the same objects
  t.final = { run: null, runId: "r1", threadId: "t1", answer, values: state };
  const stream = view(handle, t);
  assert.equal(stream.messages, streamed.messages);
  assert.equal(stream.values, streamed);
  // And through the next renders.
  assert.equal(view(handle, t).values, streamed);
});

test("a cut run settled: the state's list with the route's text, in messages and values alike", () => {
  const { handle } = sdkHandle(streamed);
  const t = follower();
  const answer = { message_id: "a1", content: "The answer is parity.", status: "success", complete: true };
  const state = {
    messages: [
      streamed.messages[0],
      { type: "ai", id: "a1", content: "The answer is parity.", response_metadata: { finish_reason: "stop" } },
    ],
    todos: [],
  };
  t.final = { run: null, runId: "r1", threadId: "t1", answer, values: state };
  const stream = view(handle, t);
  assert.equal(stream.messages, state.messages);
  assert.equal(stream.values.messages, stream.messages);
  assert.deepEqual(stream.values.todos, []);
  assert.equal(t.shownText("a1"), "The answer is par", "judged against what the stream showed");
});

test("a stand-in's two lists settled after a cut: each shows the route's text", () => {
  const handle = standInHandle();
  const t = follower();
  const answer = { message_id: "a1", content: "The answer is parity.", status: "success", complete: true };
  t.final = { run: null, runId: "r1", threadId: "t1", answer, values: null };
  const stream = view(handle, t);
  assert.equal(stream.messages.at(-1).content, "The answer is parity.");
  assert.equal(handle.messages.at(-1).content, "The answer is par", "the stand-in's list untouched");
});

test("an answer the list already shows copies no message", () => {
  const { handle } = sdkHandle(streamed);
  const t = follower();
  t.answers.set("a1", "The answer is par");
  assert.equal(view(handle, t).messages, streamed.messages);
  t.answers.set("a1", "The answer is parity.");
  assert.equal(view(handle, t).messages.at(-1).content, "The answer is parity.");
});

test("sameData: JSON-like data compared by value", () => {
  assert.ok(sameData({ a: [1, { b: "x" }], c: undefined }, { a: [1, { b: "x" }] }));
  assert.ok(!sameData({ a: [1, 2] }, { a: [1, 2, 3] }));
  assert.ok(!sameData({ a: "1" }, { a: 1 }));
  assert.ok(!sameData([], {}));
  assert.ok(!sameData(null, {}));
});
