// The answer from a thread's state (src/answer/state.js and status.js, through the
// package's entry): F2a's, and the route's read.

import assert from "node:assert/strict";
import { test } from "node:test";

import { answerFromState, describeException, errorFromTasks } from "../../src/core/index.js";
import { ai, human, state } from "../fixtures.mjs";

// F2a extraction

test("answerFromState: last AI text of the latest turn, reasoning and think excluded", () => {
  const body = answerFromState(
    "t1",
    state([
      human("first question"),
      ai("first answer", "a1"),
      human("second question"),
      ai("", "a2"),
      { type: "tool", id: "tool1", content: "tool output" },
      ai(
        [
          { type: "reasoning", reasoning: "hidden", index: 0 },
          { type: "text", text: "<think>also hidden</think>final ", index: 1 },
          { type: "text", text: "answer", index: 1 },
        ],
        "a3",
      ),
    ]),
    { threadStatus: "idle" },
  );
  assert.deepEqual(
    { ...body },
    {
      content: "final answer",
      completed_at: "2026-01-01T00:00:00+00:00",
      complete: true,
      status: "success",
      thread_id: "t1",
      run_id: "run-1",
      checkpoint_id: "cp-1",
      message_id: "a3",
      updated_at: "2026-01-01T00:00:00+00:00",
      source: "api",
      error: null,
      interrupts: [],
    },
  );
});

test("answerFromState: never the previous turn's answer; statuses", () => {
  const turn = [human("q1"), ai("a1"), human("q2")];
  const running = answerFromState("t", state(turn, { next: ["agent"] }), { threadStatus: "busy" });
  assert.equal(running.content, "");
  assert.equal(running.complete, false);
  assert.equal(running.status, "running");
  assert.equal(running.completed_at, null);
  // busy wins over a checkpoint that looks finished
  const busy = answerFromState("t", state([human("q"), ai("a")]), { threadStatus: "busy" });
  assert.equal(busy.complete, false);
  // idle with work left: stopped, not success
  const stopped = answerFromState("t", state(turn, { next: ["agent"] }), { threadStatus: "idle" });
  assert.equal(stopped.status, "error");
  assert.equal(stopped.error.code, "run_stopped");
  assert.equal(stopped.complete, true);
  // input waiting in __start__ has not reached the messages
  const waiting = answerFromState("t", state([human("q1"), ai("a1")], { next: ["__start__"] }));
  assert.equal(waiting.content, "");
  const failed = answerFromState(
    "t",
    state([human("q"), ai("partial")], { next: ["agent"], tasks: [{ id: "x", error: "ValueError('boom')" }] }),
    { threadStatus: "error" },
  );
  assert.equal(failed.status, "error");
  assert.equal(failed.error.message, "ValueError: boom", "as the route reads the checkpoint's write");
  assert.equal(failed.content, "partial");
  const interrupted = answerFromState(
    "t",
    state([human("q")], { next: ["tools"], tasks: [{ id: "x", interrupts: [{ id: "i1", value: { ask: 1 } }] }] }),
    { threadStatus: "interrupted" },
  );
  assert.equal(interrupted.status, "interrupted");
  assert.deepEqual(interrupted.interrupts, [{ id: "i1", value: { ask: 1 } }]);
  // a human message without text does not start a turn
  const blankHuman = answerFromState("t", state([human("q"), ai("a"), human([{ type: "image_url" }])]));
  assert.equal(blankHuman.content, "a");
});

// --------------------------------------------------------------------------------------

test("describeException: a task's error as the route words it, from either server", () => {
  assert.deepEqual(describeException("RuntimeError('the search backend is down')"), [
    "RuntimeError",
    "RuntimeError: the search backend is down",
  ]);
  assert.deepEqual(describeException('KeyError("it\'s gone")'), ["KeyError", "KeyError: it's gone"]);
  assert.deepEqual(describeException("CancelledError()"), ["CancelledError", "CancelledError"]);
  assert.deepEqual(describeException({ name: "Error", message: "down" }), ["Error", "Error: down"]);
  assert.deepEqual(describeException("Error: down"), [null, "Error: down"]);
  assert.deepEqual(describeException('{"message":"down","name":"Error"}'), ["Error", "Error: down"]);
  assert.deepEqual(describeException("{not json"), [null, "{not json"]);
  assert.deepEqual(describeException("ValueError(1, 2)"), ["ValueError", "ValueError(1, 2)"]);
});

test("errorFromTasks: a failure wins over the cancellations it caused; cancellations alone cancel", () => {
  assert.equal(errorFromTasks(["CancelledError()", "RuntimeError('x')"]).code, "run_failed");
  const cancelled = errorFromTasks(["NodeCancelledError()"]);
  assert.deepEqual(cancelled, {
    code: "run_cancelled",
    message: "the run was cancelled mid-step (NodeCancelledError)",
    retryable: false,
  });
  assert.equal(errorFromTasks([{ name: "AbortError", message: "aborted" }]).code, "run_cancelled");
});

test("answerFromState with includeReasoning: every kind of reasoning, joined", () => {
  const message = {
    type: "ai",
    id: "m1",
    content: [
      { type: "reasoning", reasoning: "first" },
      { type: "thinking", thinking: "second" },
      { type: "text", text: "<think>third</think>The answer." },
    ],
    additional_kwargs: { reasoning_content: "not doubled" },
  };
  const body = answerFromState("t", state([human("q"), message]), { includeReasoning: true });
  assert.equal(body.content, "The answer.");
  assert.equal(body.reasoning, "first\n\nsecond\n\nthird");
  assert.equal("reasoning" in answerFromState("t", state([human("q"), message])), false);
  const kwargs = { type: "ai", content: "Plain.", additional_kwargs: { reasoning_content: "aside" } };
  assert.equal(answerFromState("t", state([human("q"), kwargs]), { includeReasoning: true }).reasoning, "aside");
});
