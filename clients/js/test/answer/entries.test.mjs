// One input, one answer from both entries: the client's answer from a thread state
// (`answerFromState`, F2a) and the route (its handler, reading a fake server's API), over
// the shared cases in test/fixtures/answer/ (Python reads them too: tests/answer/).

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";

import { answerFromState } from "../../src/core/index.js";
import { handleFinalAnswer } from "../../src/route/routes.js";

const DIR = new URL("../fixtures/answer/", import.meta.url);
const CASES = readdirSync(DIR)
  .filter((name) => name.endsWith(".json"))
  .sort()
  .map((name) => ({ name: name.slice(0, -".json".length), ...JSON.parse(readFileSync(new URL(name, DIR), "utf8")) }));

function notFound() {
  return Object.assign(new Error("not found"), { status: 404 });
}

/** A langgraph SDK client's reads, answered from the case: its thread, state and runs. */
function fakeClient(fixture) {
  const runs = Object.entries(fixture.runs).map(([run_id, status], at) => ({
    run_id,
    thread_id: fixture.thread_id,
    status,
    created_at: `2026-12-05T09:00:0${at}+00:00`,
  }));
  const state = () => structuredClone(fixture.state);
  return {
    threads: {
      search: async ({ ids }) =>
        ids.includes(fixture.thread_id) ? [{ thread_id: fixture.thread_id, status: fixture.thread_status }] : [],
      getState: async () => state(),
      getHistory: async (_threadId, { metadata }) =>
        fixture.state.metadata.run_id === metadata.run_id ? [state()] : [],
    },
    runs: {
      list: async (_threadId, { status, limit }) =>
        runs.filter((run) => status == null || run.status === status).slice(0, limit),
      get: async (_threadId, runId) => {
        const run = runs.find((candidate) => candidate.run_id === runId);
        if (!run) throw notFound();
        return run;
      },
      join: async () => undefined,
    },
  };
}

async function routeAnswer(fixture, includeReasoning) {
  const query = new URLSearchParams();
  if (fixture.run_id != null) query.set("run_id", fixture.run_id);
  if (includeReasoning) query.set("include_reasoning", "true");
  const url = `http://langgraph.test/api/threads/${fixture.thread_id}/final-answer?${query}`;
  const response = await handleFinalAnswer(new Request(url), fixture.thread_id, { client: fakeClient(fixture) });
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}

function clientAnswer(fixture, includeReasoning) {
  const state = structuredClone(fixture.state);
  return answerFromState(fixture.thread_id, state, { threadStatus: fixture.thread_status, includeReasoning });
}

function withoutReasoning(answer) {
  const { reasoning: _reasoning, ...body } = answer;
  return body;
}

/** The same body, field for field and in the documented order. */
function assertAnswer(actual, expected, entry) {
  assert.deepEqual(actual, expected, entry);
  assert.deepEqual(Object.keys(actual), Object.keys(expected), `${entry}: field order`);
}

test("the shared cases are there, most of them for both entries", () => {
  assert.ok(CASES.length >= 10, `${CASES.length} cases`);
  assert.ok(CASES.filter((fixture) => !fixture.route_only).length >= 10);
});

for (const fixture of CASES) {
  test(`${fixture.name}: ${fixture.about}`, async () => {
    assertAnswer(await routeAnswer(fixture, true), fixture.answer, "route, include_reasoning");
    assertAnswer(await routeAnswer(fixture, false), withoutReasoning(fixture.answer), "route");
    if (fixture.route_only) return;
    assert.equal(fixture.run_id, null, "the client entry answers the thread's latest turn");
    assertAnswer(clientAnswer(fixture, true), fixture.answer, "client, includeReasoning");
    assertAnswer(clientAnswer(fixture, false), withoutReasoning(fixture.answer), "client");
  });
}
