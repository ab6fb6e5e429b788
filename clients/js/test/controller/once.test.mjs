// exactlyOnceCommandsFetch (the @langchain/react drop-in's fetch) against fetch()
// stand-ins: a tagged run.start whose answer never came is answered with the run it
// made, re-sent only when no run exists and then refusing to queue; anything else
// passes through.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  exactlyOnceCommandsFetch,
  exactlyOnceWebSocketFactory,
  rejectingBody,
  runStartOf,
  socketRunStart,
  socketThreadUrl,
  startedResponse,
} from "../../src/controller/once.js";
import { fakeClock, jsonResponse, mockServer } from "../fixtures.mjs";

const COMMANDS_URL = "http://x/threads/t/commands";
const REQUEST = "req-1";

function command(method = "run.start", metadata = { recovery_request_id: REQUEST }, extra = {}) {
  return { id: 7, method, params: { assistant_id: "A", input: { messages: [] }, metadata, ...extra } };
}

function commandInit(body = command()) {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

const tagged = (runId, requestId = REQUEST) => ({ run_id: runId, metadata: { recovery_request_id: requestId } });
const posts = (calls) => calls.filter((c) => c.method === "POST");
const started = (runId) => () => jsonResponse(200, { type: "success", id: 7, result: { run_id: runId } });
const networkError = () => {
  throw new TypeError("Failed to fetch");
};

test("a tagged run.start is recognised by its path, method and request id; nothing else is", () => {
  const start = runStartOf(COMMANDS_URL, commandInit());
  assert.equal(start.requestId, REQUEST);
  assert.equal(start.threadUrl, "http://x/threads/t");
  assert.equal(runStartOf("http://x/api/threads/t/commands", commandInit()).threadUrl, "http://x/api/threads/t");
  assert.equal(runStartOf(COMMANDS_URL, commandInit(command("run.start", {}))), null, "no request id");
  assert.equal(runStartOf(COMMANDS_URL, commandInit(command("input.respond"))), null);
  assert.equal(runStartOf("http://x/threads/t/stream/events", commandInit()), null);
  assert.equal(runStartOf(COMMANDS_URL, { method: "POST", body: "{" }), null);
  assert.equal(runStartOf(COMMANDS_URL, { ...commandInit(), method: "GET" }), null);
  assert.equal(start.strategy, null);
  const rejecting = command("run.start", { recovery_request_id: REQUEST }, { multitaskStrategy: "reject" });
  assert.equal(runStartOf(COMMANDS_URL, commandInit(rejecting)).strategy, "reject");
});

test("the joined answer is the protocol's success envelope; the re-send refuses to queue", async () => {
  const response = startedResponse(command(), "run-1");
  assert.deepEqual(await response.json(), { type: "success", id: 7, result: { run_id: "run-1" } });
  const body = JSON.parse(rejectingBody(command()));
  assert.equal(body.params.multitaskStrategy, "reject");
  assert.equal(body.params.metadata.recovery_request_id, REQUEST);
  assert.equal(body.id, 7);
});

test("a run.start cut before its answer is answered with the run it made, never re-sent", async () => {
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/commands$/, networkError],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("other", "req-0"), tagged("run-1")])],
  ]);
  const seen = [];
  const once = exactlyOnceCommandsFetch(fetchImpl, { onResubmit: (info) => seen.push(info) });
  const response = await once(COMMANDS_URL, commandInit());
  assert.deepEqual(await response.json(), { type: "success", id: 7, result: { run_id: "run-1" } });
  assert.equal(posts(calls).length, 1);
  assert.deepEqual(seen.map((s) => [s.action, s.runId]), [["joined", "run-1"]]);
});

test("a command that never made a run (no thread yet) is re-sent once, refusing to queue", async () => {
  const clock = fakeClock();
  let sends = 0;
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/commands$/, () => (++sends === 1 ? networkError() : started("run-2")())],
    // 404: the binding made the thread id; the thread exists only once a run.start lands.
  ]);
  const once = exactlyOnceCommandsFetch(fetchImpl, { sleep: clock.sleep, clock: clock.clock });
  const response = await once(COMMANDS_URL, commandInit());
  assert.equal((await response.json()).result.run_id, "run-2");
  const resent = posts(calls).map((c) => JSON.parse(c.body).params.multitaskStrategy);
  assert.deepEqual(resent, [undefined, "reject"]);
  assert.ok(calls.filter((c) => c.method === "GET").length >= 2, "looked up over the window");
});

