// The proxy useStreamWithRecovery returns over the SDK's return value (src/react/view.js).
// The SDK (1.9+) asks a run for the stream modes of the fields the app reads, through
// getters; the stand-in below has the same shape: getters that note each read, as the
// SDK's `trackStreamMode` does. The real SDK under a real server and browser:
// tests/js/test_browser_recovery.py (a healthy run streams as with bare useStream).

import assert from "node:assert/strict";
import { test } from "node:test";

import { STREAM_GRACE_MS } from "../../src/core/follow.js";
import { RunFollower } from "../../src/react/follower.js";
import { recoveryView } from "../../src/react/view.js";

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
  return recoveryView(base, { follower: t, threadId, messagesKey: "messages", submit, joinStream });
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
