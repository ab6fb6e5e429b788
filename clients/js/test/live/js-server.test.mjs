// streamWithRecovery against LangGraph's JavaScript server (`langgraphjs dev`, the route
// mounted by `@evoscientist/final-answer/hono`) behind fault-injecting proxies; run by
// tests/js/test_js_server.py, which sets:
//   EVOSCI_JS_SERVER_URL  the JS server itself
//   EVOSCI_JS_PROXIES     JSON {fault name: proxy base URL}

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { streamWithRecovery } from "../../src/core/index.js";
import { direct } from "./direct.mjs";

const SERVER = process.env.EVOSCI_JS_SERVER_URL;
const PROXIES = JSON.parse(process.env.EVOSCI_JS_PROXIES || "{}");
const ASSISTANT = "contract";
// The run's end is seen this soon, not after the SDK's or the server's retries.
const END_SEEN_WITHIN_MS = 1500;

async function json(url, init = undefined) {
  const response = await direct(url, init);
  assert.equal(response.ok, true, `${url}: ${response.status}`);
  return response.json();
}

test("the JS server: through each fault, the client ends on the route's answer", {
  skip: SERVER && Object.keys(PROXIES).length ? false : "EVOSCI_JS_SERVER_URL / EVOSCI_JS_PROXIES not set",
}, async (t) => {
  for (const [name, proxyUrl] of Object.entries(PROXIES)) {
    await t.test(name, async () => {
      const { thread_id: threadId } = await json(`${SERVER}/threads`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      const question = `JS server ${name} ${randomUUID().slice(0, 8)} [slow]`;
      const updates = [];
      const result = await streamWithRecovery({
        url: proxyUrl,
        threadId,
        assistantId: ASSISTANT,
        input: { messages: [{ role: "user", content: question }] },
        maxWait: 60_000,
        stallTimeout: 2000,
        onUpdate: (text) => updates.push(text),
      });
      const endedAt = Date.now();
      const diagnostics = JSON.stringify({ ...result, content: `${result.content.length} chars`, updates: updates.length });
      const truth = await json(`${SERVER}/api/threads/${threadId}/final-answer?run_id=${result.run_id}`);
      assert.equal(truth.status, "success", diagnostics);
      assert.ok(truth.content.startsWith(`Answer to "${question}"`), "this turn's answer");
      assert.equal(result.content, truth.content, diagnostics);
      assert.equal(result.status, "success", diagnostics);
      assert.ok(result.drops.length >= 1 || result.streamError, `the fault fired: ${diagnostics}`);
      const runs = await json(`${SERVER}/threads/${threadId}/runs`);
      assert.equal(runs.length, 1, "one run per submit");
      // Tokens append: each text shown extends the one before (the JS server types its
      // chunks `ai`, which a reader once took for whole messages, each replacing the last).
      for (let i = 1; i < updates.length; i += 1) {
        assert.ok(updates[i].startsWith(updates[i - 1]), `shown ${JSON.stringify(updates[i - 1])} then ${JSON.stringify(updates[i])}`);
      }
      const run = await json(`${SERVER}/threads/${threadId}/runs/${result.run_id}`);
      const late = endedAt - Date.parse(run.updated_at);
      assert.ok(late < END_SEEN_WITHIN_MS, `the run's end seen ${late} ms after it; ${diagnostics}`);
      t.diagnostic(`${name}: end seen ${late} ms after the run's; ${diagnostics}`);
    });
  }
});
