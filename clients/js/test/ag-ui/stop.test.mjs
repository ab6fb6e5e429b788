// Stop is the user's word, in the ag-ui drop-in: the run is cancelled on the server (by
// the id its stream named, else found by its submit's tag), nothing more of it reaches
// the client, the AG-UI run ends cleanly where the client's text stopped, and the turn
// as the client got it shows in every later snapshot of the thread, whichever clone of
// the agent (one per runtime request) sends it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { withFinalAnswer } from "../../src/ag-ui/agent.js";
import { TextLedger } from "../../src/ag-ui/ledger.js";
import { shownMessages } from "../../src/ag-ui/messages.js";
import { REQUEST_ID_KEY } from "../../src/core/settle.js";
import { jsonResponse, mockServer } from "../fixtures.mjs";
import {
  FakeLangGraphAgent,
  fakeClient,
  feed,
  metadata,
  openAtFinish,
  token,
  until,
  within,
} from "./fake-agent.mjs";

const Agent = withFinalAnswer(FakeLangGraphAgent);
const THREAD = "thread-1";
const question = (id, content) => ({ id, role: "user", content });

/** The route: every run over, its answer the thread's last assistant message in `state`. */
function settledRoute(state) {
  return [
    /^GET \/api\/threads\/[^/]+\/final-answer$/,
    ({ pathname }) => {
      const threadId = pathname.split("/")[3];
      const answer = state(threadId).findLast((m) => m.role === "assistant");
      return jsonResponse(200, {
        thread_id: threadId,
        run_id: "server-run",
        complete: true,
        status: "success",
        content: answer.content,
        message_id: answer.id,
      });
    },
  ];
}

function agentOn(stream, { state = () => [], routes = [] } = {}) {
  const client = fakeClient(stream, state);
  const server = mockServer([...routes, settledRoute(state)]);
  const agent = new Agent({
    client,
    deploymentUrl: "http://langgraph.test",
    finalAnswer: { fetch: server.fetchImpl },
  });
  return { agent, client, server };
}

const texts = (events) => events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta);

