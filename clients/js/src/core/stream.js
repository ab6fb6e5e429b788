// `streamWithRecovery`: for apps without the langgraph SDK. Streams a run with `fetch`,
// resumes the join stream after a drop as the SDK does, then always settles the run
// through the route and replaces the shown text with its answer. A Stop (`stopSignal`)
// is final: the run is cancelled on the server and the text shown at Stop is the result.

import { createStreamAccumulator } from "./accumulate.js";
import { cancelStoppedRun } from "./cancel.js";
import { HttpStatusError, StallError, describe, isRetryable } from "./errors.js";
import {
  CONNECT_MARGIN_MS,
  READ_MARGIN_MS,
  abortError,
  fetchWithin,
  join,
  jsonBody,
  sleep,
} from "./http.js";
import { exactlyOnceFetch } from "./once.js";
import { RunEndWatch } from "./watch.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY, Reconciler, findRun } from "./settle.js";
import { createSseParser, eventData } from "./sse.js";

export const STREAM_MODE = "messages-tuple";
export const DEFAULT_STALL_TIMEOUT_MS = 15_000;
export const MAX_RECONNECT_ATTEMPTS = 5;
// "Before the first event" to both servers (the SDK's own joinStream sends it): the
// Python one compares ids as "ms-seq" strings, the JS one as integers ("0-0" is NaN to
// it, and it then replays nothing).
const REPLAY_FROM_START = "-1";

function runIdFromPath(path) {
  const match = /\/runs\/([^/?#]+)/.exec(path || "");
  return match ? decodeURIComponent(match[1]) : null;
}

/** The join-stream path of a run stream response, if readable and same-origin. */
export function joinPathFromHeaders(headers, baseUrl) {
  const location = headers.get("location");
  const contentLocation = headers.get("content-location");
  let path = location;
  if (!path && contentLocation) path = `${contentLocation.replace(/\/+$/, "")}/stream`;
  if (!path) return null;
  try {
    const base = new URL(baseUrl);
    const resolved = new URL(path, base.href.endsWith("/") ? base.href : `${base.href}/`);
    if (resolved.origin !== base.origin) return null; // never follow to another origin
    return /^[a-z]+:/i.test(path) ? resolved.pathname + resolved.search : path;
  } catch {
    return null;
  }
}

/**
 * Whether the run is over, asked of the route as a long-poll of `ms` (the delay before
 * the next reconnect); what it does not spend answering is slept.
 */
async function endedWithin(route, ms, sleepImpl, signal) {
  const started = Date.now();
  try {
    if ((await route.fetch(ms / 1000)).complete) return true;
  } catch (error) {
    if (signal && signal.aborted) throw error;
    // No answer now (the server is restarting, the thread is gone): the reconnect and,
    // after it, the settling say what happened.
  }
  const left = ms - (Date.now() - started);
  if (left > 0) await sleepImpl(left, signal);
  return false;
}

function reconnectDelayMs(attempt) {
  const delay = Math.min(5000, 1000 * 2 ** attempt);
  return delay + Math.random() * delay * 0.25;
}

/**
 * Read one SSE response body into `onEvent`, aborting via `controller` when no byte has
 * arrived for `stallTimeout` ms. Resolves on a clean close; rejects on a drop.
 */
async function readBody(response, parser, onEvent, watchdog) {
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      watchdog.kick();
      if (done) break;
      for (const event of parser.push(value)) onEvent(event);
    }
    parser.end();
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // a reader with a pending read cannot be released; the abort ends it
    }
  }
}

function createWatchdog(controller, stallTimeout) {
  let timer = null;
  const watchdog = {
    stalled: false,
    kick() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        watchdog.stalled = true;
        controller.abort(new StallError(stallTimeout));
      }, stallTimeout);
    },
    stop() {
      clearTimeout(timer);
    },
  };
  return watchdog;
}

