// `exactlyOnceCommandsFetch` and `exactlyOnceWebSocketFactory`: the `fetch` and socket
// factory the @langchain/react and @langchain/svelte drop-ins hand the binding's
// `useStream`, under which a `run.start` tagged with a request id never starts a second
// run, over SSE or WebSocket. Who re-sends, and why joining the run is enough:
// docs/webui-integration.md, *Exactly-once run starts*.

import {
  discard,
  listRuns,
  mayHaveArrived,
  onceState,
  requestIdIn,
  taggedRun,
  threadPost,
} from "../core/once.js";

const COMMANDS_PATH = /^(.*)\/threads\/([^/]+)\/commands$/;

/** The tagged `run.start` a request is, or null: any other request passes through. */
export function runStartOf(input, init) {
  const post = threadPost(COMMANDS_PATH, input, init);
  const command = post && post.body;
  if (!command || command.method !== "run.start" || !command.params) return null;
  const requestId = requestIdIn(command.params.metadata);
  if (!requestId) return null;
  return {
    requestId,
    threadUrl: post.threadUrl,
    command,
    strategy: command.params.multitaskStrategy ?? null,
  };
}

/** The command's answer had the server started `runId` for it. */
export function startedResponse(command, runId) {
  const body = { type: "success", id: command.id ?? 0, result: { run_id: runId } };
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { "content-type": "application/json" },
  });
}

/** The same command, refusing to queue behind (or interrupt) a run on the thread. */
export function rejectingBody(command) {
  return JSON.stringify({
    ...command,
    params: { ...command.params, multitaskStrategy: "reject" },
  });
}

/** Whether a command's answer is a refusal (an error envelope, or a 4xx/5xx). */
async function refused(response) {
  if (!response.ok) return true;
  try {
    const payload = await response.clone().json();
    return !payload || payload.type === "error";
  } catch {
    return false;
  }
}

/**
 * Wrap `fetchImpl` (default: the global `fetch`) so that tagged `run.start` commands are
 * exactly-once. Options as `exactlyOnceFetch`'s: `lookupWindowMs`, `lookupIntervalMs`,
 * `onResubmit({requestId, runId, action, cause})`, `sleep`, `clock`.
 */
export function exactlyOnceCommandsFetch(fetchImpl = undefined, options = {}) {
  const { send, lookupWindowMs, lookupIntervalMs, onResubmit, sleep, clock, sent, remember } =
    onceState(fetchImpl, options);

  const lookup = async (start, init) => {
    const response = await listRuns(send, start.threadUrl, init);
    // The binding names the thread; its first run.start creates it. No thread: no run.
    if (response.status === 404) {
      await discard(response);
      return { runId: null };
    }
    if (!response.ok) return { response };
    return { runId: taggedRun(await response.json(), start.requestId) };
  };

  const joined = (start, runId, cause) => {
    remember(start.requestId, runId);
    onResubmit?.({ requestId: start.requestId, runId, action: "joined", cause });
    return startedResponse(start.command, runId);
  };

  const posted = (start, response, cause) => {
    onResubmit?.({ requestId: start.requestId, runId: null, action: "posted", cause });
    return response;
  };

  const resubmit = async (input, init, start, cause) => {
    const known = sent.get(start.requestId);
    if (known) return joined(start, known, cause);
    // The first command may still be on its way to becoming a run: look for it a while.
    const began = clock();
    for (;;) {
      const found = await lookup(start, init);
      if (found.response) return found.response;
      if (found.runId) return joined(start, found.runId, cause);
      if (clock() - began >= lookupWindowMs) break;
      await sleep(lookupIntervalMs, init.signal);
    }
    // Should the first command still become a run, the server refuses this one: that
    // run is then in flight, and so found below.
    const response = await send(input, { ...init, body: rejectingBody(start.command) });
    if (!(await refused(response))) return posted(start, response, cause);
    const found = await lookup(start, init);
    if (found.runId) {
      await discard(response);
      return joined(start, found.runId, cause);
    }
    // Another run holds the thread: the app's own strategy decides, as for a first submit.
    if (start.strategy === "reject") return response;
    await discard(response);
    return posted(start, await send(input, init), cause);
  };

  return async function onceCommandsFetch(input, init) {
    const start = runStartOf(input, init);
    if (start === null) return send(input, init);
    if (sent.has(start.requestId)) return resubmit(input, init, start, null);
    remember(start.requestId, null);
    let response;
    try {
      response = await send(input, init);
    } catch (error) {
      if ((init.signal && init.signal.aborted) || !mayHaveArrived(error)) throw error;
      return resubmit(input, init, start, error);
    }
    // The binding's AsyncCaller retried a 5xx; without it, this does, never blindly
    // (the server may have made the run before failing its answer).
    if (response.status < 500) return response;
    await discard(response);
    return resubmit(input, init, start, new Error(`HTTP ${response.status}`));
  };
}

