// F2/F3: ask the route (or, F2a, the raw state) until the run settles.

import { pendingAnswer } from "../answer/result.js";
import { answerFromState } from "../answer/state.js";
import {
  HttpStatusError,
  RunGone,
  ThreadGone,
  Unrecoverable,
  describe,
  isRetryable,
} from "./errors.js";
import {
  CONNECT_MARGIN_MS,
  READ_MARGIN_MS,
  RECONNECT_MS,
  backoffMs,
  errorCode,
  fetchWithin,
  formatSeconds,
  join,
  now,
  sleep,
} from "./http.js";

export const DEFAULT_MAX_WAIT_MS = 240_000;
export const LONG_POLL_SECONDS = 30;
export const FIND_RUN_ATTEMPTS = 5;
/** The metadata key a client tags its run with, to find it when no response named it. */
export const REQUEST_ID_KEY = "recovery_request_id";

/**
 * Reads one run's final answer: through the route, or (F2a) from raw state.
 * Options `sleep` and `clock` exist for tests.
 */
export class Reconciler {
  constructor({
    url,
    threadId,
    runId = null,
    fetchImpl = globalThis.fetch,
    headers = {},
    signal = undefined,
    sleep: sleepImpl = sleep,
    clock = now,
  }) {
    this.url = url;
    this.threadId = threadId;
    this.runId = runId;
    this.fetchImpl = fetchImpl;
    this.headers = headers;
    this.signal = signal;
    this.sleep = sleepImpl;
    this.clock = clock;
    this.threadPath = `/threads/${encodeURIComponent(threadId)}`;
    /** null: not asked yet; true: the route answers; false: old server (F2a). */
    this.routeAvailable = null;
  }

  async get(path, timeoutMs) {
    const url = join(this.url, path);
    return fetchWithin(
      this.fetchImpl,
      url,
      { method: "GET", headers: { Accept: "application/json", ...this.headers }, cache: "no-store" },
      timeoutMs,
      this.signal,
    );
  }

  /** One read. Throws `ThreadGone`, or a retryable error. */
  async fetch(waitSeconds = 0) {
    if (this.routeAvailable !== false) {
      const answer = await this.fetchRoute(waitSeconds);
      if (answer !== null) return answer;
    }
    return this.fetchState();
  }

  async fetchRoute(waitSeconds) {
    const params = new URLSearchParams();
    if (this.runId) params.set("run_id", this.runId);
    if (waitSeconds > 0) params.set("wait", formatSeconds(waitSeconds));
    const query = params.toString();
    const path = `/api${this.threadPath}/final-answer${query ? `?${query}` : ""}`;
    const response = await this.get(
      path,
      CONNECT_MARGIN_MS + waitSeconds * 1000 + READ_MARGIN_MS,
    );
    if (response.status === 404) {
      // The route names what is missing; a bare 404 is a server without the route.
      const code = errorCode(response.body);
      if (code === "thread_not_found") throw new ThreadGone(this.threadId);
      if (code === "run_not_found") throw new RunGone(this.threadId, this.runId);
      this.routeAvailable = false;
      return null;
    }
    if (!response.ok) throw new HttpStatusError(response.status, path, response.body);
    const body = JSON.parse(response.body);
    this.routeAvailable = true;
    return body;
  }

  async fetchState() {
    const limit = CONNECT_MARGIN_MS + READ_MARGIN_MS;
    const thread = await this.get(this.threadPath, limit);
    if (thread.status === 404 || thread.status === 422) throw new ThreadGone(this.threadId);
    if (!thread.ok) throw new HttpStatusError(thread.status, this.threadPath, thread.body);
    const state = await this.get(`${this.threadPath}/state`, limit);
    if (!state.ok) throw new HttpStatusError(state.status, `${this.threadPath}/state`, state.body);
    const body = JSON.parse(state.body);
    const status = (JSON.parse(thread.body) || {}).status ?? null;
    if (this.runId && ((body && body.metadata) || {}).run_id !== this.runId) {
      // The state has not reached our run yet: its answer is not the one asked for.
      return pendingAnswer(this.threadId, this.runId, "api");
    }
    return answerFromState(this.threadId, body, { threadStatus: status });
  }