/**
 * Stream a run and return its authoritative final answer (see the header).
 *
 * @param {object} options
 * @param {string} options.url            server base URL (e.g. "http://127.0.0.1:2024")
 * @param {string} options.threadId
 * @param {string} options.assistantId
 * @param {object|null} options.input     run input, e.g. {messages: [{role, content}]}
 * @param {number} [options.maxWait=240000]      ms to follow an unfinished run (F3)
 * @param {number} [options.stallTimeout=15000]  ms without a byte before a stall
 * @param {(text: string) => void} [options.onUpdate]  the text to show, replaced each time
 * @param {() => void} [options.onReconcile]  called once the stream ended and F2 starts
 * @param {(event: string, data: unknown) => void} [options.onEvent]  every event of the
 *   run's stream as it arrives (a replay after a rejoin included), for a caller that
 *   shows more than the text (reasoning, tool calls)
 * @param {typeof fetch} [options.fetchImpl=fetch]
 * @param {Record<string,string>} [options.headers]  extra request headers (auth)
 * @param {boolean} [options.streamResumable=true]
 * @param {"create"|"reject"} [options.ifNotExists]  a thread the server does not have:
 *   made by the run ("create"), or refused (the server's default)
 * @param {boolean} [options.resume=true]   rejoin the run's stream after a drop
 * @param {boolean} [options.followRun=false]  watch the run's end through the route
 *   meanwhile (core/watch.js): a stream still open just after it ends there, not at
 *   the stall timeout
 * @param {AbortSignal} [options.signal]    leaves the run (rejects with its reason); the
 *   run goes on on the server
 * @param {AbortSignal} [options.stopSignal]  the user's Stop: the run is cancelled on the
 *   server, nothing more is shown, and the result is the text shown at Stop
 *   (`status: "stopped"`, `stopped: true`)
 * @param {(ms: number, signal?: AbortSignal) => Promise<void>} [options.sleep]  for tests
 */
export async function streamWithRecovery(options) {
  const { stopSignal, signal: leaveSignal } = options;
  if (!stopSignal) return streamRun(options, {});
  // Stopping ends what is under way as leaving does; what follows is a Stop's.
  const either = new AbortController();
  const stopping = {};
  for (const one of [leaveSignal, stopSignal]) {
    if (!one) continue;
    if (one.aborted) either.abort(one.reason);
    else one.addEventListener("abort", () => either.abort(one.reason), { once: true });
  }
  try {
    return await streamRun({ ...options, signal: either.signal }, stopping);
  } catch (error) {
    if (!stopSignal.aborted || (leaveSignal && leaveSignal.aborted)) throw error;
    return stoppedResult(options, stopping);
  }
}

/** A Stop's result: the run cancelled (found by its tag if unnamed), the text shown kept. */
async function stoppedResult({ url, threadId, fetchImpl = globalThis.fetch, headers = {}, sleep: sleepImpl = sleep }, stopping) {
  const runId = await cancelStoppedRun({
    threadId,
    runId: stopping.runId(),
    requestId: stopping.requestId,
    cancel: (thread, run) => cancelRun(fetchImpl, url, thread, run, headers),
    find: { url, headers, fetchImpl },
    sleep: sleepImpl,
  });
  return {
    ...stoppedAnswer(threadId, runId, stopping.shown()),
    recovered: false,
    truncated: true,
    streamError: null,
    streamTerminalEvent: null,
    streamErrorEvent: null,
    drops: [],
    resumes: 0,
    resubmitted: null,
  };
}

/** What a stopped run ends on: the text shown at Stop, final. */
function stoppedAnswer(threadId, runId, content) {
  return {
    content,
    completed_at: null,
    complete: true,
    status: "stopped",
    stopped: true,
    thread_id: threadId,
    run_id: runId,
    checkpoint_id: null,
    message_id: null,
    updated_at: null,
    source: null,
    error: null,
    interrupts: [],
  };
}

/** `POST /threads/{id}/runs/{run_id}/cancel?wait=1`: the run is over when it answers. */
async function cancelRun(fetchImpl, url, threadId, runId, headers) {
  const path = `/threads/${encodeURIComponent(threadId)}/runs/${encodeURIComponent(runId)}/cancel?wait=1`;
  const response = await fetchWithin(
    fetchImpl,
    join(url, path),
    { method: "POST", headers: { Accept: "application/json", ...headers } },
    CONNECT_MARGIN_MS + READ_MARGIN_MS,
  );
  if (!response.ok) throw new HttpStatusError(response.status, path, response.body);
}

