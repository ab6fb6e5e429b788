// The route's text in an AG-UI MESSAGES_SNAPSHOT, and the RUN_ERROR codes of a run that
// could not be followed.

import assert from "node:assert/strict";
import { test } from "node:test";

import { RunGone, ThreadGone, Unrecoverable } from "../../src/core/errors.js";
import { followErrorCode } from "../../src/ag-ui/agent.js";
import { answerIndex, withAnswerText } from "../../src/ag-ui/messages.js";

const answer = (content, messageId = "a2") => ({ content, message_id: messageId, run_id: "r" });

const messages = [
  { id: "u1", role: "user", content: "first?" },
  { id: "a1", role: "assistant", content: "first answer" },
  { id: "u2", role: "user", content: "second?" },
  { id: "a2-call", role: "assistant", content: "", toolCalls: [{ id: "c", type: "function" }] },
  { id: "t", role: "tool", content: "result", toolCallId: "c" },
  { id: "a2", role: "assistant", content: "second ans" },
];

test("the answer message named by the route shows its text; the rest is untouched", () => {
  const out = withAnswerText(messages, answer("second answer"));
  assert.equal(out[5].content, "second answer");
  assert.equal(out[5].id, "a2");
  for (let i = 0; i < 5; i += 1) assert.equal(out[i], messages[i]);
  assert.equal(messages[5].content, "second ans", "the original is not mutated");
});

test("without the route's id: the last assistant message without tool calls of the turn", () => {
  assert.equal(answerIndex(messages, answer("x", "unknown")), 5);
  assert.equal(answerIndex(messages.slice(0, 5), answer("x", "unknown")), -1, "never the previous turn's");
});

test("an answer missing from the snapshot is added; an equal one changes nothing", () => {
  const out = withAnswerText(messages.slice(0, 3), answer("second answer"));
  assert.deepEqual(out[3], { id: "a2", role: "assistant", content: "second answer" });
  assert.equal(withAnswerText(messages, answer("second ans")), messages);
  assert.equal(withAnswerText(messages, answer("")), messages, "no text: the state as it is");
});

test("a run that could not be followed: RUN_ERROR codes", () => {
  assert.equal(followErrorCode(new RunGone("t", "r")), "run_not_found");
  assert.equal(followErrorCode(new ThreadGone("t")), "thread_not_found");
  assert.equal(followErrorCode(new Unrecoverable("no answer")), "final_answer_unavailable");
});
