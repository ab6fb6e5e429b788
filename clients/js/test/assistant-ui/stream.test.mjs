// createLangGraphStreamWithRecovery's decisions, on a client whose run stream is scripted
// and a route answered by a stand-in fetch: what it sends, what it yields after each kind
// of end. The real thing (assistant-ui's Thread on a real server, cut by a proxy) is
// tests/js/test_browser_assistant_ui.py.

import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { createLangGraphStreamWithRecovery } from "../../src/assistant-ui/index.js";
import { FINAL, ai, human, jsonResponse, mockServer, state } from "../fixtures.mjs";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

/** A client whose `runs.stream` yields `events` then ends as `end` says. */
function scriptedClient(events, { end = "clean", answer = FINAL, stateMessages = null } = {}) {
  const sent = [];
  const cancelled = [];
  const server = mockServer([
    [/GET \/api\/threads\/t\/final-answer/, () => jsonResponse(200, answer)],
    [/GET \/threads\/t\/runs$/, () => jsonResponse(200, [{ run_id: "run-1", metadata: { recovery_request_id: sent[0]?.metadata?.recovery_request_id } }])],
    [/GET \/threads\/t\/state/, () => jsonResponse(200, state(stateMessages ?? [human("q", "h"), ai(answer.content, "a")]))],
  ]);
  globalThis.fetch = server.fetchImpl;
  const client = {
    runs: {
      apiUrl: "http://127.0.0.1:9",
      defaultHeaders: { "x-api-key": "k" },
      async *stream(threadId, assistantId, payload) {
        sent.push({ threadId, assistantId, ...payload });
        for (const event of events) yield event;
        if (end === "cut") throw new TypeError("network error");
      },
      async cancel(threadId, runId) {
        cancelled.push([threadId, runId]);
      },
    },
    threads: {
      async getState(threadId) {
        const response = await globalThis.fetch(`http://127.0.0.1:9/threads/${threadId}/state`);
        return response.json();
      },
    },
  };
  return { client, sent, cancelled, calls: server.calls };
}

async function drain(iterable) {
  const out = [];
  for await (const event of iterable) out.push(event);
  return out;
}

const config = (extra = {}) => ({ initialize: async () => ({ externalId: "t" }), ...extra });
const partial = (content) => ({ event: "messages/partial", data: [{ id: "a", type: "ai", content }] });

test("the request is upstream's, resumable, tagged, and never cancelled by a drop", async () => {
  const { client, sent } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }]);
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "EvoScientist" });
  await drain(await stream([{ type: "human", content: "q" }], config()));
  const [payload] = sent;
  assert.equal(payload.threadId, "t");
  assert.equal(payload.assistantId, "EvoScientist");
  assert.deepEqual(payload.input, { messages: [{ type: "human", content: "q" }] });
  assert.deepEqual(payload.streamMode, ["messages", "updates", "custom"]);
  assert.equal(payload.onDisconnect, "continue");
  assert.equal(payload.streamResumable, true);
  assert.match(payload.metadata.recovery_request_id, /^[0-9a-f-]{36}$/);
});

test("an app's own onDisconnect and streamMode are kept", async () => {
  const { client, sent } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }]);
  const stream = createLangGraphStreamWithRecovery({
    client,
    assistantId: "a",
    onDisconnect: "cancel",
    streamMode: ["messages-tuple"],
  });
  await drain(await stream([], config()));
  assert.equal(sent[0].onDisconnect, "cancel");
  assert.deepEqual(sent[0].streamMode, ["messages-tuple"]);
});

test("a cut stream ends on the thread's state with the route's text, not an error", async () => {
  const { client, calls } = scriptedClient(
    [{ event: "metadata", data: { run_id: "run-1" } }, partial("## Ans")],
    { end: "cut" },
  );
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  const last = events.at(-1);
  assert.equal(last.event, "values");
  assert.deepEqual(
    last.data.messages.map((m) => [m.id, m.content]),
    [["h", "q"], ["a", FINAL.content]],
  );
  const route = calls.find((c) => c.path === "/api/threads/t/final-answer");
  assert.match(route.search, /run_id=run-1/);
  assert.equal(route.headers["x-api-key"], "k");
});

test("a clean early end is followed through the route as well", async () => {
  const { client } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }, partial("## Ans")]);
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  assert.equal(events.at(-1).data.messages.at(-1).content, FINAL.content);
});

test("the route's text replaces the state's, reasoning blocks kept", async () => {
  const blocks = [{ type: "reasoning", reasoning: "hm" }, { type: "text", text: "<raw>" }];
  const { client } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }], {
    stateMessages: [human("q", "h"), ai(blocks, "a")],
  });
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  assert.deepEqual(events.at(-1).data.messages.at(-1).content, [
    { type: "reasoning", reasoning: "hm" },
    { type: "text", text: FINAL.content },
  ]);
});

test("a stream cut before naming its run finds it by its tag", async () => {
  const { client, calls } = scriptedClient([], { end: "cut" });
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  assert.ok(calls.some((c) => c.path === "/threads/t/runs"));
  assert.equal(events.at(-1).data.messages.at(-1).content, FINAL.content);
});

test("a run that errored ends on its error event, nothing after it", async () => {
  const error = { event: "error", data: { error: "boom" } };
  const { client, calls } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }, error]);
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  assert.deepEqual(events.at(-1), error);
  assert.ok(!calls.some((c) => c.path.endsWith("/state")));
});

