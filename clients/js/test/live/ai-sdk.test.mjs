// `LangGraphChatTransport` (./ai-sdk) against a real `langgraph dev` behind
// fault-injecting proxies, its chunks read by the AI SDK's own `readUIMessageStream`;
// run by tests/js/test_ai_sdk.py, which sets:
//   EVOSCI_AI_SERVER_URL  the server itself
//   EVOSCI_AI_ASSISTANT   the graph to run
//   EVOSCI_AI_PROXIES     JSON {fault name: proxy base URL}
//   EVOSCI_AI_DIR         (optional) a prefix holding another `ai` to read with

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

/** `ai` of the lockfile, or the one installed in EVOSCI_AI_DIR (tests/support/jstools.py). */
async function aiPackage() {
  const prefix = process.env.EVOSCI_AI_DIR;
  const root = join(prefix ?? join(import.meta.dirname, "..", ".."), "node_modules", "ai");
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const entry = manifest.exports["."].import ?? manifest.exports["."].default;
  return { version: manifest.version, ...(await import(pathToFileURL(join(root, entry)).href)) };
}

const { version: AI_VERSION, readUIMessageStream } = await aiPackage();

import { LangGraphChatTransport, threadIdOf } from "../../src/ai-sdk/index.js";
import { direct } from "./direct.mjs";

const SERVER = process.env.EVOSCI_AI_SERVER_URL;
const ASSISTANT = process.env.EVOSCI_AI_ASSISTANT;
const PROXIES = JSON.parse(process.env.EVOSCI_AI_PROXIES || "{}");
const skip = SERVER && ASSISTANT ? false : "EVOSCI_AI_SERVER_URL / EVOSCI_AI_ASSISTANT not set";

test("the chunks are read by the `ai` asked for", { skip }, () => {
  assert.equal(AI_VERSION, process.env.EVOSCI_AI_VERSION ?? AI_VERSION);
});

async function json(url, init = undefined) {
  const response = await direct(url, init);
  assert.equal(response.ok, true, `${url}: ${response.status}`);
  return response.json();
}

async function routeText(threadId) {
  const response = await direct(`${SERVER}/api/threads/${threadId}/final-answer?format=text`);
  assert.equal(response.status, 200);
  return { text: await response.text(), status: response.headers.get("x-answer-status") };
}

function userMessage(text) {
  return { id: randomUUID(), role: "user", parts: [{ type: "text", text }] };
}

/** Every chunk of `stream`, and the UI message the AI SDK assembles from them. */
async function read(stream, { until = null } = {}) {
  const [forChunks, forMessages] = stream.tee();
  const chunks = [];
  const reading = (async () => {
    const reader = forChunks.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      chunks.push(value);
      if (until && until(chunks)) return reader.cancel();
    }
  })();
  let message = null;
  for await (const assembled of readUIMessageStream({ stream: forMessages })) message = assembled;
  await reading;
  return { chunks, message };
}

const lastText = (message) => message.parts.filter((part) => part.type === "text").at(-1)?.text ?? "";
const textEvents = (chunks) => chunks.filter((chunk) => chunk.type === "text-delta").length;

test("through each fault, the chunk stream ends on the route's exact answer, then finish", { skip }, async (t) => {
  for (const [name, proxyUrl] of Object.entries(PROXIES)) {
    await t.test(name, async () => {
      const chatId = `chat-${randomUUID().slice(0, 8)}`; // useChat's own ids are no UUIDs
      const transport = new LangGraphChatTransport({
        apiUrl: proxyUrl,
        assistantId: ASSISTANT,
        stallTimeout: 2000,
        maxWait: 60_000,
      });
      const question = `AI SDK ${name} ${randomUUID().slice(0, 8)}: what should the control be?`;
      const stream = await transport.sendMessages({
        chatId,
        trigger: "submit-message",
        messageId: undefined,
        messages: [userMessage(question)],
        abortSignal: undefined,
      });
      const { chunks, message } = await read(stream);
      const threadId = await threadIdOf(chatId);
      const truth = await routeText(threadId);
      const seen = JSON.stringify(chunks.map((chunk) => chunk.type));
      assert.equal(truth.status, "success");
      assert.equal(lastText(message), truth.text, seen);
      assert.equal(chunks.at(-1).type, "finish", seen);
      assert.ok(!chunks.some((chunk) => chunk.type === "error"), seen);
      // The reasoning is a part of its own, never in the answer's text.
      assert.ok(message.parts.some((part) => part.type === "reasoning" && part.text), seen);
      assert.ok(!lastText(message).includes("<think>"));
      const runs = await json(`${SERVER}/threads/${threadId}/runs`);
      assert.equal(runs.length, 1, "one run per submit");
    });
  }
});