async function streamRun(
  {
    url,
    threadId,
    assistantId,
    input,
    maxWait = DEFAULT_MAX_WAIT_MS,
    stallTimeout = DEFAULT_STALL_TIMEOUT_MS,
    onUpdate = null,
    onReconcile = null,
    onEvent: onStreamEvent = null,
    fetchImpl = globalThis.fetch,
    headers = {},
    streamResumable = true,
    ifNotExists = undefined,
    resume = true,
    followRun = false,
    signal = undefined,
    sleep: sleepImpl = sleep,
  },
  stopping,
) {
  let shown = "";
  const show = (text) => {
    if (text !== shown) {
      shown = text;
      if (!onUpdate) return;
      try {
        onUpdate(text);
      } catch (error) {
        // A rendering bug must not read as a network drop: report it, carry on.
        setTimeout(() => {
          throw error;
        });
      }
    }
  };

  const stream = createStreamAccumulator();
  const requestId = newRequestId();
  // What a Stop needs, read when it comes.
  stopping.requestId = requestId;
  stopping.shown = () => shown;
  stopping.runId = () => stream.runId ?? headerRunId;
  const threadPath = `/threads/${encodeURIComponent(threadId)}`;
  const body = JSON.stringify({
    assistant_id: assistantId,
    ...(input == null ? {} : { input }), // as the SDK does: no key rather than null
    stream_mode: STREAM_MODE,
    stream_resumable: streamResumable,
    ...(ifNotExists ? { if_not_exists: ifNotExists } : {}),
    metadata: { [REQUEST_ID_KEY]: requestId },
  });

  let headerRunId = null;
  let joinPath = null;
  let lastEventId = null;
  let streamError = null;
  const drops = [];
  // A submit cut before its response joins the run it made, or posts once more if none.
  const submitFetch = exactlyOnceFetch(fetchImpl, {
    sleep: sleepImpl,
    onResubmit: ({ action, runId, cause }) => {
      drops.push(describe(cause ?? new Error("the submit was sent again")));
      resubmitted = action === "joined" ? `joined ${runId}` : "posted again";
      // A join replays from the run's first event only if the server does so: until its
      // `metadata` shows it did, no message is shown whose start it may have missed.
      if (action === "joined") stream.gap();
    },
  });
  let resubmitted = null;
  // `followRun`: the route watched meanwhile; its run over, a stream still open is ended.
  const watch = followRun ? new RunEndWatch({ url, threadId, fetchImpl, headers, signal, sleep: sleepImpl, maxWait }) : null;
  let routeSaidOver = false;
  let reading = null; // the open attempt's controller
  const watchRun = () => {
    watch?.start(stream.runId ?? headerRunId, () => {
      routeSaidOver = true;
      reading?.abort();
    });
  };
  let resumes = 0;
  let resumedWithoutReplay = false;
  let attempts = 0;

  const onEvent = (sse) => {
    attempts = 0; // progress earns a fresh set of reconnect attempts
    if (sse.id != null) lastEventId = sse.id;
    const data = eventData(sse.data);
    if (stream.feed(sse.event, data)) show(stream.text);
    if (onStreamEvent) onStreamEvent(sse.event, data);
    watchRun();
  };

  try {
    for (;;) {
      if (routeSaidOver) break; // said while a reconnect waited: the route has the answer
      const reconnecting = joinPath !== null && (drops.length > 0 || resumes > 0);
      const controller = new AbortController();
      const onAbort = () => controller.abort(abortError(signal));
      if (signal) {
        if (signal.aborted) throw abortError(signal);
        signal.addEventListener("abort", onAbort, { once: true });
      }
      const watchdog = createWatchdog(controller, stallTimeout);
      reading = controller;
      let cause = null;
      try {
        const requestHeaders = { Accept: "text/event-stream", "Cache-Control": "no-store", ...headers };
        let init;
        let target;
        if (!reconnecting) {
          target = join(url, `${threadPath}/runs/stream`);
          init = { method: "POST", headers: { ...requestHeaders, "Content-Type": "application/json" }, body };
        } else {
          target = join(url, joinPath);
          let replayFrom = lastEventId;
          if (replayFrom === null && stream.events === 0) replayFrom = REPLAY_FROM_START;
          if (replayFrom !== null) requestHeaders["Last-Event-ID"] = replayFrom;
          else resumedWithoutReplay = true;
          // Only an id the server gave is sure to follow on from what was read.
          if (replayFrom !== lastEventId) stream.gap();
          init = { method: "GET", headers: requestHeaders };
          resumes += 1;
        }
        watchdog.kick();
        const send = reconnecting ? fetchImpl : submitFetch;
        const response = await send(target, { ...init, signal: controller.signal });
        watchdog.kick();
        if (!reconnecting) {
          const contentLocation = response.headers.get("content-location");
          headerRunId = runIdFromPath(contentLocation) ?? runIdFromPath(response.headers.get("location"));
          if (resume) joinPath = joinPathFromHeaders(response.headers, url);
          watchRun();
        }
        if (!response.ok) {
          const text = await response.text().catch(() => "");
          const error = new HttpStatusError(response.status, target, text);
          // A reconnect refused by a restarting server (429/5xx) is retried like a drop.
          if (reconnecting && (response.status === 429 || response.status >= 500)) throw error;
          error.fatal = true;
          throw error;
        }
        const type = (response.headers.get("content-type") || "").split(";")[0].trim();
        if (type !== "text/event-stream") {
          throw new TypeError(`expected text/event-stream, got ${JSON.stringify(type)}`);
        }
        await readBody(response, createSseParser(), onEvent, watchdog);
      } catch (error) {
        const reason = watchdog.stalled ? new StallError(stallTimeout) : error;
        if (signal && signal.aborted) throw abortError(signal);
        if (routeSaidOver) {
          drops.push("the route said the run is over while its stream was still open");
          break;
        }
        drops.push(describe(reason));
        if ((error && error.fatal) || joinPath === null) streamError = reason;
        else cause = reason;
      } finally {
        watchdog.stop();
        if (signal) signal.removeEventListener("abort", onAbort);
        controller.abort(); // frees the connection if it is still open (no-op after a clean end)
      }
      if (streamError !== null) break;
      // A clean close looks like the end of the run: ask the run whether it still runs.
      if (cause === null && joinPath !== null && !stream.provedComplete) {
        cause = await checkRun(fetchImpl, url, joinPath, headers, signal);
        if (cause) drops.push(describe(cause));
      }
      if (cause === null) break;
      attempts += 1;
      if (attempts > MAX_RECONNECT_ATTEMPTS) {
        streamError = cause;
        break;
      }
      const runNow = stream.runId ?? headerRunId;
      const delay = reconnectDelayMs(attempts - 1);
      if (runNow !== null && attempts > 1) {
        // A rejoin failed too: the backoff is spent asking the route instead, so a run
        // that ends while its rejoins fail is seen at its end, not after the next
        // reconnect (or all five) has failed. The first reconnect comes first: it replays
        // what the cut lost.
        const route = new Reconciler({ url, threadId, runId: runNow, fetchImpl, headers, signal, sleep: sleepImpl });
        if (await endedWithin(route, delay, sleepImpl, signal)) break;
      } else {
        await sleepImpl(delay, signal);
      }
    }

    const streamedText = stream.text;
    let runId = stream.runId ?? headerRunId;
    if (runId === null) {
      runId = await findRun({ url, threadId, requestId, fetchImpl, headers, signal, sleep: sleepImpl });
      if (runId === null) {
        // The run was never created: nothing to recover; the caller may retry.
        throw streamError ?? new Error("the server created no run");
      }
    }

    if (onReconcile) onReconcile();
    const reconciler = new Reconciler({ url, threadId, runId, fetchImpl, headers, signal, sleep: sleepImpl });
    const answer = await reconciler.settle(maxWait, (latest) => {
      // Replace, never append; an answer not written yet must not blank the stream's text.
      if (latest.content || latest.complete) show(latest.content ?? "");
    });
    // An `error` event proves an ending only if the run really failed: a join stream whose
    // run the server no longer knows (after a restart) reports "Run not found" the same way.
    const provedEnd =
      stream.terminalEvent === "end" ||
      (stream.terminalEvent === "error" && answer.status === "error");
    const truncated = streamError !== null || resumedWithoutReplay || !provedEnd;
    return {
      ...answer,
      recovered: (answer.content ?? "") !== streamedText,
      truncated,
      streamError: describe(streamError),
      streamTerminalEvent: stream.terminalEvent,
      streamErrorEvent: stream.error,
      drops,
      resumes,
      resubmitted,
    };
  } finally {
    watch?.stop();
  }
}

