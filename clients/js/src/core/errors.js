// Errors the recovery flow tells apart: a thread that is gone (final), and failures
// worth another try (network errors, timeouts, HTTP errors, garbled bodies).

/** The server says the thread does not exist: nothing to recover. */
export class ThreadGone extends Error {
  constructor(threadId) {
    super(`thread ${JSON.stringify(threadId)} not found`);
    this.name = "ThreadGone";
    this.threadId = threadId;
  }
}

/** The route says the run is not one of the thread's (404 `run_not_found`): final too. */
export class RunGone extends ThreadGone {
  constructor(threadId, runId) {
    super(threadId);
    this.message = `run ${JSON.stringify(runId)} of thread ${JSON.stringify(threadId)} not found`;
    this.name = "RunGone";
    this.runId = runId;
  }
}

/** No answer could be read before the deadline. */
export class Unrecoverable extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "Unrecoverable";
  }
}

/** A non-2xx answer; retryable during F2/F3. */
export class HttpStatusError extends Error {
  constructor(status, url, body = "") {
    super(`HTTP ${status} from ${url}${body ? `: ${String(body).slice(0, 200)}` : ""}`);
    this.name = "HttpStatusError";
    this.status = status;
  }
}

/** No byte arrived on the stream for `stallTimeout` ms. */
export class StallError extends Error {
  constructor(ms) {
    super(`no data for ${ms} ms: stream stalled`);
    this.name = "StallError";
  }
}

/** Failures worth another try: network errors, timeouts, HTTP errors, garbled bodies. */
export function isRetryable(error) {
  if (error instanceof ThreadGone) return false;
  if (error instanceof HttpStatusError || error instanceof StallError) return true;
  if (error instanceof TypeError || error instanceof SyntaxError) return true; // "Failed to fetch", bad JSON
  const name = error && error.name;
  return name === "AbortError" || name === "TimeoutError";
}

export function describe(error) {
  if (error == null) return null;
  const cause = error.cause && error.cause.message ? ` (${error.cause.message})` : "";
  return `${error.name || "Error"}: ${error.message}${cause}`;
}
