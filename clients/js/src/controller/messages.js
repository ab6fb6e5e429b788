// The route's answer put into a v2 stream controller's message list (@langchain/react,
// @langchain/svelte), whose entries are @langchain/core message instances: a message whose text changes is rebuilt by its own
// class (so `instanceof`, `.text`, `.contentBlocks`, `.type` and tool calls still work),
// never spread into a plain object; every other message is returned as it is.

import { AIMessage } from "@langchain/core/messages";

import { answerIndex, replaceText } from "../core/messages.js";
import { answerText } from "../core/text.js";

// A message's data, as its constructor takes it. `lc_kwargs` holds what it was built
// with; these are read from the instance too, since a stream updates them in place.
const FIELDS = [
  "id",
  "name",
  "content",
  "additional_kwargs",
  "response_metadata",
  "tool_calls",
  "invalid_tool_calls",
  "tool_call_chunks",
  "usage_metadata",
  "tool_call_id",
  "status",
  "artifact",
  "metadata",
];

/** A new instance of `message`'s own class, with `content` in place of its content. */
export function cloneWithContent(message, content) {
  const fields = { ...(message.lc_kwargs || {}) };
  for (const key of FIELDS) {
    if (message[key] !== undefined) fields[key] = message[key];
  }
  fields.content = content;
  // Chunk classes rebuild tool calls from their chunks; a finished message has none.
  if (Array.isArray(fields.tool_call_chunks) && fields.tool_call_chunks.length === 0) {
    delete fields.tool_call_chunks;
  }
  const Ctor = message.constructor;
  return new Ctor(fields);
}

/** `message` showing `text` as its answer (reasoning and tool blocks kept). */
export function withText(message, text) {
  if (answerText(message.content) === text) return message;
  return cloneWithContent(message, replaceText({ content: message.content }, text).content);
}

/**
 * `messages` (instances) with each message whose id is a key of `answers` (a Map of
 * message id → answer text) showing that text, then the latest turn ending with
 * `final` (a final-answer body, or null): the message it names, else the last AI
 * message after the last human one (unless it shows another run's answer of `answers`),
 * else a new `AIMessage` carrying the answer.
 * The same array when nothing changes (stable for the app's memos).
 */
export function overlayAnswers(messages, answers, final = null) {
  const list = Array.isArray(messages) ? messages : [];
  let out = list;
  if (answers && answers.size) {
    out = list.map((message) => {
      const id = message && message.id;
      return id != null && answers.has(id) ? withText(message, answers.get(id)) : message;
    });
    if (out.every((message, i) => message === list[i])) out = list;
  }
  if (!final || !final.content) return out;
  const at = answerIndex(out, final, answers);
  if (at === -1) {
    const id = final.message_id ?? `final-answer-${final.run_id}`;
    return [...out, new AIMessage({ id, content: final.content })];
  }
  const replaced = withText(out[at], final.content);
  if (replaced === out[at]) return out;
  const next = out.slice();
  next[at] = replaced;
  return next;
}
