// Replace, never append: put the route's authoritative answer text into the message list
// a useStream app renders, keeping everything else about each message (id, tool calls,
// reasoning blocks, metadata).

import { answerText, splitThink } from "./text.js";

function isTextBlock(block) {
  return typeof block === "string" || (block && block.type === "text");
}

/** `message` with its answer text replaced by `text` (reasoning and tool blocks kept). */
export function replaceText(message, text) {
  const content = message.content;
  let next;
  if (typeof content === "string" || content == null) {
    const current = content ?? "";
    // A leading inline <think> is reasoning, not answer: it stays in front.
    const thinking = current.slice(0, current.length - splitThink(current)[0].length);
    next = thinking + text;
  } else if (Array.isArray(content)) {
    next = [];
    let placed = false;
    for (const block of content) {
      if (!isTextBlock(block)) next.push(block);
      else if (!placed) {
        next.push({ type: "text", text });
        placed = true;
      }
    }
    if (!placed) next.push({ type: "text", text });
  } else {
    next = text;
  }
  return { ...message, content: next };
}

function kind(message) {
  const type = message && (message.type ?? message.role);
  if (type === "human" || type === "user") return "human";
  if (type === "ai" || type === "assistant" || type === "AIMessageChunk") return "ai";
  return type;
}

/**
 * `messages` with each message whose id is a key of `answers` (a Map or an object of
 * message id → answer text) showing that text. Other messages are returned as they are.
 */
export function applyAnswers(messages, answers) {
  const map = answerMap(answers);
  if (!Array.isArray(messages) || map.size === 0) return messages;
  let changed = false;
  const out = messages.map((message) => {
    const id = message && message.id;
    if (id == null || !map.has(id)) return message;
    changed = true;
    return replaceText(message, map.get(id));
  });
  return changed ? out : messages;
}

/**
 * `messages` ending the latest turn with `answer` (a final-answer body): the message
 * named by `answer.message_id` shows its text; failing that, the last AI message after
 * the last human one; failing that (the stream died before the answer began), the
 * answer is added as its own AI message. `settled` (as `answerIndex` takes it): the
 * answers already shown, so that an earlier turn's never becomes this one's.
 */
export function withFinalAnswer(messages, answer, settled = null) {
  const list = Array.isArray(messages) ? messages : [];
  if (!answer || !answer.content) return list;
  const at = answerIndex(list, answer, settled && answerMap(settled));
  if (at === -1) {
    return [...list, { type: "ai", id: answer.message_id ?? `final-answer-${answer.run_id}`, content: answer.content }];
  }
  if (answerText(list[at].content) === answer.content) return list;
  const out = list.slice();
  out[at] = replaceText(list[at], answer.content);
  return out;
}

/**
 * Where `answer` (a final-answer body) belongs in `list`: the message it names; failing
 * that, the last AI message without tool calls after the last human one; else -1.
 * Not a message holding another run's answer (its id a key of `settled`, a Map of
 * message id → answer text): while a cut stream has not brought the new turn's
 * question, the last human message is the turn before's, and so is its answer.
 */
export function answerIndex(list, answer, settled = null) {
  let at = answer.message_id != null ? list.findIndex((m) => m && m.id === answer.message_id) : -1;
  if (at === -1) {
    let start = 0;
    for (let i = list.length - 1; i >= 0; i -= 1) {
      if (kind(list[i]) === "human") {
        start = i + 1;
        break;
      }
    }
    for (let i = list.length - 1; i >= start; i -= 1) {
      const m = list[i];
      if (kind(m) === "ai" && !(Array.isArray(m.tool_calls) && m.tool_calls.length)) {
        if (!holdsAnotherAnswer(m, answer, settled)) at = i;
        break;
      }
    }
  }
  return at;
}

function holdsAnotherAnswer(message, answer, settled) {
  const id = message.id;
  return id != null && id !== answer.message_id && !!settled && settled.has(id);
}

/** Answers (a Map, or an object of message id → text) as a Map. */
function answerMap(answers) {
  return answers instanceof Map ? answers : new Map(Object.entries(answers || {}));
}
