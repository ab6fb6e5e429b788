// The latest turn's answer in a message list: its last AI message with text, never an
// earlier turn's (a message's text itself is core/text.js's).
// Mirrors evoscientist_final_answer/answer/extract.py.

import { answerText, contentText, reasoningText } from "../core/text.js";

export const NO_ANSWER = Object.freeze({ content: "", reasoning: "", messageId: null });

function messageKind(message) {
  if (!message || typeof message !== "object") return null;
  const kind = message.type ?? message.role;
  if (kind === "human" || kind === "user") return "human";
  if (kind === "ai" || kind === "assistant") return "ai";
  return kind == null ? null : String(kind);
}

/**
 * The messages after the last human message whose text is non-empty (a thread with no
 * such message is one turn from the start).
 */
export function latestTurn(messages) {
  const list = Array.isArray(messages) ? messages : [];
  for (let i = list.length - 1; i >= 0; i -= 1) {
    if (messageKind(list[i]) === "human" && contentText(list[i].content).trim()) {
      return list.slice(i + 1);
    }
  }
  return list;
}

/**
 * The last AI message of the latest turn with answer text:
 * `{content, reasoning, messageId}`.
 */
export function finalAnswer(messages) {
  const turn = latestTurn(messages);
  for (let i = turn.length - 1; i >= 0; i -= 1) {
    if (messageKind(turn[i]) !== "ai") continue;
    const content = answerText(turn[i].content);
    if (content.trim()) {
      return { content, reasoning: reasoningText(turn[i]), messageId: turn[i].id ?? null };
    }
  }
  return { ...NO_ANSWER };
}
