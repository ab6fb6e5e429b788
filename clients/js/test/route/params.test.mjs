// The route's parameters, as the Python route validates them (http/params.py).

import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidRequest, parseQuery, pythonRepr } from "../../src/route/params.js";

const parse = (query, threadId = "t") => parseQuery(threadId, new URLSearchParams(query));
const refusal = (query, threadId) => {
  try {
    parse(query, threadId);
  } catch (error) {
    assert.ok(error instanceof InvalidRequest);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(query)}`);
};

test("defaults, and a parameter given empty is its default", () => {
  const defaults = { threadId: "t", runId: null, wait: 0, includeReasoning: false, format: "json" };
  assert.deepEqual(parse(""), defaults);
  assert.deepEqual(parse("wait=&run_id=&format=&include_reasoning="), defaults);
  assert.deepEqual(parse("run_id=r1&wait=2.5&include_reasoning=YES&format=TEXT"), {
    threadId: "t",
    runId: "r1",
    wait: 2.5,
    includeReasoning: true,
    format: "text",
  });
  assert.equal(parse("wait=1e1").wait, 10);
});

test("each bad parameter is named, in the Python route's words", () => {
  assert.equal(refusal("wait=abc"), "wait must be a number of seconds, got 'abc'");
  assert.equal(refusal("wait=0x10"), "wait must be a number of seconds, got '0x10'");
  for (const wait of ["61", "-1", "nan", "inf"]) {
    assert.equal(refusal(`wait=${wait}`), "wait must be between 0 and 60 seconds");
  }
  assert.equal(refusal("format=xml"), "format must be one of json, text, got 'xml'");
  assert.equal(refusal("include_reasoning=maybe"), "include_reasoning must be true or false, got 'maybe'");
  assert.equal(refusal("run_id=a&run_id=b"), "run_id given more than once");
});

test("ids: 1-256 printable characters, no '/', no edge spaces", () => {
  assert.equal(parse("", "a b").threadId, "a b");
  assert.equal(parse("", "é".repeat(256)).threadId.length, 256);
  assert.equal(refusal("", "x".repeat(257)), "thread_id must be 1-256 characters long");
  for (const id of [" a", "a ", "a\nb", "a/b", "a\u200bb", "a\u00a0b"]) {
    assert.match(refusal("", id), /^thread_id must be printable characters/);
  }
  assert.match(refusal("run_id=a%0Ab"), /^run_id must be printable/);
});

test("pythonRepr quotes as Python's repr does", () => {
  assert.equal(pythonRepr("abc"), "'abc'");
  assert.equal(pythonRepr("it's"), `"it's"`);
  assert.equal(pythonRepr(`a'b"c`), `'a\\'b"c'`);
  assert.equal(pythonRepr("a\\b"), "'a\\\\b'");
});
