// A thread state's latest turn replayed as the run streamed it (no network), checked as
// the AI SDK itself builds the message from the chunks (`readUIMessageStream`).
import assert from "node:assert/strict";
import test from "node:test";

import { readUIMessageStream } from "ai";

import { UiChunkWriter } from "../../src/ai-sdk/chunks.js";
import { TurnReplay } from "../../src/ai-sdk/replay.js";

const QUESTION = { type: "human", id: "h2", content: "Which control group?" };
const CALL = { type: "ai", id: "m-call", content: "", tool_calls: [{ id: "call-1", name: "search_notes", args: { query: "control" } }] };
const RESULT = { type: "tool", id: "t-1", tool_call_id: "call-1", name: "search_notes", content: "note: start from a baseline" };
const REASONING = "The user asks about controls; my notes say baseline.";
const ANSWER = "A control group receives no treatment.";
const FINAL = {
  type: "ai",
  id: "m-answer",
  content: [
    { type: "reasoning", reasoning: REASONING, index: 0 },
    { type: "text", text: ANSWER, index: 1 },
  ],
};
const EARLIER = [
  { type: "human", id: "h1", content: "An earlier question" },
  { type: "ai", id: "m-old", content: "An earlier answer." },
];

const state = (messages, extra = {}) => ({ values: { messages }, next: [], metadata: { run_id: "run-2" }, ...extra });

/** The UI message the AI SDK builds from `chunks`. */
async function uiMessage(chunks) {
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return structuredClone(last);
}

function parts(message) {
  return message.parts.map(({ type, text, toolCallId, state: partState, input, output }) =>
    type === "dynamic-tool" ? { type, toolCallId, state: partState, input, output } : { type, text },
  );
}

test("the latest turn's messages only, each once: a later state adds what it added", () => {
  const replay = new TurnReplay("run-2");
  const first = replay.events(state([...EARLIER, QUESTION, CALL, RESULT]));
  assert.deepEqual(first.map(([, [message]]) => message.id), ["m-call", "t-1"]);
  assert.ok(first.every(([event]) => event === "messages"));
  const second = replay.events(state([...EARLIER, QUESTION, CALL, RESULT, FINAL]));
  assert.deepEqual(second.map(([, [message]]) => message.id), ["m-answer"]);
  assert.deepEqual(replay.events(state([...EARLIER, QUESTION, CALL, RESULT, FINAL])), []);
});

test("nothing from a state the run has not reached, nor while its input waits", () => {
  assert.deepEqual(new TurnReplay("run-3").events(state([...EARLIER, QUESTION, CALL])), []);
  const waiting = state([...EARLIER], { next: ["__start__"] });
  assert.deepEqual(new TurnReplay("run-2").events(waiting), []);
  assert.deepEqual(new TurnReplay("run-2").events(null), []);
});

test("replayed, the turn is the message its stream made: tool call and result, reasoning, text", async () => {
  // The run's stream, as the page showed it before a reload.
  const live = [];
  const streamed = new UiChunkWriter((chunk) => live.push(chunk));
  streamed.event("metadata", { run_id: "run-2" });
  streamed.event("messages", [{ type: "AIMessageChunk", id: "m-call", content: "", tool_call_chunks: [{ id: "call-1", name: "search_notes", args: '{"query": "control"}', index: 0 }] }, {}]);
  streamed.event("messages", [{ type: "AIMessageChunk", id: "m-call", content: "", tool_calls: CALL.tool_calls }, {}]);
  streamed.event("messages", [RESULT, {}]);
  for (const word of REASONING.split(/(?<= )/)) {
    streamed.event("messages", [{ type: "AIMessageChunk", id: "m-answer", content: [{ type: "reasoning", reasoning: word, index: 0 }] }, {}]);
  }
  for (const word of ANSWER.split(/(?<= )/)) {
    streamed.event("messages", [{ type: "AIMessageChunk", id: "m-answer", content: [{ type: "text", text: word, index: 1 }] }, {}]);
  }
  streamed.finish({ content: ANSWER, message_id: "m-answer", run_id: "run-2", status: "success" });

  // The same turn replayed from the thread's state.
  const resumed = [];
  const writer = new UiChunkWriter((chunk) => resumed.push(chunk));
  writer.start("run-2");
  for (const [event, data] of new TurnReplay("run-2").events(state([...EARLIER, QUESTION, CALL, RESULT, FINAL]))) {
    writer.event(event, data);
  }
  writer.finish({ content: ANSWER, message_id: "m-answer", run_id: "run-2", status: "success" });

  const before = await uiMessage(live);
  const after = await uiMessage(resumed);
  assert.equal(after.id, "run-2");
  assert.deepEqual(parts(after), parts(before));
  assert.deepEqual(
    parts(after).map((part) => part.type),
    ["dynamic-tool", "reasoning", "text"],
  );
  assert.equal(after.parts[0].state, "output-available");
  assert.equal(after.parts[2].text, ANSWER);
});
