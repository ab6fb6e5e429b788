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
 * The last AI message after the last human message with text:
 * `{content, reasoning, messageId}`.
 */
export function finalAnswer(messages) {
  const list = Array.isArray(messages) ? messages : [];
  let start = 0;
  for (let i = list.length - 1; i >= 0; i -= 1) {
    if (messageKind(list[i]) === "human" && contentText(list[i].content).trim()) {
      start = i + 1;
      break;
    }
  }
  for (let i = list.length - 1; i >= start; i -= 1) {
    if (messageKind(list[i]) !== "ai") continue;
    const content = answerText(list[i].content);
    if (content.trim()) {
      return { content, reasoning: reasoningText(list[i]), messageId: list[i].id ?? null };
    }
  }
  return { ...NO_ANSWER };
}