test("a first command that lands late is found after the refusal, and joined", async () => {
  const clock = fakeClock();
  let landed = false;
  const { fetchImpl, calls } = mockServer([
    [
      /^POST \/threads\/t\/commands$/,
      ({ init }) => {
        if (!JSON.parse(init.body).params.multitaskStrategy) networkError();
        landed = true; // the first command reached the server meanwhile
        return jsonResponse(200, { type: "error", id: 7, error: "unknown_error", message: "busy" });
      },
    ],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, landed ? [tagged("run-1")] : [])],
  ]);
  const once = exactlyOnceCommandsFetch(fetchImpl, { sleep: clock.sleep, clock: clock.clock });
  const response = await once(COMMANDS_URL, commandInit());
  assert.equal((await response.json()).result.run_id, "run-1");
  assert.equal(posts(calls).length, 2);
});

test("a 5xx answer is never re-sent blindly: the run it may have made is taken", async () => {
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/commands$/, () => jsonResponse(502, { detail: "bad gateway" })],
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("run-1")])],
  ]);
  const once = exactlyOnceCommandsFetch(fetchImpl);
  const response = await once(COMMANDS_URL, commandInit());
  assert.equal((await response.json()).result.run_id, "run-1");
  assert.equal(posts(calls).length, 1);
});

test("untagged commands and other requests pass through untouched", async () => {
  const { fetchImpl, calls } = mockServer([[/^POST /, networkError]]);
  const once = exactlyOnceCommandsFetch(fetchImpl);
  await assert.rejects(once(COMMANDS_URL, commandInit(command("run.start", {}))), TypeError);
  await assert.rejects(once(COMMANDS_URL, commandInit(command("input.respond"))), TypeError);
  assert.equal(calls.length, 2);
  assert.equal(calls.filter((c) => c.method === "GET").length, 0);
});

// ---- exactlyOnceWebSocketFactory: the binding's WebSocket transport. The socket is a
// stand-in EventTarget (node has no WebSocket server); the browser test cuts a real one.

class StandInSocket extends EventTarget {
  constructor(url) {
    super();
    this.url = url;
    this.readyState = 1;
    this.sent = [];
  }

  send(data) {
    this.sent.push(data);
  }

  close() {
    this.readyState = 3;
    this.dispatchEvent(new Event("close"));
  }

  // The network's doing: an error, then the close.
  cut() {
    this.readyState = 3;
    this.dispatchEvent(new Event("error"));
    this.dispatchEvent(new Event("close"));
  }

  answer(payload) {
    this.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(payload) }));
  }
}

const SOCKET_URL = "ws://x/threads/t/stream/events";

function socketSetup(routes) {
  const { fetchImpl, calls } = mockServer(routes);
  const clock = fakeClock();
  const sockets = [];
  const factory = exactlyOnceWebSocketFactory(
    (url) => {
      const socket = new StandInSocket(url);
      sockets.push(socket);
      return socket;
    },
    fetchImpl,
    { sleep: clock.sleep, clock: clock.clock },
  );
  const socket = factory(SOCKET_URL);
  const seen = [];
  for (const type of ["message", "close", "error"]) {
    socket.addEventListener(type, (event) => seen.push(type === "message" ? JSON.parse(event.data) : type));
  }
  return { socket, real: sockets[0], seen, calls };
}

const untilQuiet = () => new Promise((resolve) => setTimeout(resolve, 20));

test("a socket URL names its thread's HTTP URL; a tagged run.start message is recognised", () => {
  assert.equal(socketThreadUrl("ws://x/threads/t/stream/events"), "http://x/threads/t");
  assert.equal(socketThreadUrl("wss://x:8/api/threads/t/stream/events"), "https://x:8/api/threads/t");
  assert.equal(socketThreadUrl("ws://x/threads/t/commands"), null);
  assert.deepEqual(socketRunStart(JSON.stringify(command())), { id: 7, requestId: REQUEST });
  assert.equal(socketRunStart(JSON.stringify(command("run.start", {}))), null, "no request id");
  assert.equal(socketRunStart(JSON.stringify(command("input.respond"))), null);
  assert.equal(socketRunStart("{"), null);
});

