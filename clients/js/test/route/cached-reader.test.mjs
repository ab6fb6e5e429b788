// The route's reads where the server lends its storage (src/route/cached-reader.js),
// through the Hono app on a stand-in server: what an unchanged poll costs, and that the
// cache never answers stale, nor one caller from another's reads.

import assert from "node:assert/strict";
import { test } from "node:test";

import { FakeServer } from "./fake-server.mjs";

async function answerOf(response) {
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}

test("an unchanged poll makes no API call, and its 304 reads nothing either", async () => {
  const server = new FakeServer();
  const threadId = server.thread("alice", "first");
  const first = await server.get(threadId);
  assert.equal((await answerOf(first)).content, "first");
  const etag = first.headers.get("etag");
  server.calls.length = 0;
  const again = await server.get(threadId);
  assert.equal((await answerOf(again)).content, "first");
  assert.equal(again.headers.get("etag"), etag);
  const notModified = await server.get(threadId, { headers: { "If-None-Match": etag } });
  assert.equal(notModified.status, 304);
  assert.deepEqual(server.calls, []); // the old route made three for each: search, state, runs
});

test("the first read after a run reads the storage alone, no API call", async () => {
  const server = new FakeServer();
  const threadId = server.thread("alice", "first");
  await answerOf(await server.get(threadId));
  server.run(threadId, "second");
  server.calls.length = 0;
  assert.equal((await answerOf(await server.get(threadId))).content, "second");
  assert.deepEqual(server.calls, []); // the old route made three: search, state, runs
});

test("never stale: after a new run, a state update that changes no value, a deleted run", async () => {
  const server = new FakeServer();
  const threadId = server.thread("alice", "first");
  const read = async () => answerOf(await server.get(threadId));
  assert.equal((await read()).content, "first");
  const second = server.run(threadId, "second");
  const afterRun = await read();
  assert.deepEqual([afterRun.content, afterRun.run_id], ["second", second]);
  server.updateState(threadId); // the server keeps the thread's updated_at for it
  const updated = await read();
  assert.notEqual(updated.checkpoint_id, afterRun.checkpoint_id);
  assert.equal(updated.run_id, null);
  assert.deepEqual(await read(), updated);
  const third = server.run(threadId, "third");
  assert.equal((await read()).content, "third");
  server.deleteRun(threadId, third); // its checkpoints go with it; the thread's record stays
  assert.deepEqual(await read(), updated);
});

test("a run executing is read every time: its checkpoints touch no record", async () => {
  const server = new FakeServer();
  const threadId = server.thread("alice", "first");
  await answerOf(await server.get(threadId));
  const thread = server.threads.get(threadId);
  thread.record.status = "busy";
  thread.runs.set("run-live", { run_id: "run-live", status: "running", created_at: new Date(), updated_at: new Date() });
  const step = (checkpointId) => {
    thread.state = { ...thread.state, next: ["agent"], metadata: { run_id: "run-live" }, checkpoint: { checkpoint_id: checkpointId } };
  };
  step("checkpoint-live-1");
  assert.equal((await answerOf(await server.get(threadId))).status, "running");
  step("checkpoint-live-2");
  const live = await answerOf(await server.get(threadId));
  assert.deepEqual([live.status, live.checkpoint_id], ["running", "checkpoint-live-2"]);
});

test("callers never share an answer: another user's thread stays a 404 after its owner's read", async () => {
  const server = new FakeServer();
  const threadId = server.thread("alice", "alice's answer");
  await answerOf(await server.get(threadId));
  for (const user of ["bob", null]) {
    const response = await server.get(threadId, { user });
    assert.equal(response.status, 404);
    assert.equal((await response.json()).error.code, "thread_not_found");
  }
});

test("the cache is per caller even where the storage lets every caller see the thread", async () => {
  const server = new FakeServer();
  const threadId = server.thread("alice", "alice's answer");
  const lenient = server.ops.threads.get;
  server.ops.threads.get = async () => server.threads.get(threadId).record; // no auth of its own
  server.ops.runs.search = async () => [...server.threads.get(threadId).runs.values()];
  try {
    await answerOf(await server.get(threadId));
    // bob's read is his own: the API, as bob, does not have the thread
    assert.equal((await server.get(threadId, { user: "bob" })).status, 404);
  } finally {
    server.ops.threads.get = lenient;
  }
});
