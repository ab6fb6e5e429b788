// Small I/O helpers shared by the settle and stream loops: abortable sleep, fetch with a
// time limit, the F3 backoff schedule.

export const BACKOFF_MS = [1000, 2000, 4000];
export const STEADY_BACKOFF_MS = 5000;
/** Between connects to a route that long-polled and whose server now refuses them. */
export const RECONNECT_MS = 500;
/** Extra time beyond `wait` (plus connecting) before a held request counts as lost. */
export const READ_MARGIN_MS = 10_000;
export const CONNECT_MARGIN_MS = 10_000;

/** Delay before retry `attempt` (0-based): 1 s, 2 s, 4 s, then every 5 s. */
export function backoffMs(attempt) {
  return attempt < BACKOFF_MS.length ? BACKOFF_MS[attempt] : STEADY_BACKOFF_MS;
}

export function now() {
  return globalThis.performance ? globalThis.performance.now() : Date.now();
}

export function abortError(signal) {
  if (signal && signal.reason !== undefined) return signal.reason;
  const error = new Error("aborted");
  error.name = "AbortError";
  return error;
}

/** Sleep `ms`, rejecting early if `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      if (signal) signal.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    function onAbort() {
      clearTimeout(timer);
      reject(abortError(signal));
    }
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** `fetch` with a time limit, also cancelled by the caller's `signal`. */
export async function fetchWithin(fetchImpl, url, init, ms, signal) {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    const error = new Error(`no answer within ${ms} ms`);
    error.name = "TimeoutError";
    controller.abort(error);
  }, ms);
  const onAbort = () => controller.abort(abortError(signal));
  if (signal) {
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  }
  try {
    const response = await fetchImpl(url, { ...init, signal: controller.signal });
    // Read the body inside the time limit too.
    const body = await response.text();
    return { status: response.status, ok: response.ok, body };
  } finally {
    clearTimeout(timer);
    if (signal) signal.removeEventListener("abort", onAbort);
  }
}

export function join(base, path) {
  return base.replace(/\/+$/, "") + path;
}

export function jsonBody(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function errorCode(text) {
  const body = jsonBody(text);
  const error = body && typeof body === "object" ? body.error : null;
  return error && typeof error === "object" ? error.code ?? null : null;
}

export function formatSeconds(seconds) {
  return String(Number(seconds.toPrecision(6)));
}
