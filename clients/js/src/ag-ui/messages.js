// The route's text in an AG-UI `MESSAGES_SNAPSHOT`: the snapshot LangGraphAgent builds from
// the thread's state keeps every message (ids, tool calls, tool results) and shows, in the
// answer message, the answer as the route reads it (reasoning excluded). And the messages
// as the client was sent them, for a turn the user stopped.

function isUser(message) {
  return message && message.role === "user";
}

function isAnswerCandidate(message) {
  return (
    message &&
    message.role === "assistant" &&
    !(Array.isArray(message.toolCalls) && message.toolCalls.length)
  );
}

/**
 * Where `answer` (a final-answer body) belongs in AG-UI `messages`: the message it names;
 * failing that, the last assistant message without tool calls after the last user one;
 * else -1.
 */
export function answerIndex(messages, answer) {
  if (answer.message_id != null) {
    const at = messages.findIndex((m) => m && m.id === answer.message_id);
    if (at !== -1) return at;
  }
  for (let i = messages.length - 1; i >= 0 && !isUser(messages[i]); i -= 1) {
    if (isAnswerCandidate(messages[i])) return i;
  }
  return -1;
}

/** AG-UI `messages` with the answer message's `content` set to the route's text. */
export function withAnswerText(messages, answer) {
  if (!Array.isArray(messages) || !answer || !answer.content) return messages;
  const at = answerIndex(messages, answer);
  if (at === -1) {
    const id = answer.message_id ?? `final-answer-${answer.run_id}`;
    return [...messages, { id, role: "assistant", content: answer.content }];
  }
  if (messages[at].content === answer.content) return messages;
  const out = messages.slice();
  out[at] = { ...messages[at], content: answer.content };
  return out;
}

/**
 * AG-UI `messages` (the agent's list, which its event pipeline updates a moment after
 * each event is sent) as the client was sent them: each text message with the text
 * `ledger` (a `TextLedger`) recorded for it, one the list does not hold yet appended.
 */
export function shownMessages(messages, ledger) {
  const list = Array.isArray(messages) ? messages : [];
  const held = new Set();
  const shown = list.map((message) => {
    if (!message) return message;
    held.add(message.id);
    const sent = ledger.messages.get(message.id);
    return sent ? { ...message, content: sent.text } : message;
  });
  for (const [id, sent] of ledger.messages) {
    if (!held.has(id)) shown.push({ id, role: "assistant", content: sent.text });
  }
  return shown;
}
