// What the AG-UI client has been sent of each text message (`TEXT_MESSAGE_*` events), so
// that a run whose stream was cut can be ended with the text events the client still
// needs: the rest of the answer, then `TEXT_MESSAGE_END`.

export class TextLedger {
  constructor() {
    /** message id → { text, open } */
    this.messages = new Map();
  }

  /** Note an event the client was sent. */
  record(event) {
    if (!event || typeof event !== "object") return;
    const { type, messageId } = event;
    if (type === "TEXT_MESSAGE_START") {
      this.messages.set(messageId, { text: "", open: true });
    } else if (type === "TEXT_MESSAGE_CONTENT") {
      const entry = this.messages.get(messageId);
      if (entry) entry.text += event.delta ?? "";
    } else if (type === "TEXT_MESSAGE_END") {
      const entry = this.messages.get(messageId);
      if (entry) entry.open = false;
    }
  }

  /** The ids of the text messages started and not ended. */
  open() {
    return [...this.messages].filter(([, entry]) => entry.open).map(([id]) => id);
  }

  /**
   * The events that bring the client's text to `answer` (a final-answer body) before the
   * run's messages snapshot: the answer's message, when it is open and its text so far is
   * a prefix of the answer, gets the rest; every open message is ended; an answer whose
   * message the client never saw is sent whole. Text that is not a prefix (a replayed,
   * doubled stretch) is left to the snapshot, which replaces it.
   */
  completion(answer) {
    const events = [];
    const content = answer && typeof answer.content === "string" ? answer.content : "";
    const target = this.answerMessage(answer);
    for (const id of this.open()) {
      const entry = this.messages.get(id);
      if (id === target && content.startsWith(entry.text) && content.length > entry.text.length) {
        events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: content.slice(entry.text.length) });
      }
      events.push({ type: "TEXT_MESSAGE_END", messageId: id });
    }
    if (target === null && content && answer.message_id) {
      const messageId = answer.message_id;
      events.push(
        { type: "TEXT_MESSAGE_START", messageId, role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId, delta: content },
        { type: "TEXT_MESSAGE_END", messageId },
      );
    }
    return events;
  }

  /**
   * Which text message the client knows as the answer: the one with the answer's id;
   * failing that (a stream may name a message otherwise than the checkpoint does), the
   * newest one started. Null when the client was sent no text at all.
   */
  answerMessage(answer) {
    if (answer && answer.message_id != null && this.messages.has(answer.message_id)) {
      return answer.message_id;
    }
    const ids = [...this.messages.keys()];
    return ids.length ? ids[ids.length - 1] : null;
  }
}