const EVENTS_PATH = /^(.*)\/threads\/([^/]+)\/stream\/events$/;
const SOCKET_SCHEMES = { "ws:": "http:", "wss:": "https:" };

/** The thread's HTTP URL a protocol socket (`…/threads/{id}/stream/events`) is for, or null. */
export function socketThreadUrl(url) {
  let parsed;
  try {
    parsed = new URL(String(url));
  } catch {
    return null;
  }
  const match = EVENTS_PATH.exec(parsed.pathname);
  if (!match) return null;
  const scheme = SOCKET_SCHEMES[parsed.protocol] ?? parsed.protocol;
  return `${scheme}//${parsed.host}${match[1]}/threads/${match[2]}`;
}

/** The tagged `run.start` a socket message is ({id, requestId}), or null. */
export function socketRunStart(data) {
  if (typeof data !== "string") return null;
  let command;
  try {
    command = JSON.parse(data);
  } catch {
    return null;
  }
  if (!command || command.method !== "run.start" || !command.params) return null;
  if (typeof command.id !== "number") return null;
  const requestId = requestIdIn(command.params.metadata);
  if (!requestId) return null;
  return { id: command.id, requestId };
}

/** A copy of a socket's event, to dispatch on the wrapper (an event dispatches once). */
function copyEvent(event) {
  if (event.type === "message" && typeof MessageEvent === "function") {
    return new MessageEvent("message", { data: event.data });
  }
  const copy = new Event(event.type);
  for (const key of ["data", "code", "reason", "wasClean"]) {
    if (key in event) Object.defineProperty(copy, key, { value: event[key] });
  }
  return copy;
}

function messageEvent(data) {
  return copyEvent({ type: "message", data });
}

/**
 * The socket the binding's WebSocket transport talks to: the real one, passed through,
 * except that a close (or error) that comes while a tagged `run.start` awaits its answer
 * is held until the run it made is looked up; found, the command is answered with it.
 */
class ExactlyOnceSocket extends EventTarget {
  constructor(socket, threadUrl, findRun, startsOverHttp) {
    super();
    this.socket = socket;
    this.threadUrl = threadUrl;
    this.findRun = findRun;
    this.startsOverHttp = startsOverHttp;
    this.awaiting = new Map(); // command id → request id
    this.held = null; // close/error events held while the lookup runs
    this.closing = false;
    for (const type of ["open", "message", "close", "error"]) {
      socket.addEventListener(type, (event) => this.receive(event));
    }
  }

  get readyState() {
    return this.socket.readyState;
  }

  get url() {
    return this.socket.url;
  }

  get protocol() {
    return this.socket.protocol;
  }

  get bufferedAmount() {
    return this.socket.bufferedAmount;
  }

  get binaryType() {
    return this.socket.binaryType;
  }

  set binaryType(value) {
    this.socket.binaryType = value;
  }

  send(data) {
    const start = this.threadUrl ? socketRunStart(data) : null;
    const overHttp = start && this.startsOverHttp ? this.startsOverHttp(this.threadUrl) : null;
    if (overHttp) {
      this.startOverHttp(data, overHttp);
      return;
    }
    if (start) this.awaiting.set(start.id, start.requestId);
    this.socket.send(data);
  }

