// The route's responses: error shape, ETags, the plain-text form (http/responses.py).

import assert from "node:assert/strict";
import { test } from "node:test";

import { answerEtag, answerResponse, errorResponse, etagMatches, headerSafe } from "../../src/route/responses.js";

const ANSWER = {
  content: "The answer.",
  completed_at: "2026-12-05T10:00:00+00:00",
  complete: true,
  status: "success",
  thread_id: "t",
  run_id: "r\r\n1",
  checkpoint_id: "c1",
  message_id: "m1",
  updated_at: "2026-12-05T10:00:00+00:00",
  source: "api",
  error: null,
  interrupts: [],
  reasoning: "thought",
};
const query = (extra = {}) => ({ threadId: "t", runId: null, wait: 0, includeReasoning: false, format: "json", ...extra });

test("errors: the documented shape; a retryable one says when to retry", async () => {
  const response = errorResponse(503, "store_unavailable", "retry shortly", true);
  assert.equal(response.status, 503);
  assert.equal(response.headers.get("retry-after"), "1");
  assert.equal(response.headers.get("cache-control"), "no-store");
  assert.deepEqual(await response.json(), {
    detail: "retry shortly",
    error: { code: "store_unavailable", message: "retry shortly", retryable: true },
  });
  assert.equal(errorResponse(404, "thread_not_found", "x", false).headers.get("retry-after"), null);
});

test("JSON: reasoning only when asked; an ETag per representation; 304 while it matches", async () => {
  const plain = await answerResponse(ANSWER, query(), null);
  const body = await plain.json();
  assert.equal("reasoning" in body, false);
  assert.equal(body.content, "The answer.");
  const withReasoning = await (await answerResponse(ANSWER, query({ includeReasoning: true }), null)).json();
  assert.equal(withReasoning.reasoning, "thought");
  const etag = plain.headers.get("etag");
  assert.match(etag, /^"[0-9a-f]{24}-json"$/);
  assert.notEqual(etag, await answerEtag(ANSWER, "text"));
  const again = await answerResponse(ANSWER, query(), etag);
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("etag"), etag);
  assert.equal((await answerResponse({ ...ANSWER, reasoning: "other" }, query(), etag)).status, 200);
  assert.equal(etagMatches(`W/${etag}, "x"`, etag), true);
  assert.equal(etagMatches("*", etag), true);
});

test("text: content as the body, the rest in headers, percent-encoded where a header could not hold it", async () => {
  const response = await answerResponse({ ...ANSWER, content: "Ünïcode ✓" }, query({ format: "text" }), null);
  assert.equal(response.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(await response.text(), "Ünïcode ✓");
  assert.equal(response.headers.get("x-answer-status"), "success");
  assert.equal(response.headers.get("x-answer-complete"), "true");
  assert.equal(response.headers.get("x-answer-run-id"), "r%0D%0A1");
  assert.equal(response.headers.get("x-answer-error"), null);
  assert.equal(headerSafe("100% é"), "100%25%20%C3%A9");
  assert.equal(decodeURIComponent(headerSafe("100% é")), "100% é");
});

test("HEAD: the headers alone", async () => {
  const response = await answerResponse(ANSWER, query(), null, "HEAD");
  assert.equal(response.status, 200);
  assert.equal(await response.text(), "");
});
