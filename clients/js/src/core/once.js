// `exactlyOnceFetch`: a `fetch` for the langgraph SDK (`callerOptions.fetch`) and for
// `streamWithRecovery` under which a run submit tagged with a request id never starts a
// second run: a send that fails is joined to the run it made, found by its request id, and
// posted again only when none shows up. Why the SDK's own retries would make a second run:
// docs/webui-integration.md, *Exactly-once submits*.

import { sleep as defaultSleep } from "./http.js";
import { REQUEST_ID_KEY } from "./settle.js";

/** How long a run whose POST failed may take to show up in the thread's runs. */
export const LOOKUP_WINDOW_MS = 2000;
export const LOOKUP_INTERVAL_MS = 250;
/** Runs of the thread read per lookup (newest first): a submit's run is among the newest. */
export const LOOKUP_LIMIT = 50;
const REMEMBERED_REQUESTS = 256;
// "Before the first event" to the Python server ("ms-seq" ids) and the JS one (integer
// ids, to which "0-0" is NaN: it then replays nothing), as the SDK's joinStream sends.
const REPLAY_FROM_START = "-1";
const SUBMIT_PATH = /^(.*)\/threads\/([^/]+)\/runs\/stream$/;

/**
 * A POST with a JSON body to a thread path `pathPattern` matches (its groups: the base
 * path, the thread id), or null: its body and the thread's URL.
 */
export function threadPost(pathPattern, input, init) {
  if (!init || String(init.method || "GET").toUpperCase() !== "POST") return null;
  if (typeof init.body !== "string") return null;
  let url;
  try {
    url = new URL(typeof input === "string" ? input : String(input));
  } catch {
    return null;
  }
  const match = pathPattern.exec(url.pathname);
  if (!match) return null;
  let body;
  try {
    body = JSON.parse(init.body);
  } catch {
    return null;
  }
  return { body, threadUrl: `${url.origin}${match[1]}/threads/${match[2]}` };
}

/** The request id a submit was tagged with in `metadata`, or null. */
export function requestIdIn(metadata) {
  const requestId = (metadata || {})[REQUEST_ID_KEY];
  return typeof requestId === "string" && requestId ? requestId : null;
}

/** The submit a request is, or null: any other request passes through. */
export function submitOf(input, init) {
  const post = threadPost(SUBMIT_PATH, input, init);
  if (!post || !post.body) return null;
  const { body, threadUrl } = post;
  const requestId = requestIdIn(body.metadata);
  if (!requestId) return null;
  return {
    requestId,
    threadUrl,
    body,
    resumable: body.stream_resumable === true,
    strategy: body.multitask_strategy ?? null,
    createsThread: body.if_not_exists === "create",
  };
}

/** The oldest run of `runs` (the server lists newest first) tagged with `requestId`. */
export function taggedRun(runs, requestId) {
  let found = null;
  for (const run of Array.isArray(runs) ? runs : []) {
    if (run && requestIdIn(run.metadata) === requestId) found = run.run_id;
  }
  return found;
}

/** A failure after which the request may have reached the server: a network error. */
export function mayHaveArrived(error) {
  return error instanceof TypeError || (error && error.name === "TypeError");
}

export function readHeaders(init, accept) {
  const headers = new Headers(init.headers || {});
  headers.delete("content-type");
  headers.delete("content-length");
  headers.set("accept", accept);
  return headers;
}

export async function discard(response) {
  try {
    await response.body?.cancel();
  } catch {
    // already read or closed
  }
}

/**
 * What both exactly-once wrappers (this one, and langchain-react/once.js's for
 * `run.start` commands) start from: the fetch they send with, their options with
 * defaults, and the submits they remember (request id → run id once known, else null;
 * the newest REMEMBERED_REQUESTS).
 */
export function onceState(fetchImpl, options) {
  const send = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
  const {
    lookupWindowMs = LOOKUP_WINDOW_MS,
    lookupIntervalMs = LOOKUP_INTERVAL_MS,
    onResubmit = null,
    sleep = defaultSleep,
    clock = Date.now,
  } = options;
  const sent = new Map();
  const remember = (requestId, runId) => {
    sent.delete(requestId);
    sent.set(requestId, runId);
    if (sent.size > REMEMBERED_REQUESTS) sent.delete(sent.keys().next().value);
  };
  return { send, lookupWindowMs, lookupIntervalMs, onResubmit, sleep, clock, sent, remember };
}

/** The thread's newest runs (`GET {threadUrl}/runs`), read as the submit's caller. */
export function listRuns(send, threadUrl, init) {
  return send(`${threadUrl}/runs?limit=${LOOKUP_LIMIT}`, {
    method: "GET",
    headers: readHeaders(init, "application/json"),
    signal: init.signal,
    cache: "no-store",
  });
}

/**
 * Wrap `fetchImpl` (default: the global `fetch`) so that run submits are exactly-once.
 * Options: `lookupWindowMs`, `lookupIntervalMs`, `onResubmit({requestId, runId, action,
 * cause})` (`action`: "joined" or "posted"), and `sleep`, `clock` for tests.
 */
