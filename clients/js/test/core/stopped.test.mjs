// A turn the user stopped keeps what it showed at Stop, in any later list.

import assert from "node:assert/strict";
import { test } from "node:test";

import { StoppedTurns, stoppedTurn, withStoppedTurns } from "../../src/core/index.js";

const human = (id, content) => ({ type: "human", id, content });
const ai = (id, content, extra = {}) => ({ type: "ai", id, content, ...extra });
const tool = (id, content) => ({ type: "tool", id, content, tool_call_id: "c1" });

const call = ai("a1", "", { tool_calls: [{ id: "c1", name: "search", args: {} }] });
const shownAtStop = [human("h0", "first"), ai("a0", "first answer"), human("h1", "second"), call, tool("t1", "notes"), ai("a2", "The par")];

test("stoppedTurn is the last question and what was shown after it", () => {
  const turn = stoppedTurn(shownAtStop);
  assert.deepEqual(
    { ...turn.question },
    { id: "h1", text: "second", message: shownAtStop[2], after: "a0", opened: false },
  );
  assert.deepEqual(turn.messages.map((m) => m.id), ["a1", "t1", "a2"]);
  assert.equal(turn.messages[2], shownAtStop[5], "the messages as shown, not copies");
  assert.equal(stoppedTurn([]), null);
  assert.deepEqual(stoppedTurn([ai("x", "no question")]).question, null);
});

test("the thread's state lacks the cancelled node's message: it comes back, after its turn", () => {
  const turn = stoppedTurn(shownAtStop);
  // What the thread holds after the cancel, then a next question and its answer.
  const state = [human("h0", "first"), ai("a0", "first answer"), human("h1", "second"), call, tool("t1", "notes"), human("h3", "third"), ai("a3", "third answer")];
  const shown = withStoppedTurns(state, [turn]);
  assert.deepEqual(shown.map((m) => m.id), ["h0", "a0", "h1", "a1", "t1", "a2", "h3", "a3"]);
  assert.equal(shown[5].content, "The par");
  assert.equal(state.length, 7, "the list is not mutated");
});

test("a message the cancel let finish shows only what was shown at Stop", () => {
  const turn = stoppedTurn(shownAtStop);
  const finished = ai("a2", "The partial answer, finished after Stop.");
  const state = [human("h0", "first"), ai("a0", "first answer"), human("h1", "second"), call, tool("t1", "notes"), finished];
  const shown = withStoppedTurns(state, [turn]);
  assert.equal(shown[5], turn.messages[2]);
  assert.equal(shown.length, 6);
});

test("nothing changes: the same array", () => {
  const turn = stoppedTurn(shownAtStop);
  assert.equal(withStoppedTurns(shownAtStop, [turn]), shownAtStop);
  const other = [human("x", "other thread")];
  assert.equal(withStoppedTurns(other, [turn]), other, "a list without the turn's question");
  assert.equal(withStoppedTurns(other, []), other);
});

test("a later turn whose question has not arrived is not hidden", () => {
  const turn = stoppedTurn(shownAtStop);
  // A cut stream of the next run brought its answer before its question.
  const list = [human("h0", "first"), ai("a0", "first answer"), human("h1", "second"), call, tool("t1", "notes"), ai("a4", "next run's answer")];
  const shown = withStoppedTurns(list, [turn]);
  assert.deepEqual(shown.map((m) => m.id), ["h0", "a0", "h1", "a1", "t1", "a2", "a4"]);
});

test("a question the server has not echoed yet is found by its text", () => {
  const turn = stoppedTurn([human(undefined, "local"), ai("a9", "Par")]);
  const state = [human("h9", "local")];
  assert.deepEqual(withStoppedTurns(state, [turn]).map((m) => m.id), ["h9", "a9"]);
  const echoedLater = [human(undefined, "local")];
  assert.deepEqual(withStoppedTurns(echoedLater, [turn]).map((m) => m.content), ["local", "Par"]);
});

test("two stopped turns of one thread, each in its place", () => {
  const first = stoppedTurn([human("h1", "one"), ai("a1", "On")]);
  const second = stoppedTurn([human("h1", "one"), ai("a1", "On"), human("h2", "two"), ai("a2", "Tw")]);
  const state = [human("h1", "one"), human("h2", "two"), human("h3", "three"), ai("a3", "Three.")];
  const shown = withStoppedTurns(state, [first, second]);
  assert.deepEqual(shown.map((m) => `${m.id}:${m.content}`), ["h1:one", "a1:On", "h2:two", "a2:Tw", "h3:three", "a3:Three."]);
});

test("instances of message classes are kept as they are (AG-UI roles too)", () => {
  const turn = stoppedTurn([{ role: "user", id: "u1", content: "q" }, { role: "assistant", id: "m1", content: "Hal" }]);
  const snapshot = [{ role: "user", id: "u1", content: "q" }];
  assert.deepEqual(withStoppedTurns(snapshot, [turn]), [snapshot[0], turn.messages[0]]);
});

test("StoppedTurns keeps each thread's turns, the first Stop of a turn winning", () => {
  const stopped = new StoppedTurns();
  assert.deepEqual(stopped.of("t"), []);
  const turn = stopped.stop("t", [human("h1", "q"), ai("a1", "Pa")]);
  stopped.stop("t", [human("h1", "q"), ai("a1", "Partial, later")]);
  assert.deepEqual(stopped.of("t"), [turn]);
  stopped.stop("t", [human("h1", "q"), ai("a1", "Pa"), human("h2", "q2"), ai("a2", "x")]);
  assert.equal(stopped.of("t").length, 2);
  assert.deepEqual(stopped.of("other"), []);
  assert.equal(stopped.stop(null, [human("h", "q")]), null, "no thread, nothing to keep");
});

test("a question the binding named itself is found by its text once the server renamed it", () => {
  const turn = stoppedTurn([human("local-1", "q"), ai("a1", "Pa")]);
  const state = [human("server-1", "q"), human("server-2", "next")];
  assert.deepEqual(withStoppedTurns(state, [turn]).map((m) => m.id), ["server-1", "a1", "server-2"]);
});

test("a kept message the list holds after a later turn moves back into its own", () => {
  const turn = stoppedTurn([human("h1", "q"), ai("c1", "", { tool_calls: [{ id: "x" }] }), ai("a1", "Pa")]);
  // The binding's store still holds the stopped message; the state's turns come first.
  const list = [human("h1", "q"), ai("c1", ""), human("h2", "next"), ai("a2", "Next."), ai("a1", "Pa")];
  assert.deepEqual(withStoppedTurns(list, [turn]).map((m) => m.id), ["h1", "c1", "a1", "h2", "a2"]);
});

test("a list that lost the stopped turn's question gets the turn back, after the message it followed", () => {
  // @langchain/svelte over WebSocket, Stop after a cut: until it rebinds to the thread's
  // state, the binding shows the messages it held before the turn.
  const turn = stoppedTurn(shownAtStop);
  const before = [human("h0", "first"), ai("a0", "first answer")];
  assert.deepEqual(withStoppedTurns(before, [turn]).map((m) => m.id), ["h0", "a0", "h1", "a1", "t1", "a2"]);
  const opening = stoppedTurn([human("h0", "first"), ai("a0", "Fi")]);
  assert.deepEqual(withStoppedTurns([], [opening]).map((m) => m.id), ["h0", "a0"]);
  // The message it followed is gone too (another history): not shown there.
  assert.deepEqual(withStoppedTurns([human("x", "other")], [turn]).map((m) => m.id), ["x"]);
});
