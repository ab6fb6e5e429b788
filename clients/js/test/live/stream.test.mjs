// streamWithRecovery against a real `langgraph dev` behind fault-injecting proxies; run by
// tests/js/test_live.py, which sets:
//   EVOSCI_DIRECT_URL        a real `langgraph dev` with the final-answer route
//   EVOSCI_FAULT_PROXIES     JSON {fault name: proxy base URL}; each proxy breaks only the
//                            first run stream through it, later connections pass through
//   EVOSCI_NO_ROUTE_URL      (optional) a `langgraph dev` WITHOUT the route (F2a)
//   EVOSCI_STALL_TIMEOUT_MS  (optional) stall timeout for the streams, default 2000

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { streamWithRecovery } from "../../src/core/index.js";
import { direct } from "./direct.mjs";
const DIRECT = process.env.EVOSCI_DIRECT_URL;
const FAULT_PROXIES = JSON.parse(process.env.EVOSCI_FAULT_PROXIES || "{}");
const NO_ROUTE = process.env.EVOSCI_NO_ROUTE_URL;
const STALL_TIMEOUT_MS = Number(process.env.EVOSCI_STALL_TIMEOUT_MS || 2000);
const ASSISTANT = "EvoScientist";

async function postJson(url, body) {
  const response = await direct(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.ok, true, `POST ${url}: ${response.status}`);
  return response.json();
}

async function getJson(url) {
  const response = await direct(url);
  return { status: response.status, body: await response.json() };
}

function ask(question) {
  return { messages: [{ role: "user", content: question }] };
}

// One fault at a time: `langgraph dev` runs one run at a time (n_jobs_per_worker=1), and a
// queued run's stream is silent (a heartbeat every 5 s) — a stall at a 2 s stall timeout.
test("integration: through every fault, the client ends with the checkpoint's answer", {
  skip: !DIRECT || Object.keys(FAULT_PROXIES).length === 0 ? "EVOSCI_DIRECT_URL / EVOSCI_FAULT_PROXIES not set" : false,
}, async (t) => {
  for (const [name, proxyUrl] of Object.entries(FAULT_PROXIES)) {
      await t.test(name, async () => {
        const { thread_id: threadId } = await postJson(`${DIRECT}/threads`, {});
        const question = `WebUI fault ${name} ${randomUUID().slice(0, 8)}: what should the control be?`;
        const updates = [];
        const result = await streamWithRecovery({
          url: proxyUrl,
          threadId,
          assistantId: ASSISTANT,
          input: ask(question),
          maxWait: 60_000,
          stallTimeout: STALL_TIMEOUT_MS,
          onUpdate: (text) => updates.push(text),
        });
        const diagnostics = JSON.stringify({ ...result, content: `${result.content.length} chars` });
        const truth = await getJson(
          `${DIRECT}/api/threads/${threadId}/final-answer?run_id=${result.run_id}&wait=60`,
        );
        assert.equal(truth.status, 200);
        assert.equal(truth.body.complete, true, diagnostics);
        assert.equal(truth.body.status, "success", diagnostics);
        assert.ok(truth.body.content.includes(`You asked: ${question}`), "this turn's answer");
        assert.equal(result.content, truth.body.content, diagnostics);
        assert.equal(result.complete, true, diagnostics);
        assert.equal(result.status, "success", diagnostics);
        assert.equal(updates.at(-1), result.content, "the last text shown is the answer");
        assert.ok(result.drops.length >= 1 || result.streamError, `the fault fired: ${diagnostics}`);
        assert.equal(result.truncated, true);
        t.diagnostic(`${name}: ${diagnostics}`);
      });
  }
});

test("integration: a server without the route answers through raw state (F2a)", {
  skip: NO_ROUTE ? false : "EVOSCI_NO_ROUTE_URL not set",
}, async (t) => {
  const { thread_id: threadId } = await postJson(`${NO_ROUTE}/threads`, {});
  const probe = await getJson(`${NO_ROUTE}/api/threads/${threadId}/final-answer`);
  assert.equal(probe.status, 404, "this server has no route");
  assert.notEqual(probe.body?.error?.code, "thread_not_found");
  const question = `WebUI F2a ${randomUUID().slice(0, 8)}: which baseline?`;
  const updates = [];
  const result = await streamWithRecovery({
    url: NO_ROUTE,
    threadId,
    assistantId: ASSISTANT,
    input: ask(question),
    maxWait: 60_000,
    stallTimeout: STALL_TIMEOUT_MS,
    onUpdate: (text) => updates.push(text),
  });
  assert.equal(result.source, "api");
  assert.equal(result.complete, true);
  assert.equal(result.status, "success");
  // Independently: the state's last AI message, its text blocks joined.
  const { body: stateBody } = await getJson(`${NO_ROUTE}/threads/${threadId}/state`);
  const last = stateBody.values.messages.filter((m) => m.type === "ai").at(-1);
  const text = Array.isArray(last.content)
    ? last.content.filter((b) => b.type === "text").map((b) => b.text).join("")
    : last.content;
  assert.ok(text.includes(`You asked: ${question}`));
  assert.equal(result.content, text);
  assert.equal(result.run_id, stateBody.metadata.run_id);
  assert.equal(updates.at(-1), result.content);
  t.diagnostic(JSON.stringify({ ...result, content: `${result.content.length} chars` }));
});