export function exactlyOnceFetch(fetchImpl = undefined, options = {}) {
  const { send, lookupWindowMs, lookupIntervalMs, onResubmit, sleep, clock, sent, remember } =
    onceState(fetchImpl, options);

  const lookup = async (submit, init) => {
    const response = await listRuns(send, submit.threadUrl, init);
    if (response.status === 404 && submit.createsThread) {
      // The thread this submit makes (`if_not_exists: "create"`) is not there until the
      // submit arrives: not a gone thread, a run not made yet.
      await discard(response);
      return { runId: null };
    }
    if (!response.ok) return { response };
    return { runId: taggedRun(await response.json(), submit.requestId) };
  };

  const join = (submit, init, runId) => {
    const headers = readHeaders(init, "text/event-stream");
    // The run's events from its first: the SDK saw none of them.
    if (submit.resumable) headers.set("last-event-id", REPLAY_FROM_START);
    return send(`${submit.threadUrl}/runs/${encodeURIComponent(runId)}/stream`, {
      method: "GET",
      headers,
      signal: init.signal,
      cache: "no-store",
    });
  };

  const joined = (submit, init, runId, cause) => {
    remember(submit.requestId, runId);
    onResubmit?.({ requestId: submit.requestId, runId, action: "joined", cause });
    return join(submit, init, runId);
  };

  const resubmit = async (input, init, submit, cause) => {
    const known = sent.get(submit.requestId);
    if (known) return joined(submit, init, known, cause);
    // The first POST may still be on its way to becoming a run: look for it a while.
    const started = clock();
    for (;;) {
      const found = await lookup(submit, init);
      if (found.response) return found.response; // e.g. 404: the thread is gone
      if (found.runId) return joined(submit, init, found.runId, cause);
      if (clock() - started >= lookupWindowMs) break;
      await sleep(lookupIntervalMs, init.signal);
    }
    // Should the first POST still become a run, the server refuses this one: that run
    // is then in flight, and so found below.
    const rejectBody = JSON.stringify({ ...submit.body, multitask_strategy: "reject" });
    const response = await send(input, { ...init, body: rejectBody });
    if (response.status !== 409) {
      onResubmit?.({ requestId: submit.requestId, runId: null, action: "posted", cause });
      return response;
    }
    const found = await lookup(submit, init);
    if (found.runId) {
      await discard(response);
      return joined(submit, init, found.runId, cause);
    }
    // Another run holds the thread: the app's own strategy decides, as for a first submit.
    if (submit.strategy === "reject") return response;
    await discard(response);
    onResubmit?.({ requestId: submit.requestId, runId: null, action: "posted", cause });
    return send(input, init);
  };

  const onceFetch = async (input, init) => {
    const submit = submitOf(input, init);
    if (submit === null) return send(input, init);
    if (sent.has(submit.requestId)) {
      // The SDK sends it again (its retry of a failure or of a 5xx): never blindly.
      return resubmit(input, init, submit, null);
    }
    remember(submit.requestId, null);
    try {
      return await send(input, init);
    } catch (error) {
      if ((init.signal && init.signal.aborted) || !mayHaveArrived(error)) throw error;
      return resubmit(input, init, submit, error);
    }
  };
  return async function fetchOnce(input, init) {
    try {
      return await onceFetch(input, init);
    } catch (error) {
      throw asAbort(error, init);
    }
  };
}

/**
 * The SDK's caller (its AsyncCaller, on p-retry) retries every failure whose message does
 * not begin "AbortError", a request its own signal aborted included (the browser says
 * "signal is aborted without reason"): up to 4 more tries over up to 30 s, and meanwhile
 * `useStream` queues the next submit behind the stopped one (SDK 1.9.25: Stop while it
 * retried a cut rejoin held the next question 23 s). An aborted request fails as one.
 */
export function asAbort(error, init) {
  if (!(init && init.signal && init.signal.aborted)) return error;
  const message = String((error && error.message) ?? "");
  if (message.startsWith("AbortError")) return error;
  const abort = new Error(`AbortError: ${message || "the request was aborted"}`, { cause: error });
  abort.name = "AbortError";
  return abort;
}

// Marks a caller whose fetch `withExactlyOnce` has wrapped already.
const EXACTLY_ONCE = Symbol.for("@evoscientist/final-answer.exactlyOnce");

/**
 * An app's own langgraph SDK `Client` (`useStream({ client })`), its run submits made
 * exactly-once: the fetch of its `runs` client, which posts the run streams, is wrapped
 * in place with `exactlyOnceFetch`, once. Only the submits this package tags are ever
 * looked up: every other request passes through as before. A client without that fetch
 * (another SDK's shape) is returned untouched. The wrapped fetch is the client's own
 * `callerOptions.fetch`, else the global `fetch`.
 */
export function withExactlyOnce(client, options = {}) {
  const caller = client?.runs?.asyncCaller;
  if (caller === null || typeof caller !== "object" || !("customFetch" in caller)) return client;
  if (!caller[EXACTLY_ONCE]) {
    caller.customFetch = exactlyOnceFetch(caller.customFetch, options);
    caller[EXACTLY_ONCE] = true;
  }
  return client;
}