/**
 * A v4 UUID. `crypto.randomUUID()` exists only in secure contexts (https, localhost): a
 * WebUI opened over plain http on a LAN address falls back to `getRandomValues`.
 */
export function newRequestId() {
  const cryptoApi = globalThis.crypto;
  if (cryptoApi && typeof cryptoApi.randomUUID === "function") return cryptoApi.randomUUID();
  const bytes = new Uint8Array(16);
  if (cryptoApi && typeof cryptoApi.getRandomValues === "function") cryptoApi.getRandomValues(bytes);
  else for (let i = 0; i < 16; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** After a clean close without a terminal event: an Error to reconnect, else null. */
async function checkRun(fetchImpl, url, joinPath, headers, signal) {
  const runPath = joinPath.replace(/\/stream(?:\?.*)?$/, "");
  if (runPath === joinPath) return null;
  try {
    const response = await fetchWithin(
      fetchImpl,
      join(url, runPath),
      { method: "GET", headers: { Accept: "application/json", ...headers }, cache: "no-store" },
      CONNECT_MARGIN_MS + READ_MARGIN_MS,
      signal,
    );
    if (response.status === 429 || response.status >= 500) {
      return new HttpStatusError(response.status, runPath, response.body);
    }
    const status = response.ok ? (jsonBody(response.body) || {}).status : null;
    if (status === "pending" || status === "running") {
      return new Error("stream closed while the run was still pending or running");
    }
    return null;
  } catch (error) {
    if (signal && signal.aborted) throw error;
    // The restart that closed the stream can fail the check too: retry it like a drop.
    return isRetryable(error) ? error : null;
  }
}
