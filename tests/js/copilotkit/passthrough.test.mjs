// Without a cut, the drop-in sends what @ag-ui/langgraph's LangGraphAgent sends (tool
// calls, state snapshots, interrupts), and a run that fails ends on RUN_ERROR with the
// route's error and nothing after it. Run by tests/js/test_copilotkit.py:
//   EVOSCI_DIRECT_URL   a `langgraph dev` serving these graphs (PASSTHROUGH_GRAPHS)
//   EVOSCI_CK_GRAPHS    JSON {interrupt: graph id, failing: graph id}

import assert from "node:assert/strict";
import { test } from "node:test";

import { ask, runtimeAgent } from "./client.mjs";
import { AGENT, startRuntime } from "./runtime.mjs";

const DIRECT = process.env.EVOSCI_DIRECT_URL;
const GRAPHS = JSON.parse(process.env.EVOSCI_CK_GRAPHS || "{}");

/** One turn on a new thread of `graphId`, through a runtime serving `agent`. */
async function once(agent, graphId, question) {
  const runtime = await startRuntime({ deploymentUrl: DIRECT, agent, graphId });
  try {
    const response = await fetch(`${DIRECT}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const { thread_id: threadId } = await response.json();
    const outcome = await ask(runtimeAgent(runtime.url, AGENT, threadId), question);
    return { threadId, ...outcome };
  } finally {
    await runtime.close();
  }
}

/** What the client was sent, as it would compare: event types and their names, ids aside. */
function shape(events) {
  return events
    .filter((event) => event.type !== "RAW")
    .map((event) => {
      if (event.type === "TOOL_CALL_START") return `${event.type}:${event.toolCallName}`;
      if (event.type === "STEP_STARTED" || event.type === "STEP_FINISHED") {
        return `${event.type}:${event.stepName}`;
      }
      if (event.type === "CUSTOM") return `${event.type}:${event.name}`;
      return event.type;
    });
}

async function routeAnswer(threadId) {
  const response = await fetch(`${DIRECT}/api/threads/${threadId}/final-answer?wait=30`);
  assert.equal(response.status, 200);
  return response.json();
}

test("the project's agent (a tool call, then the answer): the same events", async () => {
  const bare = await once("bare", AGENT, "What is a control group?");
  const adopted = await once("adopted", AGENT, "What is a control group?");
  assert.ok(bare.finished && adopted.finished);
  assert.ok(shape(bare.events).some((type) => type.startsWith("TOOL_CALL_START:")));
  assert.deepEqual(shape(adopted.events), shape(bare.events));
  assert.equal(adopted.text, (await routeAnswer(adopted.threadId)).content);
});

test("a run that stops at an interrupt: the same events, the interrupt included", async () => {
  const bare = await once("bare", GRAPHS.interrupt, "Plan the experiment.");
  const adopted = await once("adopted", GRAPHS.interrupt, "Plan the experiment.");
  assert.ok(shape(bare.events).includes("CUSTOM:on_interrupt"), JSON.stringify(shape(bare.events)));
  assert.deepEqual(shape(adopted.events), shape(bare.events));
  assert.equal((await routeAnswer(adopted.threadId)).status, "interrupted");
});

test("a run that fails: RUN_ERROR with the route's error, nothing after it", async () => {
  const adopted = await once("adopted", GRAPHS.failing, "Find sources.");
  const route = await routeAnswer(adopted.threadId);
  assert.equal(route.status, "error");
  const types = adopted.events.map((event) => event.type);
  assert.equal(types.at(-1), "RUN_ERROR", JSON.stringify(types));
  assert.equal(types.filter((type) => type === "RUN_ERROR").length, 1);
  assert.ok(!types.includes("RUN_FINISHED"));
  assert.equal(adopted.runError.message, route.error.message);
  assert.equal(adopted.runError.code, route.error.code);
  assert.equal(adopted.error, null, "the client accepted every event");
});
