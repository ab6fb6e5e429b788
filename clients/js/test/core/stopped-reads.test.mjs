// A page's stopped turns in what it reads of its threads through its own client.

import assert from "node:assert/strict";
import { test } from "node:test";

import { stoppedTurnsOf } from "../../src/core/index.js";

const human = (id, content) => ({ type: "human", id, content });
const ai = (id, content) => ({ type: "ai", id, content });

function client(messages) {
  const reads = [];
  const values = { messages, other: 1 };
  return {
    reads,
    threads: {
      async getState(threadId, checkpoint, options) {
        reads.push(["getState", threadId, checkpoint, options]);
        return { values, next: [] };
      },
      async get(threadId) {
        reads.push(["get", threadId]);
        return { thread_id: threadId, status: "idle", values };
      },
      async getHistory(threadId, options) {
        reads.push(["getHistory", threadId, options]);
        return [{ values }, { values: { messages: messages.slice(0, 1) } }];
      },
    },
  };
}

test("a client's thread reads carry the turns stopped through it; the server's data is not changed", async () => {
  const state = [human("h1", "q"), human("h2", "next"), ai("a2", "Next.")];
  const app = client(state);
  const stopped = stoppedTurnsOf(app);
  assert.equal(stoppedTurnsOf(app), stopped, "one store per client, its reads patched once");
  // Nothing stopped yet: the reads are the server's, as they were.
  assert.deepEqual((await app.threads.getState("t")).values.messages, state);
  stopped.stop("t", [human("h1", "q"), ai("a1", "The par")]);
  const read = await app.threads.getState("t", "cp", { subgraphs: true });
  assert.deepEqual(read.values.messages.map((m) => m.id), ["h1", "a1", "h2", "a2"]);
  assert.equal(read.values.other, 1);
  assert.deepEqual(app.reads.at(-1), ["getState", "t", "cp", { subgraphs: true }], "arguments kept");
  assert.deepEqual((await app.threads.get("t")).values.messages.map((m) => m.id), ["h1", "a1", "h2", "a2"]);
  const history = await app.threads.getHistory("t", { limit: 2 });
  assert.deepEqual(history[0].values.messages.map((m) => m.id), ["h1", "a1", "h2", "a2"]);
  assert.deepEqual(history[1].values.messages.map((m) => m.id), ["h1", "a1"]);
  // Another thread's reads are its own.
  assert.deepEqual((await app.threads.getState("other")).values.messages, state);
  assert.deepEqual(state.map((m) => m.id), ["h1", "h2", "a2"], "not mutated");
});

test("a client of another shape keeps its reads; the turns are kept all the same", () => {
  const stopped = stoppedTurnsOf({ runs: {} });
  assert.equal(stopped.stop("t", [human("h", "q"), ai("a", "x")]).messages.length, 1);
  assert.equal(stoppedTurnsOf(null).of("t").length, 0);
});
