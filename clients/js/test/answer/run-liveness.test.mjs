// The route's verdict on a run from the server's runs (src/answer/run-liveness.js, the
// twin of answer/run_liveness.py, inside the server).

import assert from "node:assert/strict";
import { test } from "node:test";

import { pendingAnswer } from "../../src/answer/result.js";
import { RunNotFound, verdict } from "../../src/answer/run-liveness.js";

const answer = (status, extra = {}) => ({
  content: "partial",
  completed_at: null,
  complete: ["success", "error", "interrupted"].includes(status),
  status,
  thread_id: "t",
  run_id: "r1",
  checkpoint_id: "c1",
  message_id: "m1",
  updated_at: "2026-12-05T10:00:00+00:00",
  source: "api",
  error: null,
  interrupts: [],
  ...extra,
});
const runs = (entries) => new Map(Object.entries(entries));

test("work left: alive while the server holds the run; cancelled, failed, stopped or lost after", () => {
  const live = verdict(answer("running"), null, { threadStatus: "busy", runs: runs({ r1: "running" }) });
  assert.equal(live.status, "running");
  const cancelled = verdict(answer("running"), null, { threadStatus: "idle", runs: runs({ r1: "interrupted" }) });
  assert.deepEqual([cancelled.status, cancelled.complete, cancelled.error.code], ["error", true, "run_cancelled"]);
  assert.equal(cancelled.content, "partial", "the partial answer stays");
  assert.equal(cancelled.completed_at, cancelled.updated_at);
  const failed = verdict(answer("running"), null, { threadStatus: "error", runs: runs({ r1: "error" }) });
  assert.equal(failed.error.code, "run_failed");
  const stopped = verdict(answer("running"), null, { threadStatus: "idle", runs: runs({ r1: "success" }) });
  assert.deepEqual([stopped.error.code, stopped.error.retryable], ["run_stopped", true]);
  const paused = verdict(answer("running"), null, { threadStatus: "interrupted", runs: runs({ r1: "success" }) });
  assert.equal(paused.status, "interrupted");
  const lost = verdict(answer("running"), null, { threadStatus: "idle", runs: runs({}) });
  assert.equal(lost.error.code, "run_lost");
});

test("the latest turn is a run that wrote nothing yet: pending, never the previous answer", () => {
  const queued = verdict(answer("success", { complete: true }), null, {
    threadStatus: "busy",
    runs: runs({ r1: "success", r2: "pending" }),
  });
  assert.deepEqual([queued.status, queued.run_id, queued.content, queued.checkpoint_id], ["pending", "r2", "", null]);
});

test("a run asked for by id: a later run's busy says nothing of it; an unknown one is not found", () => {
  const ended = verdict(answer("success", { complete: true }), "r1", {
    threadStatus: "busy",
    runs: runs({ r1: "success", r2: "running" }),
  });
  assert.equal(ended.status, "success");
  const pending = pendingAnswer("t", "r3");
  assert.equal(verdict(pending, "r3", { threadStatus: "busy", runs: runs({ r3: "pending" }) }).status, "pending");
  assert.throws(() => verdict(pending, "r3", { threadStatus: "idle", runs: runs({}) }), RunNotFound);
});

test("nothing written: a run that ended before its first checkpoint ends the answer at once", () => {
  // As the route reads a thread with no checkpoint: nothing written, no time.
  const unwritten = pendingAnswer("t", null);
  const cancelled = verdict(unwritten, null, { threadStatus: "idle", runs: runs({ r1: "interrupted" }) });
  assert.deepEqual(
    [cancelled.status, cancelled.complete, cancelled.error.code, cancelled.run_id, cancelled.completed_at],
    ["error", true, "run_cancelled", "r1", null],
  );
  const failed = verdict(unwritten, null, { threadStatus: "idle", runs: runs({ r1: "interrupted", r2: "error" }) });
  assert.deepEqual([failed.error.code, failed.run_id], ["run_failed", "r2"], "the newest run's end");
  const asked = verdict({ ...unwritten, run_id: "r1" }, "r1", { threadStatus: "idle", runs: runs({ r1: "interrupted" }) });
  assert.equal(asked.error.code, "run_cancelled");
  const queued = verdict(unwritten, null, { threadStatus: "busy", runs: runs({ r1: "interrupted", r2: "pending" }) });
  assert.deepEqual([queued.status, queued.run_id], ["pending", "r2"]);
  assert.equal(verdict(unwritten, null, { threadStatus: "idle", runs: runs({}) }).status, "pending");
});
