// A real CopilotRuntime, serving @ag-ui/langgraph's LangGraphAgent (bare) and then the
// drop-in (adopted; and @copilotkit/runtime/langgraph's agent with it mixed in), talking
// to a real `langgraph dev` through fault proxies; a real AG-UI client (client.mjs)
// reading the runtime. Run by tests/js/test_copilotkit.py:
//   EVOSCI_DIRECT_URL   the langgraph server itself (threads, runs, the route)
//   EVOSCI_CK_CUTS      JSON {cut: {turns, proxies: {agent class: proxy URL}}}, the
//                       classes being runtime.mjs's AGENTS
//   EVOSCI_CK_REPORT    where to write what each client ended with (JSON)
// Adopted, every turn must end finished on the route's exact text, one run per turn.
// Bare is measured, not judged here: the harness reports it.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, describe, test } from "node:test";

import { ask, runtimeAgent } from "./client.mjs";
import { AGENT, startRuntime } from "./runtime.mjs";

const DIRECT = process.env.EVOSCI_DIRECT_URL;
const CUTS = JSON.parse(process.env.EVOSCI_CK_CUTS || "{}");
const REPORT = process.env.EVOSCI_CK_REPORT;
const QUESTIONS = ["What is a control group?", "And how large should it be?"];
const report = {};
const CONCURRENCY = 4;

async function json(path, init = {}) {
  const response = await fetch(`${DIRECT}${path}`, {
    ...init,
    headers: { "content-type": "application/json", ...(init.headers ?? {}) },
  });
  assert.ok(response.ok, `${path}: HTTP ${response.status}`);
  return response.json();
}

/** The route's answer for the thread's latest turn, as text (waiting for it to settle). */
async function routeText(threadId) {
  const response = await fetch(`${DIRECT}/api/threads/${threadId}/final-answer?format=text&wait=30`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-answer-complete"), "true");
  return response.text();
}

/** Every turn of one conversation through `proxyUrl`: what the client ended with. */
async function converse(proxyUrl, agentClass, turns) {
  const runtime = await startRuntime({ deploymentUrl: proxyUrl, agent: agentClass });
  try {
    const { thread_id: threadId } = await json("/threads", { method: "POST", body: "{}" });
    const agent = runtimeAgent(runtime.url, AGENT, threadId);
    const outcomes = [];
    for (const question of QUESTIONS.slice(0, turns)) {
      const outcome = await ask(agent, question);
      const route = await routeText(threadId);
      outcomes.push({
        finished: outcome.finished,
        runError: outcome.runError ? outcome.runError.message : null,
        clientError: outcome.error,
        exact: outcome.text === route,
        shown: outcome.text.length,
        route: route.length,
      });
    }
    const runs = await json(`/threads/${threadId}/runs?limit=50`);
    return { threadId, outcomes, runs: runs.length };
  } finally {
    await runtime.close();
  }
}

after(() => {
  if (REPORT) writeFileSync(REPORT, JSON.stringify(report, null, 2));
});

// Each case has its own thread, proxy and runtime: they run side by side, as a
// deployment's many conversations do (one after another they took ~90 s).
describe("every cut", { concurrency: CONCURRENCY }, () => {
  for (const [cut, { turns, proxies }] of Object.entries(CUTS)) {
    for (const [agentClass, proxyUrl] of Object.entries(proxies)) {
      if (agentClass === "bare") {
        test(`bare LangGraphAgent, ${cut}: measured`, async () => {
          report[cut] = { ...report[cut], bare: await converse(proxyUrl, agentClass, turns) };
        });
        continue;
      }
      test(`${agentClass} LangGraphAgent, ${cut}: every turn ends on the route's answer, once`, async () => {
        const result = await converse(proxyUrl, agentClass, turns);
        report[cut] = { ...report[cut], [agentClass]: result };
        for (const [turn, outcome] of result.outcomes.entries()) {
          const context = `turn ${turn + 1}: ${JSON.stringify(outcome)}`;
          assert.equal(outcome.clientError, null, context);
          assert.equal(outcome.runError, null, context);
          assert.ok(outcome.finished, context);
          assert.ok(outcome.exact, context);
        }
        assert.equal(result.runs, turns, "one run per request");
      });
    }
  }
});