test("a socket cut after it carried run.start is answered with the run it made, then closes", async () => {
  const { socket, real, seen, calls } = socketSetup([
    [/^GET \/threads\/t\/runs$/, () => jsonResponse(200, [tagged("other", "req-0"), tagged("run-1")])],
  ]);
  socket.send(JSON.stringify(command()));
  real.cut();
  assert.deepEqual(seen, [], "the close waits for the lookup");
  await untilQuiet();
  assert.deepEqual(seen, [{ type: "success", id: 7, result: { run_id: "run-1" } }, "error", "close"]);
  assert.equal(real.sent.length, 1, "the command is never re-sent");
  assert.deepEqual(
    calls.map((c) => `${c.method} ${c.path}`),
    ["GET /threads/t/runs"],
  );
});

test("the run is looked for while the window lasts; none found, the cut stands", async () => {
  const { socket, real, seen, calls } = socketSetup([
    [/^GET \/threads\/t\/runs$/, ({ calls }) => (calls.length < 3 ? jsonResponse(404, {}) : jsonResponse(200, []))],
  ]);
  socket.send(JSON.stringify(command()));
  real.cut();
  await untilQuiet();
  assert.deepEqual(seen, ["error", "close"]);
  assert.ok(calls.length > 3, `looked up ${calls.length} times`);
  assert.equal(real.sent.length, 1);
});

test("an answered run.start, an untagged command and the binding's own close pass through", async () => {
  const { socket, real, seen, calls } = socketSetup([]);
  socket.send(JSON.stringify(command()));
  real.answer({ type: "success", id: 7, result: { run_id: "run-1" } });
  socket.send(JSON.stringify(command("run.start", {})));
  real.answer({ type: "event", method: "values", params: {} });
  real.cut();
  assert.deepEqual(seen.slice(-2), ["error", "close"], "nothing awaited: the cut is passed at once");
  assert.equal(seen.length, 4);

  const other = socketSetup([]);
  other.socket.send(JSON.stringify(command()));
  other.socket.close();
  assert.deepEqual(other.seen, ["close"], "the binding closed it: nothing to answer");
  await untilQuiet();
  assert.equal(calls.length + other.calls.length, 0);
  assert.equal(socket.readyState, 3);
  assert.equal(socket.url, SOCKET_URL);
});

test("a run.start on a thread whose latest run was cancelled goes over HTTP, answered on the socket", async () => {
  const { fetchImpl, calls } = mockServer([
    [/^POST \/threads\/t\/commands$/, () => jsonResponse(200, { type: "success", id: 7, result: { run_id: "run-2" } })],
  ]);
  const sockets = [];
  const asked = [];
  const factory = exactlyOnceWebSocketFactory(
    (url) => {
      const socket = new StandInSocket(url);
      sockets.push(socket);
      return socket;
    },
    fetchImpl,
    {
      startsOverHttp: (threadUrl) => {
        asked.push(threadUrl);
        return asked.length === 1 ? { fetch: fetchImpl, headers: { "x-api-key": "k" } } : null;
      },
    },
  );
  const socket = factory(SOCKET_URL);
  const seen = [];
  socket.addEventListener("message", (event) => seen.push(JSON.parse(event.data)));
  socket.send(JSON.stringify(command()));
  await untilQuiet();
  assert.deepEqual(asked, ["http://x/threads/t"]);
  assert.equal(sockets[0].sent.length, 0, "not on the socket, which would resume the cancelled run");
  const [post] = calls;
  assert.equal(post.method, "POST");
  assert.equal(JSON.parse(post.body).method, "run.start");
  assert.equal(post.headers["x-api-key"], "k");
  assert.deepEqual(seen, [{ type: "success", id: 7, result: { run_id: "run-2" } }]);
  // The next one goes on the socket again.
  socket.send(JSON.stringify(command()));
  assert.equal(sockets[0].sent.length, 1);
});
