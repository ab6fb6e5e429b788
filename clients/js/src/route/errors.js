// The route's errors, one row each: the exception behind it, its HTTP status, `code`,
// message, `retryable` flag and log level. The JS route answers from these rows; the
// twin of evoscientist_final_answer/http/errors.py, row for row (tests/http/test_errors.py).

import { RunNotFound } from "../answer/run-liveness.js";
import { InvalidRequest, pythonRepr } from "./params.js";
import { StoreUnavailable, ThreadNotFound } from "./reader.js";
import { errorResponse } from "./responses.js";

/** A method the read-only route refuses (any but GET and HEAD); its message is the method. */
export class MethodNotAllowed extends Error {
  name = "MethodNotAllowed";
}

export class RouteError {
  /**
   * `message({error, threadId, runId})`: what the client reads, no internals.
   * `exception: null`: nothing in the JS route raises it (see `ROUTE_ERRORS`).
   * `log`: the `console` method that logs it; null: a normal answer, not logged.
   */
  constructor({ exception, status, code, message, retryable, log = null }) {
    Object.assign(this, { exception, status, code, message, retryable, log });
    Object.freeze(this);
  }

  response(error, { threadId = null, runId = null } = {}) {
    return errorResponse(this.status, this.code, this.message({ error, threadId, runId }), this.retryable);
  }
}

// In the Python table's order; the first row whose exception matches answers. The rows
// with no exception are the Python route's own: the JS route reads its server's API as
// the caller (no store file, no settings of its own, and the server's auth refuses
// credentials before the route runs), so it never answers them; they stay so that both
// tables hold the one contract.
export const ROUTE_ERRORS = [
  new RouteError({
    exception: MethodNotAllowed,
    status: 405,
    code: "method_not_allowed",
    message: ({ error }) => `${error.message} is not allowed here; use GET or HEAD`,
    retryable: false,
  }),
  new RouteError({
    exception: InvalidRequest,
    status: 422,
    code: "invalid_request",
    message: ({ error }) => error.message,
    retryable: false,
  }),
  new RouteError({
    exception: ThreadNotFound,
    status: 404,
    code: "thread_not_found",
    message: ({ threadId }) => `thread ${pythonRepr(threadId)} not found`,
    retryable: false,
  }),
  new RouteError({
    exception: RunNotFound,
    status: 404,
    code: "run_not_found",
    message: ({ threadId, runId }) => `run ${pythonRepr(runId)} not found on thread ${pythonRepr(threadId)}`,
    retryable: false,
  }),
  new RouteError({
    exception: null,
    status: 401,
    code: "unauthorized",
    message: ({ error }) => error.message,
    retryable: false,
  }),
  new RouteError({
    exception: null,
    status: 503,
    code: "store_damaged",
    message: () => "the session store is damaged (not a database, or corrupt); see the server log",
    retryable: false,
  }),
  new RouteError({
    exception: null,
    status: 503,
    code: "checkpoint_unreadable",
    message: () => "the thread's newest checkpoint cannot be decoded; see the server log",
    retryable: false,
  }),
  new RouteError({
    exception: StoreUnavailable,
    status: 503,
    code: "store_unavailable",
    message: () => "the session store could not be read; retry shortly",
    retryable: true,
  }),
  new RouteError({
    exception: null,
    status: 503,
    code: "misconfigured",
    message: ({ error }) => error.message,
    retryable: false,
  }),
];

/** The row that answers `error`, or null when none does. */
export function errorRow(error) {
  return ROUTE_ERRORS.find((row) => row.exception !== null && error instanceof row.exception) ?? null;
}

/** The row of `code`. */
export function errorRowOf(code) {
  const row = ROUTE_ERRORS.find((candidate) => candidate.code === code);
  if (!row) throw new Error(`no error row has the code ${code}`);
  return row;
}
