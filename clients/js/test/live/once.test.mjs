// Exactly-once submits against a real `langgraph dev`: the JS SDK `Client` (as
// useStreamWithRecovery builds it, `callerOptions.fetch` = exactlyOnceFetch) and
// streamWithRecovery, each submit cut before its response at several timings by a proxy.
// Run by tests/js/test_live.py, which sets:
//   EVOSCI_DIRECT_URL    a real `langgraph dev`
//   EVOSCI_ONCE_PROXIES  JSON {"<timing> / <client>": {url, delayMs}}: a proxy breaking
//                        the first submit through it (client: sdk | bare-sdk | stream)

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Client } from "@langchain/langgraph-sdk";

import { REQUEST_ID_KEY, exactlyOnceFetch, streamWithRecovery } from "../../src/core/index.js";
import { direct } from "./direct.mjs";

const DIRECT = process.env.EVOSCI_DIRECT_URL;
const PROXIES = JSON.parse(process.env.EVOSCI_ONCE_PROXIES || "{}");
const ASSISTANT = "EvoScientist";
// Each case has its own thread and proxy: they run side by side (most of a case is the
// lookup window and the wait for a late request, not work).
const CASES_AT_ONCE = 5;

const ask = (question) => ({ messages: [{ role: "user", content: question }] });

async function runsOf(threadId) {
  const response = await direct(`${DIRECT}/threads/${threadId}/runs?limit=100`);
  assert.equal(response.status, 200);
  return response.json();
}

async function settled(threadId, runId) {
  const url = `${DIRECT}/api/threads/${threadId}/final-answer?run_id=${runId}&wait=60`;
  return (await direct(url)).json();
}

/** What a useStream app does: stream the run through the SDK, tagged with a request id. */
async function submitWithSdk(url, threadId, question, once) {
  const callerOptions = once ? { fetch: exactlyOnceFetch() } : {};
  const sdk = new Client({ apiUrl: url, callerOptions });
  let runId = null;
  let events = 0;
  for await (const part of sdk.runs.stream(threadId, ASSISTANT, {
    input: ask(question),
    streamMode: ["messages-tuple", "values"],
    streamResumable: true,
    metadata: { [REQUEST_ID_KEY]: randomUUID() },
    onRunCreated: (meta) => {
      runId = meta.run_id;
    },
  })) {
    if (part.event !== "metadata") events += 1;
  }
  return { runId, events };
}

test("a submit cut before its response makes one run per request id", {
  skip: !DIRECT || !Object.keys(PROXIES).length ? "EVOSCI_DIRECT_URL / EVOSCI_ONCE_PROXIES not set" : false,
  concurrency: CASES_AT_ONCE,
}, async (t) => {
  await Promise.all(Object.entries(PROXIES).map(([name, { url, delayMs }]) =>
    t.test(name, async () => {
      const client = name.split(" / ").at(-1);
      const { thread_id: threadId } = await new Client({ apiUrl: DIRECT }).threads.create();
      const question = `Once ${name} ${randomUUID().slice(0, 8)}: which baseline?`;
      let runId;
      let shown = null;
      let bareError = null;
      if (client === "stream") {
        const result = await streamWithRecovery({
          url, threadId, assistantId: ASSISTANT, input: ask(question), maxWait: 60_000,
        });
        runId = result.run_id;
        shown = result;
        assert.ok(result.resubmitted, JSON.stringify(result.drops));
      } else if (client === "bare-sdk") {
        // The SDK's own answer to the cut: SDK 1.9 re-sends the POST (a second run); newer
        // ones (1.15) re-send only a request that never connected, and fail the stream.
        try {
          await submitWithSdk(url, threadId, question, false);
        } catch (error) {
          bareError = error;
        }
      } else {
        const streamed = await submitWithSdk(url, threadId, question, true);
        runId = streamed.runId;
        assert.ok(streamed.events > 0, "the stream showed the run");
      }
      // A late request has reached the server by now: whatever it made is listed.
      await new Promise((resolve) => setTimeout(resolve, delayMs + 200));
      const runs = await runsOf(threadId);
      const perRequest = {};
      for (const run of runs) {
        const id = (run.metadata || {})[REQUEST_ID_KEY];
        perRequest[id] = (perRequest[id] || 0) + 1;
      }
      t.diagnostic(`${name}: ${runs.length} run(s); ${JSON.stringify(perRequest)}`);
      if (client === "bare-sdk") {
        // The defect, kept in view: the SDK's own retry re-sent the POST; or, where the SDK
        // no longer does, the run it made was streamed to nobody and the submit failed.
        if (bareError === null) assert.equal(runs.length, 2, "the bare SDK made a second run");
        else assert.equal(runs.length, 1, `the bare SDK failed (${bareError.name}) after one run`);
        t.diagnostic(`${name}: ${bareError ? `failed: ${bareError.name}` : "re-sent the POST"}`);
        return;
      }
      assert.equal(runs.length, 1, JSON.stringify(perRequest));
      assert.ok(runId, "the run was named");
      assert.equal(runs[0].run_id, runId);
      const answer = await settled(threadId, runId);
      assert.equal(answer.status, "success");
      assert.ok(answer.content.includes(`You asked: ${question}`));
      if (shown) assert.equal(shown.content, answer.content);
    })));
});
