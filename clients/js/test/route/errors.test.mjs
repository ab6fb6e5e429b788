// The route's error table (src/route/errors.js) as the route answers from it; that it
// equals the Python table is tests/http/test_errors.py's to check.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ROUTE_ERRORS, errorRow } from "../../src/route/errors.js";
import { handleFinalAnswer } from "../../src/route/routes.js";

const URL_OF = (query = "") => `http://localhost/api/threads/t1/final-answer${query}`;

/** A langgraph SDK client whose every read rejects with `error`. */
function failingClient(error) {
  const fail = async () => {
    throw error;
  };
  return { threads: { search: fail, getState: fail, getHistory: fail }, runs: { list: fail, get: fail } };
}

async function errorOf(response) {
  const body = await response.json();
  assert.deepEqual(Object.keys(body).sort(), ["detail", "error"]);
  assert.equal(body.detail, body.error.message);
  return body.error;
}

test("every row is reachable: codes are unique and no row's exception is answered by an earlier row", () => {
  assert.equal(new Set(ROUTE_ERRORS.map((row) => row.code)).size, ROUTE_ERRORS.length);
  for (const row of ROUTE_ERRORS.filter((candidate) => candidate.exception !== null)) {
    assert.equal(errorRow(new row.exception("x")), row, row.code);
  }
});

test("method_not_allowed: the row's status, code and message, with Allow", async () => {
  const response = await handleFinalAnswer(new Request(URL_OF(), { method: "POST" }), "t1");
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "GET, HEAD");
  assert.deepEqual(await errorOf(response), {
    code: "method_not_allowed",
    message: "POST is not allowed here; use GET or HEAD",
    retryable: false,
  });
});

test("invalid_request: the parameter's own message", async () => {
  const response = await handleFinalAnswer(new Request(URL_OF("?wait=soon")), "t1");
  assert.equal(response.status, 422);
  const error = await errorOf(response);
  assert.equal(error.code, "invalid_request");
  assert.match(error.message, /wait/);
});

test("thread_not_found: the thread quoted as the Python route quotes it", async () => {
  const gone = Object.assign(new Error("not found"), { status: 404 });
  const response = await handleFinalAnswer(new Request(URL_OF()), "t1", { client: failingClient(gone) });
  assert.equal(response.status, 404);
  assert.deepEqual(await errorOf(response), { code: "thread_not_found", message: "thread 't1' not found", retryable: false });
});

test("store_unavailable: retryable, with Retry-After; what no row answers is logged and answered so", async (t) => {
  const logged = t.mock.method(console, "error", () => {});
  for (const [error, logs] of [
    [new Error("connect ECONNREFUSED"), 0], // the reader's StoreUnavailable
    [Object.assign(new Error("who are you"), { status: 401 }), 1], // no row's
  ]) {
    const before = logged.mock.callCount();
    const response = await handleFinalAnswer(new Request(URL_OF()), "t1", { client: failingClient(error) });
    assert.equal(response.status, 503);
    assert.equal(response.headers.get("retry-after"), "1");
    assert.deepEqual(await errorOf(response), {
      code: "store_unavailable",
      message: "the session store could not be read; retry shortly",
      retryable: true,
    });
    assert.equal(logged.mock.callCount() - before, logs);
  }
});