test("a new transport resumes a run whose consumer went away: the exact answer, once, in its message", { skip }, async () => {
  const chatId = `chat-${randomUUID().slice(0, 8)}`;
  const options = { apiUrl: SERVER, assistantId: ASSISTANT, maxWait: 60_000 };
  const first = await new LangGraphChatTransport(options).sendMessages({
    chatId,
    trigger: "submit-message",
    messageId: undefined,
    messages: [userMessage(`Resume ${randomUUID().slice(0, 8)}: what is a control group?`)],
    abortSignal: undefined,
  });
  // The page reads a few tokens, then is gone (a reload: no Stop, no signal).
  const reader = first.getReader();
  let deltas = 0;
  let startId = null;
  while (deltas < 3) {
    const { done, value } = await reader.read();
    if (done) break;
    if (value.type === "start") startId = value.messageId;
    if (value.type === "text-delta") deltas += 1;
  }
  await reader.cancel();

  const again = new LangGraphChatTransport(options);
  assert.equal(again.resumeStreamIsReplay, true);
  const resumed = await again.reconnectToStream({ chatId });
  assert.ok(resumed, "the run's answer to resume");
  const { chunks, message } = await read(resumed);
  const threadId = await threadIdOf(chatId);
  const truth = await routeText(threadId);
  assert.equal(truth.status, "success");
  assert.equal(lastText(message), truth.text);
  assert.equal(message.parts.filter((part) => part.type === "text").length, 1, "the answer once");
  // The whole turn, as its stream showed it: the tool call and its result, the
  // reasoning, then the answer.
  assert.deepEqual(message.parts.map((part) => part.type), ["dynamic-tool", "reasoning", "text"]);
  assert.equal(message.parts[0].state, "output-available");
  assert.ok(message.parts[1].text, "the reasoning's text");
  assert.equal(chunks[0].type, "start");
  assert.ok(startId, "the first page's message had an id");
  assert.equal(chunks[0].messageId, startId, "the resumed message is the one the page held");
  assert.equal(chunks.at(-1).type, "finish");
  const runs = await json(`${SERVER}/threads/${threadId}/runs`);
  assert.equal(runs.length, 1, "resuming runs nothing again");
});

test("a chat the server does not know has nothing to resume", { skip }, async () => {
  const transport = new LangGraphChatTransport({ apiUrl: SERVER, assistantId: ASSISTANT });
  assert.equal(await transport.reconnectToStream({ chatId: `new-${randomUUID().slice(0, 8)}` }), null);
});

test("Stop cancels the run on the server and keeps what was shown", { skip }, async () => {
  const chatId = `chat-${randomUUID().slice(0, 8)}`;
  const stop = new AbortController();
  const transport = new LangGraphChatTransport({ apiUrl: SERVER, assistantId: ASSISTANT });
  const stream = await transport.sendMessages({
    chatId,
    trigger: "submit-message",
    messageId: undefined,
    messages: [userMessage(`Stop ${randomUUID().slice(0, 8)}: what is a control group?`)],
    abortSignal: stop.signal,
  });
  const { chunks, message } = await read(stream, {
    until: (seen) => {
      if (textEvents(seen) === 3) stop.abort();
      return false;
    },
  });
  const shown = lastText(message);
  assert.ok(shown.length > 0, "some text was shown");
  assert.equal(chunks.at(-1).type, "finish");
  const threadId = await threadIdOf(chatId);
  const [run] = await json(`${SERVER}/threads/${threadId}/runs`);
  assert.equal(run.status, "interrupted", "the run was cancelled");
  const truth = await json(`${SERVER}/api/threads/${threadId}/final-answer`);
  assert.notEqual(truth.content, shown, "the run stopped before its answer was whole");
});