test("a stream still open once the route said the run is over is ended, its signal aborted", async () => {
  const { client, sent } = scriptedClient([]);
  client.runs.stream = async function* (threadId, assistantId, payload) {
    sent.push(payload);
    yield { event: "metadata", data: { run_id: "run-1" } };
    yield partial("## Ans");
    await new Promise(() => {}); // stalled, or waiting out a retry delay
  };
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  assert.equal(events.at(-1).data.messages.at(-1).content, FINAL.content);
  assert.equal(sent[0].signal.aborted, true);
});

test("a cut whose run the server never made rethrows the cut", async () => {
  const { client } = scriptedClient([], { end: "cut" });
  globalThis.fetch = mockServer([[/GET \/threads\/t\/runs$/, () => jsonResponse(200, [])]]).fetchImpl;
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  await assert.rejects(drain(await stream([], config())), TypeError);
});

test("a cancel the user asks for cancels the run on the server", async () => {
  const { client, cancelled } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }]);
  const controller = new AbortController();
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const iterator = (await stream([], config({ abortSignal: controller.signal })))[Symbol.asyncIterator]();
  await iterator.next();
  controller.abort();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(cancelled, [["t", "run-1"]]);
});

test("after a Stop, nothing the stream still holds is yielded", async () => {
  const { client } = scriptedClient([]);
  // Parts the SDK had read before the abort come out of its stream all the same.
  client.runs.stream = async function* () {
    yield { event: "metadata", data: { run_id: "run-1" } };
    yield partial("The par");
    yield partial("The partial answ");
    yield partial("The partial answer, more");
  };
  const controller = new AbortController();
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const iterator = (await stream([], config({ abortSignal: controller.signal })))[Symbol.asyncIterator]();
  await iterator.next();
  assert.equal((await iterator.next()).value.data[0].content, "The par");
  controller.abort(); // Stop
  const after = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) after.push(next.value);
  assert.deepEqual(after, []);
});

test("an interrupt in the thread's state is yielded as upstream's updates event", async () => {
  const { client } = scriptedClient([{ event: "metadata", data: { run_id: "run-1" } }]);
  client.threads.getState = async () =>
    state([human("q", "h"), ai("x", "a")], { tasks: [{ interrupts: [{ value: "approve?", id: "i1" }] }] });
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const events = await drain(await stream([], config()));
  assert.deepEqual(events.at(-1), { event: "updates", data: { __interrupt__: [{ value: "approve?", id: "i1" }] } });
});

test("a stopped turn keeps what it showed, marked cancelled, through the next turn and a load", async () => {
  const question = { id: "q1", type: "human", content: "first?" };
  const { client, cancelled } = scriptedClient([], {
    // The thread after the cancel, then a next question and its answer: no stopped text.
    stateMessages: [question, { id: "q2", type: "human", content: "second?" }, ai(FINAL.content, "a2")],
    answer: { ...FINAL, message_id: "a2" },
  });
  let release;
  client.runs.stream = async function* () {
    yield { event: "metadata", data: { run_id: "run-1" } };
    yield { event: "values", data: { messages: [question] } };
    yield { event: "messages/partial", data: [{ id: "a1", type: "ai", content: "The par" }] };
    await new Promise((resolve) => (release = resolve));
  };
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const controller = new AbortController();
  const iterator = (await stream([question], config({ abortSignal: controller.signal })))[Symbol.asyncIterator]();
  for (let i = 0; i < 3; i += 1) await iterator.next();
  controller.abort(); // Stop
  release?.();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(cancelled, [["t", "run-1"]]);

  // The next turn ends on the thread's state: the stopped turn is back in its place.
  client.runs.stream = async function* () {
    yield { event: "metadata", data: { run_id: "run-2" } };
  };
  const events = await drain(await stream([{ id: "q2", type: "human", content: "second?" }], config()));
  const shown = events.at(-1).data.messages;
  assert.deepEqual(shown.map((m) => m.id), ["q1", "a1", "q2", "a2"]);
  assert.equal(shown[1].content, "The par");
  assert.deepEqual(shown[1].status, { type: "incomplete", reason: "cancelled" });

  // A reload: the runtime's load shows it too.
  const loaded = await stream.load("t");
  assert.deepEqual(loaded.messages.map((m) => m.id), ["q1", "a1", "q2", "a2"]);
  assert.equal(loaded.messages[1].content, "The par");
  assert.equal(loaded.messages[3].content, FINAL.content);
});

test("load follows the thread's run to its end before showing it", async () => {
  let polls = 0;
  const running = { ...FINAL, complete: false, status: "running", content: "" };
  globalThis.fetch = mockServer([
    [/GET \/api\/threads\/t\/final-answer/, () => jsonResponse(200, ++polls < 2 ? running : { ...FINAL, message_id: "a" })],
    [/GET \/threads\/t\/state/, () => jsonResponse(200, state([human("q", "h"), ai("## Ans (state lags)", "a")]))],
  ]).fetchImpl;
  const client = {
    runs: { apiUrl: "http://127.0.0.1:9", defaultHeaders: {} },
    threads: { getState: async (id) => (await globalThis.fetch(`http://127.0.0.1:9/threads/${id}/state`)).json() },
  };
  const stream = createLangGraphStreamWithRecovery({ client, assistantId: "a" });
  const loaded = await stream.load("t");
  assert.equal(polls, 2, "it waited for the run's end");
  assert.equal(loaded.messages.at(-1).content, FINAL.content);
  assert.deepEqual(loaded.interrupts, []);
});
