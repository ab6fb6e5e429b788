// The route's SDK clients (src/route/clients.js): one per caller's credentials, reused.

import assert from "node:assert/strict";
import { test } from "node:test";

import { MAX_CLIENTS, callerHeaders, callerKey, clientFor } from "../../src/route/clients.js";

const request = (headers) => new Request("http://langgraph.test/api/threads/t/final-answer", { headers });

test("the caller's headers are passed on, never those of its request", () => {
  const headers = callerHeaders(request({ Authorization: "Bearer a", "If-None-Match": '"x"', Accept: "*/*", "X-Tenant": "t" }));
  assert.deepEqual(headers, { authorization: "Bearer a", "x-tenant": "t" });
});

test("one client per credentials: reused by the same caller, never by another", () => {
  const alice = clientFor(request({ Authorization: "Bearer alice", "X-Tenant": "t" }));
  assert.equal(clientFor(request({ "X-Tenant": "t", Authorization: "Bearer alice", "If-None-Match": '"x"' })), alice);
  assert.notEqual(clientFor(request({ Authorization: "Bearer bob", "X-Tenant": "t" })), alice);
  assert.notEqual(clientFor(request({ Authorization: "Bearer alice", "X-Tenant": "u" })), alice);
  assert.notEqual(clientFor(request({ Authorization: "Bearer alice" })), alice);
  assert.notEqual(clientFor(request({ Authorization: "Bearer alice", "X-Tenant": "t" }), { apiUrl: "http://other.test" }), alice);
  assert.notEqual(callerKey(request({ Authorization: "Bearer alice" })), callerKey(request({})));
});

test("a client given is used as given", () => {
  const given = { threads: {}, runs: {} };
  assert.equal(clientFor(request({}), { client: given }), given);
  assert.equal(clientFor(request({}), { client: () => given }), given);
});

test("the clients kept are bounded: the least recently used goes", () => {
  const first = clientFor(request({ Authorization: "Bearer first" }));
  for (let i = 0; i < MAX_CLIENTS; i += 1) clientFor(request({ Authorization: `Bearer user${i}` }));
  assert.notEqual(clientFor(request({ Authorization: "Bearer first" })), first);
});
