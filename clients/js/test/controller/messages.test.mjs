// The route's answer put into @langchain/react's message list: instances stay instances.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AIMessage,
  AIMessageChunk,
  BaseMessage,
  HumanMessage,
  ToolMessage,
} from "@langchain/core/messages";

import { cloneWithContent, overlayAnswers, withText } from "../../src/controller/messages.js";

const final = (content, messageId = "a2") => ({ content, message_id: messageId, run_id: "r" });

test("cloneWithContent rebuilds the message by its own class, every field kept", () => {
  const message = new AIMessage({
    id: "a",
    content: "Hel",
    name: "agent",
    tool_calls: [{ id: "c", name: "search", args: { q: "x" }, type: "tool_call" }],
    response_metadata: { model_name: "offline" },
    usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  });
  const clone = cloneWithContent(message, "Hello");
  assert.ok(clone instanceof AIMessage && BaseMessage.isInstance(clone));
  assert.notEqual(clone, message);
  assert.equal(clone.type, "ai");
  assert.equal(clone.text, "Hello");
  assert.equal(clone.id, "a");
  assert.equal(clone.name, "agent");
  assert.deepEqual(clone.tool_calls, message.tool_calls);
  assert.deepEqual(clone.response_metadata, { model_name: "offline" });
  assert.deepEqual(clone.usage_metadata, message.usage_metadata);
  assert.equal(message.content, "Hel", "the original is not mutated");

  const chunk = new AIMessageChunk({ id: "k", content: [{ type: "text", text: "Hi", index: 0 }] });
  const chunkClone = cloneWithContent(chunk, [{ type: "text", text: "Hi there" }]);
  assert.ok(chunkClone instanceof AIMessageChunk);
  assert.equal(chunkClone.text, "Hi there");

  const tool = cloneWithContent(new ToolMessage({ id: "t", content: "x", tool_call_id: "c" }), "y");
  assert.ok(tool instanceof ToolMessage);
  assert.equal(tool.tool_call_id, "c");
});

test("withText replaces the answer text only: reasoning blocks stay, equal text is the same instance", () => {
  const message = new AIMessage({
    id: "a",
    content: [
      { type: "reasoning", reasoning: "hmm" },
      { type: "text", text: "Hello Hel" },
      { type: "text", text: "lo wor" },
    ],
  });
  const replaced = withText(message, "Hello world");
  assert.ok(replaced instanceof AIMessage);
  assert.deepEqual(replaced.content, [
    { type: "reasoning", reasoning: "hmm" },
    { type: "text", text: "Hello world" },
  ]);
  const same = new AIMessage({ id: "b", content: "<think>x</think>Done" });
  assert.equal(withText(same, "Done"), same);
  assert.equal(withText(new AIMessage({ id: "c", content: "<think>x</think>Do" }), "Done").content, "<think>x</think>Done");
});

test("overlayAnswers replaces by message id, keeps other instances, and is stable when nothing changes", () => {
  const human = new HumanMessage({ id: "h", content: "q" });
  const answer = new AIMessage({ id: "a", content: "doubled doubled" });
  const messages = [human, answer];
  const out = overlayAnswers(messages, new Map([["a", "doubled"]]));
  assert.equal(out[0], human);
  assert.ok(out[1] instanceof AIMessage);
  assert.equal(out[1].text, "doubled");
  assert.equal(overlayAnswers(messages, new Map([["zz", "x"]])), messages);
  assert.equal(overlayAnswers(messages, new Map([["a", "doubled doubled"]])), messages);
  assert.equal(overlayAnswers(messages, new Map(), null), messages);
});

test("overlayAnswers ends the turn with the final answer: named message, else last AI, else a new AIMessage", () => {
  const human = new HumanMessage({ id: "h", content: "q" });
  const call = new AIMessage({
    id: "a1",
    content: "",
    tool_calls: [{ id: "c", name: "search", args: {}, type: "tool_call" }],
  });
  const tool = new ToolMessage({ id: "t", content: "notes", tool_call_id: "c" });
  const partial = new AIMessage({ id: "a2", content: "The ans" });

  const named = overlayAnswers([human, call, tool, partial], new Map(), final("The answer."));
  assert.equal(named[3].text, "The answer.");
  assert.ok(named[3] instanceof AIMessage);
  assert.equal(named[1], call, "the tool-calling message is untouched");

  const other = new AIMessage({ id: "x", content: "The ans" });
  const fallback = overlayAnswers([human, call, tool, other], new Map(), final("The answer."));
  assert.equal(fallback[3].text, "The answer.");
  assert.equal(fallback[3].id, "x");

  const missing = overlayAnswers([human, call, tool], new Map(), final("The answer."));
  assert.equal(missing.length, 4);
  assert.ok(missing[3] instanceof AIMessage);
  assert.equal(missing[3].id, "a2");
  assert.equal(missing[3].text, "The answer.");

  const list = [human, new AIMessage({ id: "a2", content: "The answer." })];
  assert.equal(overlayAnswers(list, new Map(), final("The answer.")), list);
  assert.equal(overlayAnswers(list, new Map(), final("")), list);
});

test("overlayAnswers never puts a run's answer in the turn before's message", () => {
  // The page holds the first turn only (its second question not streamed yet): the
  // second run's answer is a message of its own, the first answer stays where it was.
  const first = [new HumanMessage({ id: "h", content: "q" }), new AIMessage({ id: "a1", content: "One." })];
  const answers = new Map([["a1", "One."], ["a2", "Two."]]);
  const out = overlayAnswers(first, answers, final("Two."));
  assert.equal(out[1], first[1]);
  assert.equal(out.length, 3);
  assert.ok(out[2] instanceof AIMessage);
  assert.equal(out[2].id, "a2");
  assert.equal(out[2].text, "Two.");
});
