// The run's events as UI message chunks, and the route's answer as their end (no network).
import assert from "node:assert/strict";
import test from "node:test";

import { UiChunkWriter, shownAnswer } from "../../src/ai-sdk/chunks.js";

function writer() {
  const chunks = [];
  return { chunks, writer: new UiChunkWriter((chunk) => chunks.push(chunk)) };
}

const ai = (id, content, extra = {}) => ["messages", [{ type: "AIMessageChunk", id, content, ...extra }, {}]];

function text(chunks, id) {
  return chunks
    .filter((c) => c.type === "text-delta" && c.id === id)
    .map((c) => c.delta)
    .join("");
}

test("tokens append to the message's text part, opened once under its id", () => {
  const { chunks, writer: w } = writer();
  w.event("metadata", { run_id: "run-1" });
  for (const token of ["A control ", "group ", "gets no treatment."]) w.event(...ai("m1", token));
  // The turn is one UI message, named by its run (a resume knows the run, too).
  assert.deepEqual(chunks[0], { type: "start", messageId: "run-1" });
  assert.equal(chunks.filter((c) => c.type === "text-start").length, 1);
  assert.equal(text(chunks, "text:m1"), "A control group gets no treatment.");
});

test("the JS server's `ai` chunks append as well", () => {
  const { chunks, writer: w } = writer();
  w.event("messages", [{ type: "ai", id: "run-1", content: "Hel" }, {}]);
  w.event("messages", [{ type: "ai", id: "run-1", content: "lo" }, {}]);
  assert.equal(text(chunks, "text:run-1"), "Hello");
});

test("the route's answer completes the cut text by what it lacks, then finish", () => {
  const { chunks, writer: w } = writer();
  w.event(...ai("m1", "A control "));
  const appended = w.finish({ content: "A control group gets no treatment.", message_id: "m1", status: "success" });
  assert.equal(appended, true);
  assert.equal(text(chunks, "text:m1"), "A control group gets no treatment.");
  assert.deepEqual(chunks.slice(-2), [{ type: "text-end", id: "text:m1" }, { type: "finish", finishReason: "stop" }]);
});

test("a route message id other than the stream's completes the streamed part it continues", () => {
  const { chunks, writer: w } = writer();
  w.event(...ai("lc_run--1", "Partial"));
  w.finish({ content: "Partial answer.", message_id: "stored-id", status: "success" });
  assert.equal(text(chunks, "text:lc_run--1"), "Partial answer.");
  assert.equal(chunks.filter((c) => c.type === "text-start").length, 1);
});

test("an answer that does not continue the shown text gets its own part; the shown text stays", () => {
  const { chunks, writer: w } = writer();
  w.event(...ai("m1", "Draft"));
  assert.equal(w.finish({ content: "Final.", message_id: "m1", status: "success" }), false);
  assert.equal(text(chunks, "text:m1"), "Draft");
  assert.equal(text(chunks, "text:m1:answer"), "Final.");
});

test("a run run anew (a server restart) re-types the shown text under new ids: shown once, then continued", () => {
  const { chunks, writer: w } = writer();
  w.event("metadata", { run_id: "run-1", attempt: 1 });
  w.event(...ai("m1", "A control group "));
  // The server restarted: attempt 2 streams the answer again from its start, as m2.
  w.event("metadata", { run_id: "run-1", attempt: 2 });
  for (const token of ["A control ", "group ", "gets no treatment."]) w.event(...ai("m2", token));
  w.finish({ content: "A control group gets no treatment.", message_id: "m2", status: "success" });
  assert.equal(text(chunks, "text:m1"), "A control group gets no treatment.");
  assert.equal(text(chunks, "text:m2"), "");
  assert.equal(chunks.filter((c) => c.type === "text-start").length, 1);
});

test("a restart's new attempt numbered 1 again is a new attempt too", () => {
  // langgraph dev's attempt counter may not outlive a SIGKILL.
  const { chunks, writer: w } = writer();
  w.event("metadata", { run_id: "run-1", attempt: 1 });
  w.event(...ai("m1", "A control "));
  w.event("metadata", { run_id: "run-1", attempt: 1 });
  w.event(...ai("m2", "A control group."));
  assert.equal(text(chunks, "text:m1"), "A control group.");
  assert.equal(text(chunks, "text:m2"), "");
});