  /**
   * The `run.start` as the SSE transport sends it, `POST {thread}/commands` (exactly-once
   * too), its answer dispatched as the socket's: langgraph-api 0.16.7 takes a `run.start`
   * on a socket whose thread's latest run was cancelled as the resume of that run (the
   * socket binds the runs it replays; a cancelled run's status is "interrupted"), so the
   * new question would be lost and the stopped turn answered instead.
   */
  async startOverHttp(data, { fetch: commandsFetch, headers }) {
    let answer;
    try {
      const response = await commandsFetch(`${this.threadUrl}/commands`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "application/json" },
        body: data,
      });
      answer = await response.text();
    } catch (error) {
      const { id } = JSON.parse(data);
      answer = JSON.stringify({ type: "error", id, error: "run_start_failed", message: String(error) });
    }
    this.dispatchEvent(messageEvent(answer));
  }

  close(code, reason) {
    // The binding's own close: nothing to answer (it rejects what it still awaits).
    this.closing = true;
    this.socket.close(code, reason);
  }

  receive(event) {
    if (event.type === "message") {
      const id = answerId(event.data);
      if (id !== null) this.awaiting.delete(id);
    }
    if (event.type === "close" || event.type === "error") {
      if (this.held !== null) {
        this.held.push(event);
        return;
      }
      if (!this.closing && this.awaiting.size > 0) {
        this.held = [event];
        this.answerAwaited();
        return;
      }
    }
    this.dispatchEvent(copyEvent(event));
  }

  async answerAwaited() {
    const awaiting = [...this.awaiting];
    this.awaiting.clear();
    for (const [id, requestId] of awaiting) {
      let runId = null;
      try {
        runId = await this.findRun(this.threadUrl, requestId);
      } catch {
        runId = null;
      }
      if (runId) {
        this.dispatchEvent(messageEvent(JSON.stringify({ type: "success", id, result: { run_id: runId } })));
      }
    }
    const held = this.held;
    this.held = null;
    for (const event of held) this.dispatchEvent(copyEvent(event));
  }
}

function answerId(data) {
  if (typeof data !== "string" || !data.includes('"id"')) return null;
  try {
    const payload = JSON.parse(data);
    if (payload && typeof payload.id === "number" && (payload.type === "success" || payload.type === "error")) {
      return payload.id;
    }
  } catch {
    // not JSON: not a command's answer
  }
  return null;
}

/**
 * Wrap `factory` (default: `new WebSocket(url)`) for @langchain/react's `webSocketFactory`
 * option, so that a tagged `run.start` whose socket was cut before its answer is answered
 * with the run it made (looked up through `fetchImpl`, as `exactlyOnceCommandsFetch`
 * does). When no run shows up within the lookup window, the cut stands: the command
 * fails as it would have, and is not re-sent. Options: `lookupWindowMs`,
 * `lookupIntervalMs`, `onResubmit`, `sleep`, `clock`, and `startsOverHttp(threadUrl)`:
 * `{fetch, headers}` to send a `run.start` for that thread over HTTP instead (see
 * `startOverHttp`), or null.
 */
export function exactlyOnceWebSocketFactory(factory = undefined, fetchImpl = undefined, options = {}) {
  const open = factory ?? ((url) => new WebSocket(url));
  const { send, lookupWindowMs, lookupIntervalMs, onResubmit, sleep, clock } = onceState(fetchImpl, options);
  const { startsOverHttp = null } = options;

  const findRun = async (threadUrl, requestId) => {
    const began = clock();
    for (;;) {
      const response = await listRuns(send, threadUrl, {});
      if (response.ok) {
        const runId = taggedRun(await response.json(), requestId);
        if (runId) {
          onResubmit?.({ requestId, runId, action: "joined", cause: null });
          return runId;
        }
      } else {
        await discard(response);
      }
      if (clock() - began >= lookupWindowMs) return null;
      await sleep(lookupIntervalMs);
    }
  };

  return (url) => new ExactlyOnceSocket(open(url), socketThreadUrl(url), findRun, startsOverHttp);
}
