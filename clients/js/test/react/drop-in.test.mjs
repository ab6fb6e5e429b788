// useStreamWithRecovery over a stand-in for the SDK's hook (what an app's
// `vi.mock("@langchain/langgraph-sdk/react")` makes, once the app's test runner loads the
// drop-in through its own module graph): an app's tests must not tell the drop-in from
// the hook it wraps while nothing is recovered. One server render per case (no effects:
// what the hook hands the SDK and what it returns, on the first render).

import assert from "node:assert/strict";
import { register } from "node:module";
import { test } from "node:test";

import { Client } from "@langchain/langgraph-sdk";
import { createElement } from "react";
import { renderToString } from "react-dom/server";

register("./stand-in-hooks.mjs", import.meta.url);
const { standIn } = await import("./stand-in.mjs");
const { useStreamWithRecovery } = await import("../../src/react/use-stream.js");

function render(options) {
  let returned;
  function Page() {
    returned = useStreamWithRecovery(options);
    return null;
  }
  standIn.calls.length = 0;
  renderToString(createElement(Page));
  return { returned, given: standIn.calls.at(-1) };
}

function mockResult() {
  // Shaped as a WebUI test's mock: `messages` apart from `values`, which has none.
  return {
    values: { todos: [{ content: "read", status: "pending" }] },
    messages: [
      { type: "human", id: "h1", content: "q" },
      { type: "ai", id: "a1", content: "The answer." },
    ],
    isLoading: false,
    error: undefined,
    interrupt: undefined,
    submit: async () => {},
    stop: async () => {},
    joinStream: async () => {},
  };
}

test("a stand-in client (no server named): the wrapped hook gets the app's options and its fields reach the app as they are", () => {
  const getState = async () => ({ values: {} });
  const client = { threads: { getState, get: async () => ({}) } };
  const onCreated = () => {};
  const options = { assistantId: "a", client, threadId: null, fetchStateHistory: true, onCreated };
  standIn.result = mockResult();
  const { returned, given } = render({ ...options, recovery: { maxWaitMs: 1000 } });
  assert.deepEqual(Object.keys(given).sort(), Object.keys(options).sort(), "no option added or removed");
  assert.equal(given.client, client);
  assert.equal(given.onCreated, onCreated);
  assert.equal(client.threads.getState, getState, "the app's client is left as it is");
  for (const field of ["messages", "values", "submit", "stop", "joinStream", "interrupt", "isLoading", "error"]) {
    assert.equal(returned[field], standIn.result[field], field);
  }
  assert.equal(returned.recovery.status, "idle");
});

test("the SDK's client: recovery is on, and while nothing is recovered messages and values are the SDK's own", () => {
  const client = new Client({ apiUrl: "http://127.0.0.1:9" });
  standIn.result = mockResult();
  const { returned, given } = render({ assistantId: "a", client, threadId: null });
  assert.equal(given.client, client);
  assert.ok("thread" in given, "the hook keeps the thread's history for the SDK");
  assert.notEqual(returned.submit, standIn.result.submit, "submits are tagged for exactly-once");
  assert.equal(returned.messages, standIn.result.messages);
  assert.equal(returned.values, standIn.result.values);
  assert.equal(returned.recovery.status, "idle");
});