test("a Stop mid-answer cancels the run the stream named, and ends the AG-UI run where the text stopped", async () => {
  const stream = feed();
  const { agent, client } = agentOn(stream);
  const run = agent.clone();
  const running = run.runAgent({ threadId: THREAD, runId: "ag-ui-run", messages: [question("q1", "Why?")] });
  stream.push(metadata("server-run"), token("m", "Hel"), token("m", "lo "));
  await until(() => texts(run.events).length === 2);

  run.abortRun();
  stream.push(token("m", "world"));
  await within(running, 1000, "the stopped run's end");

  assert.deepEqual(texts(run.events), ["Hel", "lo "], "nothing more of the run after Stop");
  assert.deepEqual(openAtFinish(run.events), [], "RUN_FINISHED with no text message open");
  const ending = run.events.map((e) => e.type).slice(-3);
  assert.deepEqual(ending, ["TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]);
  await until(() => client.cancels.length > 0);
  assert.deepEqual(client.cancels, [[THREAD, "server-run", true]], "cancelled once, by the server's id, waiting");
});

test("a Stop before the stream named the run cancels the run its submit's tag finds", async () => {
  const stream = feed();
  const { agent, client, server } = agentOn(stream, {
    routes: [
      [
        /^GET \/threads\/thread-1\/runs$/,
        () => jsonResponse(200, [{ run_id: "server-run", metadata: { [REQUEST_ID_KEY]: client.payloads[0].metadata[REQUEST_ID_KEY] } }]),
      ],
    ],
  });
  const run = agent.clone();
  const running = run.runAgent({ threadId: THREAD, runId: "ag-ui-run", messages: [question("q1", "Why?")] });
  stream.push(token("m", "Hel"));
  await until(() => texts(run.events).length === 1);

  run.abortRun();
  await within(running, 1000, "the stopped run's end");
  await until(() => client.cancels.length > 0);

  assert.deepEqual(client.cancels, [[THREAD, "server-run", true]], "not the AG-UI run's id");
  assert.ok(server.calls.some((call) => call.path === "/threads/thread-1/runs"), "looked up by its tag");
  assert.deepEqual(openAtFinish(run.events), []);
});

test("a Stop while the stream sends nothing (a cut being rejoined) ends the AG-UI run at once", async () => {
  // The SDK rejoining through a broken connection: no part comes, the cancel ends nothing.
  const stream = feed(null);
  const { agent } = agentOn(stream);
  const run = agent.clone();
  const running = run.runAgent({ threadId: THREAD, runId: "ag-ui-run", messages: [question("q1", "Why?")] });
  stream.push(metadata("server-run"), token("m", "Hel"));
  await until(() => texts(run.events).length === 1);

  run.abortRun();
  try {
    await within(running, 500, "the stopped run's end");
  } finally {
    stream.end();
  }
  assert.equal(run.events.at(-1).type, "RUN_FINISHED");
  assert.deepEqual(openAtFinish(run.events), []);
});

test("the stopped turn shows as the client got it in every later snapshot of its thread, on any clone", async () => {
  const checkpoint = new Map([
    // The cancel landed after the node wrote its whole answer: never shown whole.
    [THREAD, [question("q1", "Why?"), { id: "m", role: "assistant", content: "Hello world, in full." }]],
    ["thread-2", [question("x", "Other?"), { id: "mx", role: "assistant", content: "Other answer." }]],
  ]);
  const stream = feed();
  const { agent } = agentOn(stream, { state: (threadId) => checkpoint.get(threadId) });
  const first = agent.clone();
  const running = first.runAgent({ threadId: THREAD, runId: "r1", messages: [question("q1", "Why?")] });
  stream.push(metadata("server-run"), token("m", "Hel"), token("m", "lo "));
  await until(() => texts(first.events).length === 2);
  first.abortRun();
  await within(running, 1000, "the stopped run's end");

  const stopped = first.events.find((e) => e.type === "MESSAGES_SNAPSHOT").messages;
  assert.deepEqual(stopped.map((m) => [m.id, m.content]), [
    ["q1", "Why?"],
    ["m", "Hello "],
  ]);

  // The next turn, on another clone: the thread's state lacks the stopped answer.
  checkpoint.set(THREAD, [question("q1", "Why?"), question("q2", "And then?"), { id: "a2", role: "assistant", content: "Then this." }]);
  const next = feed("server-run-2");
  const second = agent.clone();
  second.client = fakeClient(next, (threadId) => checkpoint.get(threadId));
  const turn = second.runAgent({ threadId: THREAD, runId: "r2", messages: [question("q1", "Why?"), question("q2", "And then?")] });
  next.push(metadata("server-run-2"), token("a2", "Then this."));
  next.end();
  await within(turn, 1000, "the next run's end");
  const later = second.events.find((e) => e.type === "MESSAGES_SNAPSHOT").messages;
  assert.deepEqual(later.map((m) => [m.id, m.content]), [
    ["q1", "Why?"],
    ["m", "Hello "],
    ["q2", "And then?"],
    ["a2", "Then this."],
  ]);

  // Another thread's snapshots are its own.
  const other = feed();
  const third = agent.clone();
  third.client = fakeClient(other, (threadId) => checkpoint.get(threadId));
  const elsewhere = third.runAgent({ threadId: "thread-2", runId: "r3", messages: [question("x", "Other?")] });
  other.end();
  await within(elsewhere, 1000, "the other thread's run");
  const own = third.events.find((e) => e.type === "MESSAGES_SNAPSHOT").messages;
  assert.deepEqual(own.map((m) => m.id), ["x", "mx"]);
});

test("a stream still open but silent once the route says the run is over is left for the route's answer", async () => {
  // A stalled stream, or the SDK waiting out its backoff to rejoin a cut: no part comes.
  const stream = feed(null);
  const checkpoint = [question("q1", "Why?"), { id: "m", role: "assistant", content: "Hello world" }];
  const { agent, client } = agentOn(stream, { state: () => checkpoint });
  const run = agent.clone();
  const running = run.runAgent({ threadId: THREAD, runId: "ag-ui-run", messages: [question("q1", "Why?")] });
  stream.push(metadata("server-run"), token("m", "Hel"));
  try {
    await within(running, 1500, "the run's end after the route said it is over");
  } finally {
    stream.end();
  }
  assert.deepEqual(texts(run.events), ["Hel", "lo world"], "the rest of the answer, from the route");
  assert.deepEqual(openAtFinish(run.events), []);
  assert.equal(run.events.at(-1).type, "RUN_FINISHED");
  assert.ok(client.payloads[0].signal.aborted, "the SDK's request left is ended");
});

test("the turn kept is the text the client was sent, also of a message the agent's list lacks yet", () => {
  const ledger = new TextLedger();
  for (const event of [
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Hello" },
    { type: "TEXT_MESSAGE_END", messageId: "m1" },
    { type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m2", delta: "Wor" },
  ]) {
    ledger.record(event);
  }
  // The agent's list, a moment behind the events: m1's last delta and m2 not in it yet.
  const list = [question("q", "Why?"), { id: "t", role: "tool", content: "notes" }, { id: "m1", role: "assistant", content: "Hel" }];
  assert.deepEqual(shownMessages(list, ledger), [
    question("q", "Why?"),
    { id: "t", role: "tool", content: "notes" },
    { id: "m1", role: "assistant", content: "Hello" },
    { id: "m2", role: "assistant", content: "Wor" },
  ]);
});
