// The assistant-ui stream callback (`createLangGraphStreamWithRecovery`) against a real
// `langgraph dev`, driven as `useLangGraphRuntime` drives it (an `initialize` that names
// the thread, an abort signal), on the JS SDK `Client` of the matrix, through proxies
// that cut its run streams. Run by tests/js/test_live.py, which sets:
//   EVOSCI_DIRECT_URL   a real `langgraph dev`
//   EVOSCI_AUI_PROXIES  JSON {"<fault>": url}: a proxy breaking the run streams through it

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Client } from "@langchain/langgraph-sdk";

import { createLangGraphStreamWithRecovery } from "../../src/assistant-ui/index.js";
import { answerText } from "../../src/core/index.js";
import { direct } from "./direct.mjs";

const DIRECT = process.env.EVOSCI_DIRECT_URL;
const PROXIES = JSON.parse(process.env.EVOSCI_AUI_PROXIES || "{}");
const ASSISTANT = "EvoScientist";

async function json(path) {
  const response = await direct(`${DIRECT}${path}`);
  assert.equal(response.status, 200, path);
  return response.json();
}

for (const [name, url] of Object.entries(PROXIES)) {
  test(`${name}: the turn ends on the route's answer, one run, its tokens streamed`, { skip: !DIRECT }, async () => {
    const { thread_id: threadId } = await new Client({ apiUrl: DIRECT }).threads.create();
    const stream = createLangGraphStreamWithRecovery({ client: new Client({ apiUrl: url }), assistantId: ASSISTANT });
    const question = { id: randomUUID(), type: "human", content: `assistant-ui live ${name}: which control?` };
    const config = { initialize: async () => ({ externalId: threadId }), abortSignal: new AbortController().signal };
    const events = [];
    for await (const event of await stream([question], config)) events.push(event);

    const runs = await json(`/threads/${threadId}/runs?limit=10`);
    assert.equal(runs.length, 1, "one run for one submit");
    assert.equal(runs[0].status, "success", "the drop did not cancel the run");
    const route = `/api/threads/${threadId}/final-answer?run_id=${runs[0].run_id}`;
    const expected = await (await direct(`${DIRECT}${route}&format=text`)).text();
    const last = events.filter((event) => event.event === "values").at(-1);
    assert.ok(last, `no values event after the stream: ${events.map((e) => e.event).join(",")}`);
    assert.equal(answerText(last.data.messages.at(-1).content), expected);
    const partials = events.filter((event) => event.event === "messages/partial");
    if (name !== "cut before the response") assert.ok(partials.length >= 5, "tokens streamed before the cut");
  });
}
