// The thread's facts from the server's storage (src/route/server-storage.js) weigh as the
// API's do: over the shared cases in test/fixtures/answer/, the route's answer through
// `StorageFacts` is the one through `ApiFacts`; the storage's refusals are the API's.

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";

import { ApiFacts, ApiReader, ThreadNotFound } from "../../src/route/reader.js";
import { ServerStorage, StorageFacts, apiState } from "../../src/route/server-storage.js";

const DIR = new URL("../fixtures/answer/", import.meta.url);
const CASES = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .map((name) => JSON.parse(readFileSync(new URL(name, DIR), "utf8")));

function runsOf(fixture) {
  return Object.entries(fixture.runs).map(([run_id, status], at) => ({
    run_id,
    status,
    created_at: new Date(Date.parse("2026-12-05T09:00:00Z") + at * 1000),
  }));
}

/** The case's server, as its API and as its storage. */
function serverOf(fixture) {
  const runs = runsOf(fixture).map((run) => ({ ...run, created_at: run.created_at.toISOString() }));
  const client = {
    threads: {
      search: async () => [{ thread_id: fixture.thread_id, status: fixture.thread_status }],
      getState: async () => structuredClone(fixture.state),
      getHistory: async (_id, { metadata }) =>
        fixture.state.metadata.run_id === metadata.run_id ? [structuredClone(fixture.state)] : [],
    },
    runs: {
      list: async (_id, { status, limit }) => runs.filter((run) => !status || run.status === status).slice(0, limit),
      get: async (_id, runId) => {
        const run = runs.find((candidate) => candidate.run_id === runId);
        if (!run) throw Object.assign(new Error("not found"), { status: 404 });
        return run;
      },
    },
  };
  const ops = {
    threads: {
      get: async () => ({ thread_id: fixture.thread_id, status: fixture.thread_status }),
      state: { get: async () => null, list: async () => [] }, // the case's state is the API's
    },
    runs: { search: async () => runsOf(fixture).reverse() }, // in any order: sorted by the reader
  };
  return { client, storage: ServerStorage.of({ var: { LANGGRAPH_OPS: ops, auth: undefined } }) };
}

async function outcome(read) {
  try {
    return await read();
  } catch (error) {
    return error.name;
  }
}

for (const fixture of CASES) {
  test(`storage facts weigh as the API's: ${fixture.about}`, async () => {
    const { client, storage } = serverOf(fixture);
    const runId = fixture.run_id ?? null;
    const api = await outcome(() => new ApiReader(client).read(fixture.thread_id, runId));
    const facts = new StorageFacts(storage);
    facts.state = (...args) => new ApiFacts(client).state(...args);
    const stored = await outcome(() => new ApiReader(client, facts).read(fixture.thread_id, runId));
    assert.deepEqual(stored, api);
  });
}

test("the storage's refusal of a thread is ThreadNotFound; a server lending none is null", async () => {
  for (const status of [400, 403, 404, 422]) {
    const refuse = async () => {
      throw Object.assign(new Error("no"), { status });
    };
    const threads = { get: refuse, state: { get: refuse, list: refuse } };
    const storage = ServerStorage.of({ var: { LANGGRAPH_OPS: { threads, runs: { search: refuse } } } });
    await assert.rejects(storage.record("t"), ThreadNotFound);
    await assert.rejects(new StorageFacts(storage).runs("t"), ThreadNotFound);
  }
  assert.equal(ServerStorage.of({ var: {} }), null);
  assert.equal(ServerStorage.of({ var: { LANGGRAPH_OPS: { threads: {} } } }), null);
});

test("a state of the storage reads as the API writes it: messages as dicts, errors as text", () => {
  const message = { toDict: () => ({ type: "ai", data: { content: "hi", id: "m1", additional_kwargs: {} } }) };
  const state = apiState({
    values: { messages: [message] },
    next: ["agent"],
    tasks: [
      { id: "t1", name: "agent", error: new Error("boom"), interrupts: [] },
      { id: "t2", name: "agent", error: { message: "down", name: "Error" }, interrupts: [{ id: "i", value: 1 }] },
    ],
    metadata: { run_id: "r1" },
    createdAt: "2026-12-05T10:00:00.000Z",
    config: { configurable: { thread_id: "t", checkpoint_id: "c1" } },
  });
  assert.deepEqual(state, {
    values: { messages: [{ content: "hi", id: "m1", additional_kwargs: {}, type: "ai" }] },
    next: ["agent"],
    tasks: [
      { id: "t1", name: "agent", error: "boom", interrupts: [] },
      { id: "t2", name: "agent", error: '{"message":"down","name":"Error"}', interrupts: [{ id: "i", value: 1 }] },
    ],
    metadata: { run_id: "r1" },
    created_at: "2026-12-05T10:00:00.000Z",
    checkpoint: { checkpoint_id: "c1" },
  });
});
