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

test("Stop keeps what the turn showed through a rebind and a next question, and cancels once", async () => {
  const binding = new RecoveryBinding(() => {});
  binding.streamOptions({ apiUrl: "http://127.0.0.1:9" });
  const cancels = [];
  const client = { runs: { cancel: async (threadId, runId, wait) => cancels.push([threadId, runId, wait]) } };
  const shownAtStop = [
    { id: "h1", type: "human", content: "q" },
    { id: "a1", type: "ai", content: "The partial ans" },
  ];
  const base = (messages, isLoading) => ({ messages, values: { messages }, isLoading, isThreadLoading: false, error: undefined, client });
  binding.follower.threadNamed("t1");
  const run = binding.follower.begin({ requestId: "req" });
  run.runId = "run-1";
  binding.view(base(shownAtStop, true), fakeController({ isLoading: true, messages: shownAtStop }), undefined);
  const baseStops = [];
  const stop = binding.stop(async (options) => baseStops.push(options));
  await stop();
  assert.deepEqual(baseStops, [{ cancel: false }], "the controller only disconnects: the drop-in cancels");
  const idle = binding.view(base(shownAtStop, true), fakeController({ isLoading: true, messages: shownAtStop }), undefined);
  assert.equal(idle.isLoading, false);
  assert.equal(idle.recovery.status, "stopped");
  await binding.follower.beforeSubmit();
  assert.deepEqual(cancels, [["t1", "run-1", true]]);
  // Its next run.start goes over HTTP (a socket would resume the cancelled run), once.
  assert.equal(typeof binding.startsOverHttp("http://127.0.0.1:9/threads/t1").fetch, "function");
  assert.equal(binding.startsOverHttp("http://127.0.0.1:9/threads/other"), null);
  // Rebound to the thread's state (no answer message: the cancelled node wrote none), then
  // a next question streams: the stopped turn still shows what it showed at Stop.
  const later = [{ id: "h1", type: "human", content: "q" }, { id: "h2", type: "human", content: "next" }];
  const shown = binding.view(base(later, true), fakeController({ isLoading: true, messages: later }), undefined).messages;
  assert.deepEqual(shown.map((m) => m.id), ["h1", "a1", "h2"]);
  assert.equal(shown[1].content, "The partial ans");
  binding.follower.settle = async () => null; // the route is not asked here
  binding.follower.begin({ requestId: "req-2" });
  binding.follower.runCreated("run-2");
  assert.equal(binding.startsOverHttp("http://127.0.0.1:9/threads/t1"), null, "a run since");
  binding.follower.final = { run: binding.follower.run, answer: { complete: true, status: "success" } };
  // Stop again, with nothing running: passed through, cancelling as the controller does.
  await stop();
  assert.deepEqual(baseStops, [{ cancel: false }, undefined]);
  // A disconnect is not a Stop.
  const other = new RecoveryBinding(() => {});
  other.follower.threadNamed("t2");
  other.follower.begin({ requestId: "r2" });
  const passed = [];
  await other.stop(async (options) => passed.push(options))({ cancel: false });
  assert.deepEqual(passed, [{ cancel: false }]);
  assert.notEqual(other.follower.recovery.status, "stopped");
});

test("a submit refused before it was sent is sent again on a rebound controller; other errors reach the app", async () => {
  const binding = new RecoveryBinding(() => {});
  binding.streamOptions({ apiUrl: "http://127.0.0.1:9" });
  binding.follower.submitReturned = async () => {};
  const rebinds = [];
  const controller = fakeController({ threadId: "t1", isLoading: false, messages: [] });
  binding.view({ messages: [], values: {}, isLoading: false }, controller, undefined);
  binding.follower.config.refresh = async (threadId) => rebinds.push(threadId);
  const outcomes = [new Error("Failed to open protocol WebSocket."), null, new Error("Run failed: boom"), null];
  const sent = [];
  const submit = binding.submit(async (input, options) => {
    sent.push(options.metadata.recovery_request_id);
    const error = outcomes.shift();
    if (error) options.onError?.(error); // the controller reports, it does not reject
    return "done";
  });
  const appErrors = [];
  assert.equal(await submit({ messages: [] }, { onError: (error) => appErrors.push(error.message) }), "done");
  assert.deepEqual(rebinds, ["t1"]);
  assert.equal(sent.length, 2);
  assert.equal(sent[0], sent[1], "the same request id: exactly-once still holds");
  assert.deepEqual(appErrors, []);
  // An error the run itself ended with is the app's, and nothing is sent again.
  await submit({ messages: [] }, { onError: (error) => appErrors.push(error.message) });
  assert.deepEqual(appErrors, ["Run failed: boom"]);
  assert.equal(sent.length, 3);
  assert.deepEqual(rebinds, ["t1"]);
});
