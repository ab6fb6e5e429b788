// The React drop-in's thread history (src/react/history.js) and a Stop's read of it: a
// read again of the thread shown never says it loads while it holds no history (the SDK's
// `isThreadLoading`: a page's placeholder for the whole conversation), nor reads another's.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fetchBegun } from "../../src/react/history.js";
import { RunFollower } from "../../src/react/follower.js";

// What the SDK's useStream (1.9) makes of the history it is handed.
const threadLoading = (history) => history.isLoading && history.data == null;

const EMPTY = { key: null, data: undefined, error: undefined, isLoading: false };
const HEAD = [{ values: { messages: [{ type: "human", id: "h1", content: "q" }] } }];

test("a refetch of a thread this page's submit made (no history yet) does not say the thread loads", () => {
  // The submit that made the thread skipped its first read: the state is still the new
  // thread's (key null) when the Stop, or the run's end, reads it again.
  const refetch = fetchBegun(EMPTY, "t1:true", true);
  assert.equal(refetch.key, "t1:true");
  assert.equal(refetch.data, undefined);
  assert.equal(threadLoading(refetch), false);
  // Once more before the first answered: still not loading.
  assert.equal(threadLoading(fetchBegun(refetch, "t1:true", true)), false);
});

test("a thread shown anew loads, as the SDK's own history says, and a refetch meanwhile does not end that", () => {
  const load = fetchBegun(EMPTY, "t1:true", false);
  assert.equal(threadLoading(load), true);
  assert.equal(threadLoading(fetchBegun(load, "t1:true", true)), true);
});

test("a refetch of a thread with history keeps it, loading, as the SDK's does", () => {
  const held = { key: "t1:true", data: HEAD, error: undefined, isLoading: false };
  const refetch = fetchBegun(held, "t1:true", true);
  assert.equal(refetch.data, HEAD);
  assert.equal(refetch.isLoading, true);
  assert.equal(threadLoading(refetch), false);
  // Another thread's history is never kept for this one.
  assert.equal(fetchBegun(held, "t2:true", false).data, undefined);
});

function stoppedFollower() {
  const refreshed = [];
  const cancelled = [];
  const follower = new RunFollower(() => {});
  follower.config = {
    apiUrl: "http://127.0.0.1:9",
    headers: {},
    maxWaitMs: 1000,
    client: { runs: { cancel: async (threadId, runId) => cancelled.push([threadId, runId]) } },
    refreshHistory: async (id) => refreshed.push(id),
    storage: null,
    stop: () => {},
    messagesKey: "messages",
  };
  follower.switchThread("t1");
  follower.begin({ requestId: "q1" });
  // Named by the server (onCreated) without a route to follow it on: not watched here.
  follower.run.runId = "r1";
  follower.run.threadId = "t1";
  return { follower, refreshed, cancelled };
}

test("a Stop reads the thread's history again once its run is cancelled", async () => {
  const { follower, refreshed, cancelled } = stoppedFollower();
  follower.userStop();
  await follower.cancelling;
  assert.deepEqual(cancelled, [["t1", "r1"]]);
  assert.deepEqual(refreshed, ["t1"]);
  follower.dispose();
});

test("a Stop whose page left the thread before the cancel landed reads no history into the thread shown", async () => {
  const { follower, refreshed, cancelled } = stoppedFollower();
  follower.userStop();
  follower.switchThread("t2");
  await follower.cancelling;
  assert.deepEqual(cancelled, [["t1", "r1"]], "the stopped run is cancelled all the same");
  assert.deepEqual(refreshed, []);
  follower.dispose();
});
