// The latest turn of a message list and of a thread state: what follows the last human
// message with text, the rule finalAnswer answers by (no network).
import assert from "node:assert/strict";
import test from "node:test";

import { finalAnswer, latestTurn } from "../../src/answer/extract.js";
import { latestTurnOfState } from "../../src/answer/state.js";

const human = (id, content) => ({ type: "human", id, content });
const ai = (id, content) => ({ type: "ai", id, content });

test("latestTurn: after the last human message with text; an empty one opens no turn", () => {
  const messages = [human("h1", "First?"), ai("a1", "One."), human("h2", "Second?"), ai("a2", ""), human("h3", "  "), ai("a3", "Two.")];
  assert.deepEqual(latestTurn(messages).map((m) => m.id), ["a2", "h3", "a3"]);
  assert.equal(finalAnswer(messages).messageId, "a3");
  assert.deepEqual(latestTurn([ai("a0", "Hello.")]).map((m) => m.id), ["a0"]);
  assert.deepEqual(latestTurn(null), []);
});

test("latestTurnOfState: the state's latest turn; none while its input waits in __start__", () => {
  const values = { messages: [human("h1", "First?"), ai("a1", "One."), human("h2", "Second?"), ai("a2", "Two.")] };
  assert.deepEqual(latestTurnOfState({ values, next: [] }).map((m) => m.id), ["a2"]);
  assert.deepEqual(latestTurnOfState({ values, next: ["__start__"] }), []);
  assert.deepEqual(latestTurnOfState({}), []);
});
