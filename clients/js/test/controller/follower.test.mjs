// RunFollower's decisions for @langchain/react: when a binding whose run the route called
// over is rebound to the thread (which ends its reconnect loop), what a submit waits for,
// which errors are hidden. The route itself is exercised by the browser tests.

import assert from "node:assert/strict";
import { test } from "node:test";

import { IDLE_RECOVERY } from "../../src/core/follow.js";
import { RunFollower } from "../../src/controller/follower.js";

function setup({ loading = false, messages = [{ id: "m" }], error = undefined } = {}) {
  const state = { loading, messages, error, refreshes: [], renders: 0 };
  const follower = new RunFollower(() => {
    state.renders += 1;
  });
  follower.config = {
    apiUrl: "http://127.0.0.1:9",
    headers: {},
    maxWaitMs: 1000,
    isLoading: () => state.loading,
    baseMessages: () => state.messages,
    baseError: () => state.error,
    shown: () => ["shown"],
    refresh: async (threadId) => {
      state.refreshes.push(threadId);
      state.loading = false;
    },
  };
  return { follower, state };
}

function settled(follower, status = "success") {
  const run = follower.begin({ requestId: "q" });
  run.threadId = "t";
  follower.final = { run, answer: { complete: true, status, message_id: "m", content: "x" } };
  follower.recovery = { ...IDLE_RECOVERY, status: "settled", complete: true };
  return run;
}

test("a submit on a new thread keeps its run: onThreadId names it, the status stays", () => {
  const { follower } = setup();
  const run = follower.begin({ requestId: "q" });
  follower.threadNamed("t");
  assert.equal(follower.run, run);
  assert.equal(run.threadId, "t");
  assert.equal(follower.recovery.status, "streaming");
});

test("a binding that ended cleanly and shows the answer is left alone", async () => {
  const { follower, state } = setup();
  const run = settled(follower);
  follower.endStream(run);
  assert.deepEqual(state.refreshes, []);
});

test("a binding still loading, retrying, or missing the answer is rebound to the thread", async () => {
  for (const [why, tweak] of [
    ["loading", (state) => (state.loading = true)],
    ["missing", (state) => (state.messages = [])],
  ]) {
    const { follower, state } = setup();
    const run = settled(follower);
    tweak(state);
    follower.endStream(run);
    assert.equal(follower.frozen?.[0], "shown", `${why}: the shown list holds during the rebind`);
    await follower.refreshing;
    assert.deepEqual(state.refreshes, ["t"], why);
    assert.equal(follower.frozen, null);
    follower.endStream(run);
    assert.equal(state.refreshes.length, 1, `${why}: once per run`);
  }
  const { follower, state } = setup();
  settled(follower);
  follower.reconnecting(); // a retry after the route called the run over: at once
  await follower.refreshing;
  assert.deepEqual(state.refreshes, ["t"]);
});

test("a retry while the route still follows the run is only noted", () => {
  const { follower, state } = setup();
  const run = follower.begin({ requestId: "q" });
  follower.reconnecting();
  assert.equal(run.reconnected, true);
  assert.deepEqual(state.refreshes, []);
});

test("a submit first ends a binding that still waits on a run the route called over", async () => {
  const { follower, state } = setup({ loading: true });
  settled(follower);
  await follower.beforeSubmit();
  assert.deepEqual(state.refreshes, ["t"]);
  assert.equal(state.loading, false);
});

test("loading that this page did not submit (a resume, a rejoin) is followed as a new run", () => {
  const { follower } = setup();
  const watched = [];
  follower.watch = (run) => watched.push(run);
  follower.threadId = "t";
  follower.loadingChanged(true);
  assert.equal(watched.length, 1);
  assert.equal(watched[0].requestId, null);
  assert.equal(watched[0].runId, null);
  assert.equal(watched[0].threadId, "t");
  follower.loadingChanged(true); // the same run: not twice
  assert.equal(watched.length, 1);
});

test("a stream error is hidden when the route says the run ended well, not when it failed", () => {
  const before = new Error("earlier");
  const { follower, state } = setup({ error: before });
  settled(follower);
  assert.equal(follower.hidesError(before), false, "an error from before the run stays");
  const cut = new Error("Thread event stream closed before the active run completed.");
  assert.equal(follower.hidesError(cut), true);
  const failed = setup();
  settled(failed.follower, "error");
  assert.equal(failed.follower.hidesError(cut), false);
  assert.equal(state.refreshes.length, 0);
});
