// `reconnectToStream` against a fake server: a new chat resumes nothing without asking
// anything that fails; a thread's latest turn is replayed whole, then its answer.
import assert from "node:assert/strict";
import test from "node:test";

import { readUIMessageStream } from "ai";

import { LangGraphChatTransport, threadIdOf } from "../../src/ai-sdk/index.js";
import { threadExists } from "../../src/ai-sdk/thread-exists.js";
import { jsonResponse, mockServer } from "../fixtures.mjs";

const CHAT = "chat-abc";
const QUESTION = { type: "human", id: "h1", content: "Which control group?" };
const CALL = { type: "ai", id: "m-call", content: "", tool_calls: [{ id: "call-1", name: "search_notes", args: { query: "control" } }] };
const RESULT = { type: "tool", id: "t-1", tool_call_id: "call-1", name: "search_notes", content: "note: a baseline" };
const FINAL = {
  type: "ai",
  id: "m-answer",
  content: [
    { type: "reasoning", reasoning: "Notes say baseline.", index: 0 },
    { type: "text", text: "A control group receives no treatment.", index: 1 },
  ],
};

function answer(status, content = "", messageId = null) {
  const complete = status !== "running";
  return { content, complete, status, run_id: "run-1", message_id: messageId, thread_id: "t", error: null, interrupts: [] };
}

function server({ exists = true, answers, states }) {
  return mockServer([
    [/^POST \/threads\/search$/, async ({ init }) => {
      const { ids } = JSON.parse(init.body);
      return jsonResponse(200, exists ? [{ thread_id: ids[0] }] : []);
    }],
    [/^GET \/api\/threads\/[^/]+\/final-answer$/, async () => jsonResponse(200, answers.shift())],
    [/^GET \/threads\/[^/]+\/state$/, async () => jsonResponse(200, states.shift())],
  ]);
}

const state = (messages) => ({ values: { messages }, next: [], metadata: { run_id: "run-1" } });

async function lastMessage(stream) {
  let last;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return structuredClone(last);
}

const transportOn = (fetchImpl) => new LangGraphChatTransport({ apiUrl: "http://server", assistantId: "agent", fetch: fetchImpl });

test("a new chat: nothing to resume, asked by a search that answers 200, the route never asked", async () => {
  const { fetchImpl, calls } = server({ exists: false, answers: [], states: [] });
  assert.equal(await transportOn(fetchImpl).reconnectToStream({ chatId: CHAT }), null);
  assert.deepEqual(calls.map((call) => `${call.method} ${call.path}`), ["POST /threads/search"]);
  assert.deepEqual(JSON.parse(calls[0].body).ids, [await threadIdOf(CHAT)]);
});

test("a run still going: the turn so far at once, then its answer with its reasoning before its text", async () => {
  const { fetchImpl, calls } = server({
    answers: [answer("running"), answer("success", "A control group receives no treatment.", "m-answer")],
    states: [state([QUESTION, CALL, RESULT]), state([QUESTION, CALL, RESULT, FINAL])],
  });
  const stream = await transportOn(fetchImpl).reconnectToStream({ chatId: CHAT });
  const message = await lastMessage(stream);
  assert.equal(message.id, "run-1"); // the turn's message, as its stream named it
  assert.deepEqual(
    message.parts.map((part) => [part.type, part.state]),
    [["dynamic-tool", "output-available"], ["reasoning", "done"], ["text", "done"]],
  );
  assert.equal(message.parts[0].output, "note: a baseline");
  assert.equal(message.parts[1].text, "Notes say baseline.");
  assert.equal(message.parts[2].text, "A control group receives no treatment.");
  assert.ok(calls.some((call) => call.path.endsWith("/final-answer") && call.search.includes("wait=")));
});

test("a finished run: its whole turn from one state read", async () => {
  const { fetchImpl, calls } = server({
    answers: [answer("success", "A control group receives no treatment.", "m-answer")],
    states: [state([QUESTION, CALL, RESULT, FINAL])],
  });
  const message = await lastMessage(await transportOn(fetchImpl).reconnectToStream({ chatId: CHAT }));
  assert.deepEqual(message.parts.map((part) => part.type), ["dynamic-tool", "reasoning", "text"]);
  assert.equal(calls.filter((call) => call.path.endsWith("/state")).length, 1);
});

test("a state that cannot be read: the answer still comes, from the route", async () => {
  const { fetchImpl } = mockServer([
    [/^POST \/threads\/search$/, async ({ init }) => jsonResponse(200, [{ thread_id: JSON.parse(init.body).ids[0] }])],
    [/final-answer$/, async () => jsonResponse(200, answer("success", "Only the text.", "m-answer"))],
    [/\/state$/, async () => jsonResponse(500, { detail: "boom" })],
  ]);
  const message = await lastMessage(await transportOn(fetchImpl).reconnectToStream({ chatId: CHAT }));
  assert.deepEqual(message.parts.map((part) => [part.type, part.text]), [["text", "Only the text."]]);
});

test("a stopped run: nothing to resume, so the page keeps what it showed at Stop", async () => {
  const cancelled = {
    ...answer("error"),
    error: { code: "run_cancelled", message: "the run was cancelled", retryable: false },
  };
  const { fetchImpl, calls } = server({ answers: [cancelled], states: [state([QUESTION, CALL])] });
  assert.equal(await transportOn(fetchImpl).reconnectToStream({ chatId: CHAT }), null);
  assert.ok(!calls.some((call) => call.path.endsWith("/state")));
});

test("threadExists: true, false, and null where the server cannot say", async () => {
  const ask = (threads, status = 200) =>
    threadExists({ url: "http://server", threadId: "t-1", fetchImpl: async () => jsonResponse(status, threads) });
  assert.equal(await ask([{ thread_id: "t-1" }]), true);
  assert.equal(await ask([]), false);
  assert.equal(await ask([{ thread_id: "another" }]), null); // an `ids` filter it ignored
  assert.equal(await ask({ detail: "no" }, 422), null);
});
