// Replace, never append: the route's answer put into a useStream message list.

import assert from "node:assert/strict";
import { test } from "node:test";

import { applyAnswers, replaceText, withFinalAnswer } from "../../src/core/index.js";

const answer = (content, messageId = "a2") => ({ content, message_id: messageId, run_id: "r" });

test("replaceText keeps reasoning and tool blocks, replaces all text blocks with one", () => {
  const message = {
    type: "ai",
    id: "a",
    tool_calls: [{ id: "c", name: "search", args: {} }],
    content: [
      { type: "reasoning", reasoning: "hmm", index: 0 },
      { type: "text", text: "Hello Hel", index: 1 },
      { type: "text", text: "lo wor", index: 2 },
    ],
  };
  const replaced = replaceText(message, "Hello world");
  assert.deepEqual(replaced.content, [
    { type: "reasoning", reasoning: "hmm", index: 0 },
    { type: "text", text: "Hello world" },
  ]);
  assert.equal(replaced.tool_calls, message.tool_calls);
  assert.equal(message.content.length, 3, "the original is not mutated");
  assert.equal(replaceText({ content: "<think>x</think>Hel" }, "Hello").content, "<think>x</think>Hello");
  assert.equal(replaceText({ content: "partial" }, "whole").content, "whole");
  assert.deepEqual(replaceText({ content: [{ type: "image_url" }] }, "t").content, [
    { type: "image_url" },
    { type: "text", text: "t" },
  ]);
});

test("applyAnswers replaces by message id only; the same list when nothing applies", () => {
  const messages = [
    { type: "human", id: "h", content: "q" },
    { type: "ai", id: "a", content: "doubled doubled" },
  ];
  assert.equal(applyAnswers(messages, new Map()), messages);
  assert.equal(applyAnswers(messages, { other: "x" }), messages);
  const out = applyAnswers(messages, new Map([["a", "doubled"]]));
  assert.deepEqual(out.map((m) => m.content), ["q", "doubled"]);
});

test("withFinalAnswer: by id, else the latest turn's last AI message, else appended", () => {
  const turn = [
    { type: "human", id: "h1", content: "q1" },
    { type: "ai", id: "a1", content: "first answer" },
    { type: "human", id: "h2", content: "q2" },
    { type: "ai", id: "t", content: "", tool_calls: [{ id: "c", name: "search", args: {} }] },
    { type: "tool", id: "r", content: "notes", tool_call_id: "c" },
  ];
  const byId = withFinalAnswer([...turn, { type: "ai", id: "a2", content: "trunc" }], answer("whole"));
  assert.equal(byId.at(-1).content, "whole");
  assert.equal(byId.length, 6);
  // The stream named the message differently: the turn's last AI message with no tool call.
  const byTurn = withFinalAnswer([...turn, { type: "ai", id: "x", content: "trunc" }], answer("whole"));
  assert.equal(byTurn.at(-1).content, "whole");
  assert.equal(byTurn[1].content, "first answer", "never the previous turn's message");
  // The stream died before the answer began: the answer is its own message.
  const added = withFinalAnswer(turn, answer("whole"));
  assert.equal(added.length, turn.length + 1);
  assert.deepEqual(added.at(-1), { type: "ai", id: "a2", content: "whole" });
  assert.equal(withFinalAnswer(turn, answer("")), turn, "no text: nothing to show");
});

test("withFinalAnswer: a list without the new turn's question keeps the turn before's answer", () => {
  // A stream cut before it brought the second question: the last human message is the
  // first one, and the last AI message after it is the first turn's settled answer.
  const first = [
    { type: "human", id: "h1", content: "q1" },
    { type: "ai", id: "a1", content: "first answer" },
  ];
  const settled = new Map([["a1", "first answer"], ["a2", "whole"]]);
  for (const shown of [settled, Object.fromEntries(settled)]) {
    const out = withFinalAnswer(first, answer("whole"), shown);
    assert.equal(out[1].content, "first answer", "the first turn's answer stays");
    assert.deepEqual(out.at(-1), { type: "ai", id: "a2", content: "whole" });
  }
  // Without what was shown, the first turn's message is the only candidate there is.
  assert.equal(withFinalAnswer(first, answer("whole"))[1].content, "whole");
  // The named message is the answer's own even when it is a key of `settled`.
  const named = withFinalAnswer([...first, { type: "ai", id: "a2", content: "wh" }], answer("whole"), settled);
  assert.equal(named.length, 3);
  assert.equal(named[2].content, "whole");
});
