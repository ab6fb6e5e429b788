// RecoveryBinding: what the @langchain/react and @langchain/svelte drop-ins hand their
// framework's `useStream`, what they show in its place, and their `submit`. The real
// controllers under real servers are the browser tests'.

import assert from "node:assert/strict";
import { test } from "node:test";

import { RecoveryBinding } from "../../src/controller/binding.js";
import { IDLE_RECOVERY } from "../../src/core/follow.js";

function fakeController(snapshot) {
  return { rootStore: { getSnapshot: () => snapshot } };
}

test("the options keep the app's, with exactly-once transports and callbacks told first", () => {
  const binding = new RecoveryBinding(() => {});
  const seen = [];
  const options = binding.streamOptions({
    apiUrl: "http://127.0.0.1:9",
    assistantId: "a",
    transport: "websocket",
    recovery: { maxWaitMs: 5 },
    onThreadId: (id) => seen.push(["thread", id]),
    onCreated: (meta) => seen.push(["created", meta.runId]),
  });
  assert.equal(options.assistantId, "a");
  assert.equal(options.transport, "websocket");
  assert.ok(!("recovery" in options));
  assert.equal(typeof options.fetch, "function");
  assert.equal(typeof options.webSocketFactory, "function");
  options.onThreadId("t");
  assert.equal(binding.follower.threadId, "t");
  options.onCreated({ runId: "r" });
  options.onReconnect({});
  assert.deepEqual(seen, [
    ["thread", "t"],
    ["created", "r"],
  ]);
  // The same transports while the app's own fetch stays the same.
  assert.equal(binding.streamOptions({ transport: "websocket" }).fetch, options.fetch);
});

test("a transport the app built itself is left alone", () => {
  const binding = new RecoveryBinding(() => {});
  const transport = { open() {} };
  const options = binding.streamOptions({ transport });
  assert.equal(options.transport, transport);
  assert.ok(!("fetch" in options) && !("webSocketFactory" in options));
});

test("the view is upstream's until the route says more; a settled run is not loading", () => {
  const binding = new RecoveryBinding(() => {});
  binding.streamOptions({ apiUrl: "http://127.0.0.1:9" });
  const messages = [{ id: "h", type: "human", content: "q" }];
  const base = { messages, values: { messages }, isLoading: true, isThreadLoading: false, error: undefined };
  const view = binding.view(base, fakeController({ isLoading: true, messages }), undefined);
  assert.equal(view.messages, messages);
  assert.equal(view.values, base.values);
  assert.equal(view.isLoading, true);
  assert.deepEqual(view.recovery, IDLE_RECOVERY);
  assert.equal(binding.follower.config.apiUrl, "http://127.0.0.1:9");

  const run = binding.follower.begin({ requestId: "q" });
  binding.follower.final = { run, answer: { complete: true, status: "success", message_id: null, content: "" } };
  assert.equal(binding.view(base, fakeController({ isLoading: true, messages }), undefined).isLoading, false);
});

test("observe tells the follower of a thread shown anew and of loading changes, once each", () => {
  const binding = new RecoveryBinding(() => {});
  const calls = [];
  binding.follower.threadShown = (id) => calls.push(["shown", id]);
  binding.follower.loadingChanged = (loading) => calls.push(["loading", loading]);
  binding.observe({ threadId: null, isLoading: false });
  binding.observe({ threadId: "t", isLoading: true });
  binding.observe({ threadId: "t", isLoading: true });
  binding.observe({ threadId: "t", isLoading: false });
  assert.deepEqual(calls, [
    ["shown", null],
    ["shown", "t"],
    ["loading", true],
    ["loading", false],
  ]);
});

test("a submit is tagged with a request id, the app's metadata kept", async () => {
  const binding = new RecoveryBinding(() => {});
  binding.follower.submitReturned = async () => {};
  const sent = [];
  const submit = binding.submit(async (input, options) => {
    sent.push([input, options]);
    return "ok";
  });
  assert.equal(await submit({ messages: [] }, { metadata: { app: 1 } }), "ok");
  const [[, options]] = sent;
  assert.equal(options.metadata.app, 1);
  assert.match(options.metadata.recovery_request_id, /^[0-9a-f-]{36}$/);
  assert.equal(binding.follower.run.requestId, options.metadata.recovery_request_id);
});
