// What a turn the user stopped keeps: the messages the page showed after its question at
// Stop, as shown. A cancelled node writes no message, so the thread's state may hold none
// of them (or more than the user saw): every later list the binding shows gets them back.
// Shape-agnostic: a message is anything with an `id` and a `type`, or a `role`.

import { contentText } from "./text.js";

function isQuestion(message) {
  const type = message && (message.type ?? message.role);
  return type === "human" || type === "user";
}

function questionText(message) {
  return contentText(message.content);
}

/**
 * The turn `messages` (the list as the page showed it at Stop) ends with: its question
 * (`{id, text}`; null when the list has none) and the messages after it. Null when the
 * list is empty.
 */
export function stoppedTurn(messages) {
  const list = Array.isArray(messages) ? messages : [];
  let at = -1;
  for (let i = list.length - 1; i >= 0; i -= 1) {
    if (isQuestion(list[i])) {
      at = i;
      break;
    }
  }
  if (at === -1 && list.length === 0) return null;
  const question =
    at === -1
      ? null
      : Object.freeze({
          id: list[at].id ?? null,
          text: questionText(list[at]),
          message: list[at],
          // The message the question followed (null: it opened the thread): where the
          // turn goes back when a list has lost the question itself.
          after: at > 0 ? (list[at - 1].id ?? null) : null,
          opened: at === 0,
        });
  return Object.freeze({ question, messages: Object.freeze(list.slice(at + 1)) });
}

/**
 * Where a turn whose question `list` lacks goes back: after the message its question
 * followed at Stop, found at or after `from`; at `from` for a turn that opened the
 * thread. -1 when the list lacks that message too (then the turn is not shown there).
 */
function lostQuestionIndex(list, turn, from) {
  if (turn.question.opened) return from;
  const { after } = turn.question;
  if (after == null) return -1;
  const at = list.findIndex((m, i) => i >= from - 1 && m && m.id === after);
  return at === -1 ? -1 : at + 1;
}

/** Where `turn`'s question is in `list`, at or after `from`; -1 when absent. */
function questionIndex(list, turn, from) {
  const { id, text } = turn.question;
  if (id != null) {
    const byId = list.findIndex((m, i) => i >= from && isQuestion(m) && m.id === id);
    if (byId !== -1 || list.some((m) => m && m.id === id)) return byId;
  }
  // Shown before the server echoed it, the question had no id or the binding's own: the
  // list names it by the server's, or by none yet. Its text finds it then.
  return list.findIndex((m, i) => i >= from && isQuestion(m) && questionText(m) === text);
}

/** Where `kept` is in `list` after index `after`: by id, or, without one, only right there. */
function keptAt(list, kept, after) {
  if (kept.id == null) return list[after + 1] === kept ? after + 1 : -1;
  return list.findIndex((m, i) => i > after && m && m.id === kept.id);
}

/**
 * `messages` with every turn of `turns` (oldest first, as `stoppedTurn` made them)
 * showing what it showed at Stop: each kept message in place of the list's message with
 * its id (moved back into its turn if the list has it elsewhere), or, when the list lacks
 * it, inserted after the turn's messages before it (its question first; a turn without
 * a question opens the list). A turn whose question the list lost gets it back after
 * the message it followed at Stop (or is not shown there, when that is gone too). The
 * same array when nothing changes (stable
 * for the app's memos).
 */
export function withStoppedTurns(messages, turns) {
  const list = Array.isArray(messages) ? messages : [];
  if (!turns || turns.length === 0) return list;
  let out = list;
  let from = 0;
  for (const turn of turns) {
    let after = -1;
    if (turn.question !== null) {
      after = questionIndex(out, turn, from);
      if (after === -1) {
        // The list lost the question itself: a binding that fell back, after a Stop, to
        // the messages it held before the turn (the @langchain/svelte WebSocket
        // transport, after a cut) until it rebinds to the thread's state. What the
        // page showed stays: the question goes back where it was, its turn after it.
        const at = lostQuestionIndex(out, turn, from);
        if (at === -1) continue;
        if (out === list) out = list.slice();
        out.splice(at, 0, turn.question.message);
        after = at;
      }
    }
    for (const kept of turn.messages) {
      const at = keptAt(out, kept, after);
      if (at !== after + 1 || out[at] !== kept) {
        if (out === list) out = list.slice();
        // Where the list has it out of its turn (a binding appends what it still holds
        // after the thread's state), it moves back into place.
        if (at !== -1) out.splice(at, 1);
        out.splice(after + 1, 0, kept);
      }
      after += 1;
    }
    from = after + 1;
  }
  return out;
}

/**
 * The turns a page stopped, per thread: `stop(threadId, shown)` records the turn `shown`
 * ends with; `of(threadId)` lists a thread's, oldest first. Kept for the page's life,
 * whatever thread it shows meanwhile.
 */
export class StoppedTurns {
  constructor() {
    this.byThread = new Map();
  }

  stop(threadId, shown) {
    const turn = stoppedTurn(shown);
    if (threadId == null || turn === null) return null;
    const turns = this.byThread.get(threadId) ?? [];
    // Stopping the same turn twice keeps the first: what was shown at the first Stop.
    const last = turns[turns.length - 1];
    if (last && sameQuestion(last, turn)) return last;
    this.byThread.set(threadId, [...turns, turn]);
    return turn;
  }

  of(threadId) {
    return (threadId != null && this.byThread.get(threadId)) || EMPTY;
  }
}

const EMPTY = Object.freeze([]);

function sameQuestion(a, b) {
  if (a.question === null || b.question === null) return a.question === b.question;
  if (a.question.id != null && b.question.id != null) return a.question.id === b.question.id;
  return a.question.text === b.question.text;
}
