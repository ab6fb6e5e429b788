// A thread stream whose first WebSocket never opened, on @langchain/react 1.1.0's own
// StreamController (its pinned @langchain/langgraph-sdk) behind the drop-in's binding,
// with scripted sockets and no server: the SDK keeps that first open's failure for the
// stream's life, so without the binding's help no submit on the thread sends again.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { RecoveryBinding } from "../../src/controller/binding.js";

// The SDK @langchain/react resolves (its own pinned copy), not the lockfile's top-level one.
const reactPackage = createRequire(import.meta.url).resolve("@langchain/react/package.json");
const sdkDir = dirname(createRequire(reactPackage).resolve("@langchain/langgraph-sdk/package.json"));
const { StreamController } = await import(pathToFileURL(join(sdkDir, "dist/stream/index.js")).href);
const { Client } = await import(pathToFileURL(join(sdkDir, "dist/client/index.js")).href);

const API = "http://127.0.0.1:9";
const THREAD = "t-1";

/** Sockets as the server (through a proxy that cuts the first) answers them. */
function scriptedSockets({ failFirst }) {
  const sockets = [];
  const commands = [];
  class ScriptedSocket extends EventTarget {
    constructor(url) {
      super();
      this.url = url;
      this.readyState = 0;
      this.n = sockets.push(this);
      setTimeout(() => {
        if (this.readyState !== 0) return;
        if (failFirst && this.n === 1) {
          // The handshake cut before its answer: error, then close.
          this.readyState = 3;
          this.dispatchEvent(new Event("error"));
          this.dispatchEvent(Object.assign(new Event("close"), { code: 1006 }));
          return;
        }
        this.readyState = 1;
        this.dispatchEvent(new Event("open"));
      }, 5);
    }

    send(data) {
      const command = JSON.parse(data);
      commands.push({ socket: this.n, method: command.method });
      const result =
        command.method === "run.start"
          ? { run_id: "run-1" }
          : command.method === "subscription.subscribe"
            ? { subscription_id: `sub-${commands.length}` }
            : {};
      setTimeout(() => {
        this.answer({ type: "success", id: command.id, result });
        if (command.method !== "run.start") return;
        for (const [seq, event] of [[1, "running"], [2, "completed"]]) {
          this.answer({
            type: "event",
            event_id: `e-${seq}`,
            seq,
            method: "lifecycle",
            params: { namespace: [], timestamp: Date.now(), data: { event } },
          });
        }
      }, 1);
    }

    answer(payload) {
      if (this.readyState === 1) this.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(payload) }));
    }

    close() {
      if (this.readyState === 3) return;
      this.readyState = 3;
      setTimeout(() => this.dispatchEvent(Object.assign(new Event("close"), { code: 1000 })), 1);
    }
  }
  return { sockets, commands, factory: (url) => new ScriptedSocket(url) };
}

/** The thread's state, idle (its last run over), and an empty history. */
async function serverFetch(input) {
  const url = String(input instanceof Request ? input.url : input);
  const json = (body) => new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
  if (url.endsWith(`/threads/${THREAD}/state`)) {
    return json({ values: { messages: [] }, next: [], tasks: [], checkpoint: { checkpoint_id: "c" }, metadata: {} });
  }
  if (url.includes(`/threads/${THREAD}/history`)) return json([]);
  return new Response("not found", { status: 404 });
}

/** The drop-in's binding on a real controller, as langchain-react/use-stream.js wires them. */
async function dropIn(factory) {
  const binding = new RecoveryBinding(() => {});
  const options = binding.streamOptions({
    apiUrl: API,
    assistantId: "agent",
    transport: "websocket",
    threadId: THREAD,
    webSocketFactory: factory,
    fetch: serverFetch,
    reconnectDelayMs: () => 10,
  });
  const client = new Client({ apiUrl: API, callerOptions: { fetch: serverFetch, maxRetries: 0 } });
  const controller = new StreamController({ ...options, client });
  await controller.hydrationPromise;
  binding.follower.settle = async () => null; // the route is not asked here
  const view = () => {
    const snapshot = controller.rootStore.getSnapshot();
    binding.view({ ...snapshot, client }, controller, API);
  };
  view();
  const submit = binding.submit((input, submitOptions) => controller.submit(input, submitOptions));
  return { binding, controller, submit };
}

const question = { messages: [{ type: "human", content: "which control group fits?" }] };

test("a submit whose thread stream never opened its socket is sent on a fresh stream", async () => {
  const { commands, sockets, factory } = scriptedSockets({ failFirst: true });
  const { controller, submit } = await dropIn(factory);
  const errors = [];
  await submit(question, { onError: (error) => errors.push(error) });
  const starts = commands.filter((c) => c.method === "run.start");
  assert.equal(starts.length, 1, `one run.start sent; sockets ${sockets.length}, commands ${JSON.stringify(commands)}`);
  assert.notEqual(starts[0].socket, 1, "not on the socket that never opened");
  assert.deepEqual(errors, [], "the app is not told of a submit that was sent after all");
  assert.equal(controller.rootStore.getSnapshot().error, undefined);
  // And the next question goes out too.
  await submit(question);
  assert.equal(commands.filter((c) => c.method === "run.start").length, 2);
  await controller.dispose();
});

test("a submit whose socket opened is sent once, as before", async () => {
  const { commands, factory } = scriptedSockets({ failFirst: false });
  const { controller, submit } = await dropIn(factory);
  await submit(question);
  assert.deepEqual(
    commands.filter((c) => c.method === "run.start"),
    [{ socket: 1, method: "run.start" }],
  );
  assert.equal(controller.rootStore.getSnapshot().error, undefined);
  await controller.dispose();
});
