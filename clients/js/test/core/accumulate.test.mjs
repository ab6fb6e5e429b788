// F1 bookkeeping and message text: what a stream has shown, reasoning excluded.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  accumulateEvents,
  answerText,
  createStreamAccumulator,
  mergeContent,
  parseSse,
  splitThink,
} from "../../src/core/index.js";
import {
  ANSWER,
  ANSWER_TOKENS,
  chunkMessage,
  runStream,
} from "../fixtures.mjs";

test("no terminal event: truncated; `end` or `error`: not truncated", () => {
  const open = accumulateEvents(parseSse([runStream()]).events);
  assert.equal(open.truncated, true);
  assert.equal(open.text, ANSWER);
  assert.equal(open.runId, "run-1");
  const ended = accumulateEvents(parseSse([runStream({ terminal: "end" })]).events);
  assert.equal(ended.truncated, false);
  assert.equal(ended.terminalEvent, "end");
  const failed = accumulateEvents(parseSse([runStream({ terminal: "error" })]).events);
  assert.equal(failed.truncated, false);
  assert.deepEqual(failed.error, { error: "boom" });
});

test("reasoning blocks are excluded from the shown text", () => {
  const acc = createStreamAccumulator();
  for (const word of ["Let ", "me ", "think."]) {
    acc.feed("messages", chunkMessage([{ type: "reasoning", reasoning: word, index: 0 }]));
  }
  assert.equal(acc.text, "");
  assert.equal(acc.feed("messages", chunkMessage([{ type: "text", text: "Hi", index: 1 }])), true);
  assert.equal(acc.text, "Hi");
  acc.feed("messages", chunkMessage([{ type: "text", text: " there", index: 1 }]));
  assert.equal(acc.text, "Hi there");
});

test("a leading inline <think> is stripped, even while it is still open", () => {
  const acc = createStreamAccumulator();
  const updates = [];
  for (const token of ["<think>", "plan ", "the answer", "</think>", "\n\nThe ", "answer."]) {
    if (acc.feed("messages", chunkMessage(token))) updates.push(acc.text);
  }
  assert.deepEqual(updates, ["The ", "The answer."]);
  assert.deepEqual(splitThink("<think>why</think>\nAnswer"), ["Answer", "why"]);
  assert.deepEqual(splitThink("  <think>never closed"), ["", "never closed"]);
  assert.deepEqual(splitThink("Answer <think>not leading</think>"), [
    "Answer <think>not leading</think>",
    "",
  ]);
  assert.equal(answerText([{ type: "text", text: "<think>x</think>A" }, "B"]), "AB");
});

test("chunks merge like AIMessageChunk: by block index, strings concatenate", () => {
  assert.equal(mergeContent("a", "b"), "ab");
  assert.deepEqual(mergeContent("", [{ type: "text", text: "x", index: 0 }]), [
    "",
    { type: "text", text: "x", index: 0 },
  ]);
  assert.deepEqual(
    mergeContent(
      [{ type: "reasoning", reasoning: "r1", index: 0 }],
      [{ type: "reasoning", reasoning: "r2", index: 0 }, { type: "text", text: "t", index: 1 }],
    ),
    [
      { type: "reasoning", reasoning: "r1r2", index: 0 },
      { type: "text", text: "t", index: 1 },
    ],
  );
});

test("chunks of one message append, `ai` or `AIMessageChunk`; the newest message with text is shown", () => {
  // LangGraph's JS server types every chunk `ai`; both servers send a message whole only
  // when it was not streamed (its id is new), as the SDK's own message rebuild assumes.
  const acc = createStreamAccumulator();
  acc.feed("messages", chunkMessage("par", "m1"));
  acc.feed("messages", [{ type: "ai", id: "m1", content: "tial " }, {}]);
  acc.feed("messages", [{ type: "ai", id: "m1", content: [{ type: "text", text: "whole" }] }, {}]);
  assert.equal(acc.text, "partial whole");
  acc.feed("messages|agent:1", chunkMessage("second", "m2"));
  assert.equal(acc.text, "second");
  acc.feed("messages", chunkMessage("", "m3")); // a tool-call message without text
  assert.equal(acc.text, "second");
  acc.feed("messages", [{ type: "human", id: "h", content: "ignored" }, {}]);
  assert.equal(acc.text, "second");
});

test("across a gap, a message whose first chunk was missed is never shown", () => {
  // What a join that did not replay from the run's first event delivers: the answer's
  // chunks without its first ("Températures — …" is no prefix of "## Answer …").
  const acc = createStreamAccumulator();
  acc.gap();
  for (const token of ANSWER_TOKENS.slice(1)) {
    assert.equal(acc.feed("messages", chunkMessage([{ type: "text", text: token, index: 1 }])), false);
  }
  assert.equal(acc.text, "");
  // Its later chunks stay unshown: nothing of it is known to start where the answer does.
  acc.feed("metadata", { run_id: "run-1", attempt: 1 });
  acc.feed("messages", chunkMessage(" more"));
  assert.equal(acc.text, "");
});

test("a gap that the run's first event closes: the replay is whole, its messages shown", () => {
  const acc = createStreamAccumulator();
  acc.gap();
  acc.feed("metadata", { run_id: "run-1", attempt: 1 });
  for (const token of ANSWER_TOKENS) acc.feed("messages", chunkMessage(token));
  assert.equal(acc.text, ANSWER);
});

test("a message seen before a gap keeps the text it had: a chunk may be missing between", () => {
  const acc = createStreamAccumulator();
  acc.feed("messages", chunkMessage(ANSWER_TOKENS[0]));
  acc.gap();
  assert.equal(acc.feed("messages", chunkMessage(ANSWER_TOKENS[2])), false);
  assert.equal(acc.text, ANSWER_TOKENS[0]);
});

// --------------------------------------------------------------------------------------