  /** Read until `complete` or `maxWaitMs` pass; then the latest answer. */
  async settle(maxWaitMs, onAnswer = null) {
    const deadline = this.clock() + maxWaitMs;
    let latest = null;
    let lastError = null;
    let attempt = 0;
    for (;;) {
      let remaining = deadline - this.clock();
      const wait = this.routeAvailable
        ? Math.min(LONG_POLL_SECONDS, Math.max(remaining, 0) / 1000)
        : 0;
      const started = this.clock();
      const probing = this.routeAvailable === null;
      try {
        latest = await this.fetch(wait);
        if (onAnswer) onAnswer(latest);
        if (latest.complete) return latest;
      } catch (error) {
        if (!isRetryable(error) || (this.signal && this.signal.aborted)) throw error;
        lastError = error;
      }
      // fetch's TypeError: no connection (refused, reset), not an answer of the server's.
      const refused = lastError instanceof TypeError && this.routeAvailable === true;
      remaining = deadline - this.clock();
      if (remaining <= 0) {
        if (latest === null) {
          throw new Unrecoverable(
            `no answer within ${maxWaitMs} ms: ${describe(lastError)}`,
            lastError ?? undefined,
          );
        }
        return latest;
      }
      const held = (this.clock() - started) / 1000;
      if (wait > 0 && held >= wait / 2 && lastError === null) continue; // long-polled: ask again
      // The first read only learnt that the route is there (it does not hold a request
      // before it knows): long-poll at once, or a run ending in a backoff's second is
      // shown up to that second late.
      if (probing && this.routeAvailable && lastError === null) continue;
      if (refused) {
        // A server that long-polled and now refuses connections is restarting: a refused
        // connect costs it nothing, and a run ending in a 4 s backoff would show 4 s late.
        // Ask again soon, without backing off.
        await this.sleep(Math.min(RECONNECT_MS, remaining), this.signal);
        lastError = null;
        continue;
      }
      await this.sleep(Math.min(backoffMs(attempt), remaining), this.signal);
      attempt += 1;
      lastError = null;
    }
  }
}

/**
 * The id of the run tagged with `requestId`, when the stream died before naming it
 * (`GET /threads/{id}/runs?limit=20`). Null when none is found.
 */
export async function findRun({
  url,
  threadId,
  requestId,
  fetchImpl = globalThis.fetch,
  headers = {},
  signal = undefined,
  sleep: sleepImpl = sleep,
}) {
  const path = `/threads/${encodeURIComponent(threadId)}/runs?limit=20`;
  for (let attempt = 0; attempt < FIND_RUN_ATTEMPTS; attempt += 1) {
    try {
      const response = await fetchWithin(
        fetchImpl,
        join(url, path),
        { method: "GET", headers: { Accept: "application/json", ...headers }, cache: "no-store" },
        CONNECT_MARGIN_MS + READ_MARGIN_MS,
        signal,
      );
      if (response.status === 404) return null;
      if (!response.ok) throw new HttpStatusError(response.status, path, response.body);
      for (const run of JSON.parse(response.body) || []) {
        if (((run && run.metadata) || {})[REQUEST_ID_KEY] === requestId) return run.run_id;
      }
      return null;
    } catch (error) {
      if (!isRetryable(error) || (signal && signal.aborted)) throw error;
      await sleepImpl(backoffMs(attempt), signal);
    }
  }
  return null;
}

/**
 * The route's final-answer object for a run once it is `complete` (F2/F3, or F2a on a
 * server without the route); at the deadline, the latest answer read (`complete: false`).
 * Network errors, timeouts and 503 are retried with a `wait=` long-poll, else backoff
 * 1 s, 2 s, 4 s, then every 5 s. Rejects with `ThreadGone` (404 `thread_not_found`; its subclass `RunGone` for 404
 * `run_not_found`),
 * `Unrecoverable` (nothing readable before the deadline) or the signal's reason.
 */
export async function settleFinalAnswer({
  apiUrl,
  threadId,
  runId = null,
  headers = {},
  signal = undefined,
  maxWaitMs = DEFAULT_MAX_WAIT_MS,
  onUpdate = null,
  fetch: fetchImpl = globalThis.fetch,
  sleep: sleepImpl = sleep,
}) {
  if (!apiUrl) throw new TypeError("settleFinalAnswer: apiUrl is required");
  if (!threadId) throw new TypeError("settleFinalAnswer: threadId is required");
  const reconciler = new Reconciler({
    url: apiUrl,
    threadId,
    runId,
    fetchImpl,
    headers,
    signal,
    sleep: sleepImpl,
  });
  return reconciler.settle(maxWaitMs, onUpdate);
}
