// A thread's change token (src/route/change-token.js): the same while nothing that can
// move the answer moved; null while a run is queued or executing.

import assert from "node:assert/strict";
import { test } from "node:test";

import { changeToken } from "../../src/route/change-token.js";

function storage() {
  const at = new Date("2026-12-05T10:00:00Z");
  const thread = { thread_id: "t", status: "idle", updated_at: at, values: { messages: [] }, interrupts: {} };
  const runs = [{ run_id: "r1", status: "success", updated_at: at }];
  return { thread, runs, record: async () => thread, runRecords: async () => runs };
}

test("the same while nothing moved; moved by each thing that can move an answer", async () => {
  const moves = {
    "a run's end": (s) => (s.thread.updated_at = new Date("2026-12-05T10:00:01Z")),
    "a state update (equal values, updated_at kept)": (s) => (s.thread.values = structuredClone(s.thread.values)),
    "an interrupt": (s) => (s.thread.interrupts = {}),
    "the thread's status": (s) => (s.thread.status = "interrupted"),
    "a run deleted": (s) => s.runs.pop(),
    "a run cancelled": (s) => (s.runs[0] = { ...s.runs[0], status: "interrupted" }),
    "the thread made again": (s) => {
      const again = { ...s.thread };
      s.record = async () => again;
    },
  };
  for (const [name, move] of Object.entries(moves)) {
    const s = storage();
    const token = await changeToken(s, "t");
    assert.equal(await changeToken(s, "t"), token, name);
    move(s);
    assert.notEqual(await changeToken(s, "t"), token, name);
  }
});

test("none while a run is queued or executing", async () => {
  const busy = storage();
  busy.thread.status = "busy";
  assert.equal(await changeToken(busy, "t"), null);
  for (const status of ["pending", "running"]) {
    const queued = storage();
    queued.runs.push({ run_id: "r2", status, updated_at: new Date() });
    assert.equal(await changeToken(queued, "t"), null);
  }
});
