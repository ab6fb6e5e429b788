// The ag-ui drop-in's ending, once the route said the run is over: the stream has
// STREAM_GRACE_MS to end by itself, however much it still brings (a busy runtime reading
// its backlog), and LangGraphAgent's ending reads the thread's state the drop-in read
// meanwhile instead of asking the server again, twice.

import assert from "node:assert/strict";
import { test } from "node:test";

import { withFinalAnswer } from "../../src/ag-ui/agent.js";
import { STREAM_GRACE_MS } from "../../src/core/follow.js";
import { jsonResponse, mockServer } from "../fixtures.mjs";
import { FakeLangGraphAgent, fakeClient, feed, metadata, openAtFinish, token, within } from "./fake-agent.mjs";

const THREAD = "thread-1";
const ANSWER = "Hello world, this is the whole answer.";
const question = { id: "q1", role: "user", content: "Why?" };

function checkpoint() {
  return [question, { id: "m", role: "assistant", content: ANSWER }];
}

/** The route: the run over at once, its answer the whole text. */
const settled = [
  /^GET \/api\/threads\/[^/]+\/final-answer$/,
  () =>
    jsonResponse(200, {
      thread_id: THREAD,
      run_id: "server-run",
      complete: true,
      status: "success",
      content: ANSWER,
      message_id: "m",
    }),
];

function agentOn(stream) {
  const client = fakeClient(stream, checkpoint);
  const reads = [];
  const read = client.threads.getState;
  client.threads.getState = async (threadId) => {
    reads.push({ threadId, at: Date.now() });
    return read(threadId);
  };
  const server = mockServer([settled]);
  const Agent = withFinalAnswer(FakeLangGraphAgent);
  const agent = new Agent({ client, deploymentUrl: "http://langgraph.test", finalAnswer: { fetch: server.fetchImpl } });
  return { agent: agent.clone(), client, reads };
}

test("a stream still bringing parts once the route said the run is over is left STREAM_GRACE_MS later", async () => {
  const stream = feed(null);
  const { agent, client } = agentOn(stream);
  const running = agent.runAgent({ threadId: THREAD, runId: "ag-ui-run", messages: [question] });
  stream.push(metadata("server-run"), token("m", "Hel"));
  // A backlog that never ends: a part every 20 ms, each of them a repeat of nothing new.
  const backlog = setInterval(() => stream.push({ event: "updates", data: {} }), 20);
  const began = Date.now();
  try {
    await within(running, STREAM_GRACE_MS + 1000, "the run's end while the stream still brought parts");
  } finally {
    clearInterval(backlog);
    stream.end();
  }
  assert.ok(Date.now() - began >= STREAM_GRACE_MS, "the stream had its grace");
  assert.equal(agent.events.at(-1).type, "RUN_FINISHED");
  assert.deepEqual(openAtFinish(agent.events), []);
  assert.equal(agent.messages.find((m) => m.id === "m").content, ANSWER);
  assert.ok(client.payloads[0].signal.aborted, "the SDK's request left is ended");
});

test("the ending's two reads of the thread's state are the one read made once the route said the run is over", async () => {
  const stream = feed(null);
  const { agent, client, reads } = agentOn(stream);
  const running = agent.runAgent({ threadId: THREAD, runId: "ag-ui-run", messages: [question] });
  stream.push(metadata("server-run"), token("m", "Hel"));
  try {
    await within(running, STREAM_GRACE_MS + 1000, "the run's end");
  } finally {
    stream.end();
  }
  const finished = Date.now();
  assert.deepEqual(reads.map((r) => r.threadId), [THREAD], "one read, though the ending read twice");
  assert.ok(finished - reads[0].at >= STREAM_GRACE_MS / 2, "read while the stream had its grace");
  const snapshots = agent.events.filter((e) => e.type === "MESSAGES_SNAPSHOT");
  assert.equal(snapshots.length, 1);
  assert.equal(snapshots[0].messages.at(-1).content, ANSWER);
  assert.equal(agent.client, client, "the agent's own client again, once the ending is over");
});
