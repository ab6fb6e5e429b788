// The text events that end a cut run's AG-UI text on the route's answer.

import assert from "node:assert/strict";
import { test } from "node:test";

import { TextLedger } from "../../src/ag-ui/ledger.js";

const answer = (content, messageId = "m") => ({ content, message_id: messageId, run_id: "r" });

function sent(...events) {
  const ledger = new TextLedger();
  for (const event of events) ledger.record(event);
  return ledger;
}

const start = (messageId) => ({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" });
const delta = (messageId, text) => ({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: text });
const end = (messageId) => ({ type: "TEXT_MESSAGE_END", messageId });

test("an open answer cut mid-text gets the rest, then its end", () => {
  const ledger = sent(start("m"), delta("m", "Hello "), delta("m", "wor"));
  assert.deepEqual(ledger.completion(answer("Hello world")), [delta("m", "ld"), end("m")]);
});

test("an open answer whose text is already whole is only ended", () => {
  const ledger = sent(start("m"), delta("m", "Hello world"));
  assert.deepEqual(ledger.completion(answer("Hello world")), [end("m")]);
});

test("text that is not a prefix of the answer (a doubled replay) is only ended", () => {
  const ledger = sent(start("m"), delta("m", "Hello Hello "));
  assert.deepEqual(ledger.completion(answer("Hello world")), [end("m")]);
});

test("a stream that named the message otherwise: the newest started one is the answer's", () => {
  const ledger = sent(start("t"), delta("t", "tool talk"), end("t"), start("chunk"), delta("chunk", "Hel"));
  assert.equal(ledger.answerMessage(answer("Hello", "stored-id")), "chunk");
  assert.deepEqual(ledger.completion(answer("Hello", "stored-id")), [delta("chunk", "lo"), end("chunk")]);
});

test("an open message that is not the answer's is ended without text", () => {
  const ledger = sent(start("m"), delta("m", "Hel"), start("other"), delta("other", "x"));
  assert.deepEqual(ledger.completion(answer("xyz", "other")), [
    end("m"),
    delta("other", "yz"),
    end("other"),
  ]);
});

test("an answer the client never saw a word of is sent whole", () => {
  assert.deepEqual(sent().completion(answer("Hello")), [start("m"), delta("m", "Hello"), end("m")]);
  assert.deepEqual(sent().completion(answer("")), [], "no text, no message");
  assert.deepEqual(sent().completion(answer("Hello", null)), [], "an answer without an id: the snapshot");
});

test("ended messages stay ended: nothing to send", () => {
  const ledger = sent(start("m"), delta("m", "Hello world"), end("m"));
  assert.deepEqual(ledger.open(), []);
  assert.deepEqual(ledger.completion(answer("Hello world")), []);
});