test("without a second metadata event, a later message is its own part even if it repeats", () => {
  const { chunks, writer: w } = writer();
  w.event("metadata", { run_id: "run-1", attempt: 1 });
  w.event(...ai("m1", "Same words."));
  w.event(...ai("m2", "Same words. And more."));
  assert.equal(text(chunks, "text:m1"), "Same words.");
  assert.equal(text(chunks, "text:m2"), "Same words. And more.");
});

test("a new attempt that answers otherwise gets a part of its own; the shown text stays", () => {
  const { chunks, writer: w } = writer();
  w.event("metadata", { run_id: "run-1", attempt: 1 });
  w.event(...ai("m1", "First draft"));
  w.event("metadata", { run_id: "run-1", attempt: 2 });
  w.event(...ai("m2", "Another answer."));
  assert.equal(text(chunks, "text:m1"), "First draft");
  assert.equal(text(chunks, "text:m2"), "Another answer.");
});

test("nothing streamed: the answer is the whole message, started under its run", () => {
  const { chunks, writer: w } = writer();
  w.finish({ content: "All of it.", message_id: "m9", run_id: "run-9", status: "success" });
  assert.deepEqual(chunks.map((c) => c.type), ["start", "text-start", "text-delta", "text-end", "finish"]);
  assert.equal(chunks[0].messageId, "run-9");
});

test("reasoning is a reasoning part, never in the text; an open <think> shows nothing yet", () => {
  const { chunks, writer: w } = writer();
  w.event(...ai("m1", "<think>Weigh"));
  assert.equal(shownAnswer("<think>Weigh"), "");
  w.event(...ai("m1", "ing</think>The answer."));
  w.event(...ai("m2", [{ type: "reasoning", reasoning: "Block reasoning." }]));
  assert.equal(text(chunks, "text:m1"), "The answer.");
  const reasoning = (id) =>
    chunks
      .filter((c) => c.type === "reasoning-delta" && c.id === id)
      .map((c) => c.delta)
      .join("");
  assert.equal(reasoning("reasoning:m1"), "Weighing"); // streamed as it came
  assert.equal(reasoning("reasoning:m2"), "Block reasoning.");
  // The reasoning part ends before the text part of its message begins.
  const types = chunks.map((c) => `${c.type}:${c.id ?? ""}`);
  assert.ok(types.indexOf("reasoning-end:reasoning:m1") < types.indexOf("text-start:text:m1"));
});

test("tool calls are tool parts: input streamed, then available, then the tool's output", () => {
  const { chunks, writer: w } = writer();
  w.event(...ai("m1", "", { tool_call_chunks: [{ id: "call-1", name: "search", args: '{"q":', index: 0 }] }));
  w.event(...ai("m1", "", { tool_call_chunks: [{ args: '"bees"}', index: 0 }] }));
  w.event("messages", [{ type: "tool", tool_call_id: "call-1", name: "search", content: "found 3" }, {}]);
  const tool = chunks.filter((c) => c.toolCallId === "call-1").map((c) => c.type);
  assert.deepEqual(tool, [
    "tool-input-start",
    "tool-input-delta",
    "tool-input-delta",
    "tool-input-available",
    "tool-output-available",
  ]);
  const available = chunks.find((c) => c.type === "tool-input-available");
  assert.deepEqual(available.input, { q: "bees" });
  assert.equal(chunks.find((c) => c.type === "tool-output-available").output, "found 3");
});

test("a failed run ends on an error chunk; an interrupted one carries its interrupt", () => {
  const failed = writer();
  failed.writer.finish({ content: "", status: "error", error: { code: "run_failed", message: "Error: down" } });
  assert.deepEqual(failed.chunks.at(-1), { type: "error", errorText: "Error: down" });
  const asked = writer();
  asked.writer.finish({ content: "", status: "interrupted", interrupts: [{ id: "i1", value: { q: "approve?" } }] });
  assert.deepEqual(asked.chunks.slice(-2), [
    { type: "data-interrupt", id: "i1", data: { q: "approve?" } },
    { type: "finish", finishReason: "other" },
  ]);
});

test("a Stop ends the open parts where they are, then finish", () => {
  const { chunks, writer: w } = writer();
  w.event(...ai("m1", "Half an"));
  w.stop();
  assert.equal(text(chunks, "text:m1"), "Half an");
  assert.deepEqual(chunks.slice(-2), [{ type: "text-end", id: "text:m1" }, { type: "finish", finishReason: "stop" }]);
});
