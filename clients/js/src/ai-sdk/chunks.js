// A LangGraph run's `messages-tuple` events as the AI SDK's UI message chunks, and the
// route's answer as their ending. Pure: `UiChunkWriter` takes events and answers and hands
// chunks to `enqueue`. Text is only ever appended: the route's answer completes a part by
// the text the stream had not shown, never repeats it.

import { AI_CHUNK_TYPES, messageOfEvent } from "../core/accumulate.js";
import { contentText, mergeContent, reasoningText, splitThink } from "../core/text.js";

const OPEN_THINK = /^\s*<think>/;

/** The answer text of content streamed so far: nothing while a leading `<think>` is open. */
export function shownAnswer(content) {
  const raw = contentText(content);
  if (OPEN_THINK.test(raw) && !raw.includes("</think>")) return "";
  return splitThink(raw)[0];
}

function parseArgs(text) {
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export class UiChunkWriter {
  /** @param {(chunk: object) => void} enqueue */
  constructor(enqueue) {
    this.enqueue = enqueue;
    this.started = false;
    this.runId = null;
    this.messageId = null;
    this.messages = new Map(); // message id → {content, additional_kwargs} merged so far
    this.text = new Map(); // part id → text shown
    this.reasoning = new Map(); // part id → reasoning shown
    this.open = new Set(); // part ids open ("text:" / "reasoning:" prefixed)
    this.tools = new Map(); // tool call id → {name, args, state}
    this.lastTextId = null;
    this.metadataSeen = false;
    this.retyping = null; // the message a new attempt re-types, until one of its messages claims it
    this.alias = new Map(); // a new attempt's message id → the message it re-types
  }

  /**
   * The `start` chunk, once, naming the turn's message by its run: a turn is one UI
   * message, whichever LangGraph messages (tool calls, the answer) it holds, and a
   * resume from the route (which knows the run, not the turn's first message) names
   * the same message.
   */
  start(runId = null) {
    if (this.started) return;
    this.started = true;
    this.messageId = runId ?? this.runId ?? null;
    this.enqueue(this.messageId ? { type: "start", messageId: this.messageId } : { type: "start" });
  }

  /** One event of the run's stream. */
  event(event, data) {
    if (event === "metadata") {
      if (typeof data?.run_id === "string") this.runId = data.run_id;
      // The run's first event, again once text was shown: the server runs the run anew
      // (after a restart; its attempt number may not say so), from its last checkpoint,
      // under new message ids, re-typing what the page already shows. A rejoin replays
      // from after its last event, never this one.
      if (this.metadataSeen && this.lastTextId !== null) this.retyping = this.lastTextId;
      this.metadataSeen = true;
      return;
    }
    const message = messageOfEvent(event, data);
    if (!message) return;
    if (message.type === "tool") {
      this.toolResult(message);
      return;
    }
    if (!AI_CHUNK_TYPES.has(message.type)) return;
    const id = String(message.id ?? `message-${this.messages.size}`);
    const known = this.messages.get(id);
    const merged = known
      ? { ...known, content: mergeContent(known.content, message.content ?? "") }
      : { content: message.content ?? "", additional_kwargs: {} };
    const extra = message.additional_kwargs?.reasoning_content;
    if (typeof extra === "string") {
      merged.additional_kwargs = {
        reasoning_content: (merged.additional_kwargs.reasoning_content ?? "") + extra,
      };
    }
    this.messages.set(id, merged);
    if (!known && this.retyping !== null && (reasoningText(merged) || shownAnswer(merged.content))) {
      this.alias.set(id, this.retyping);
      this.retyping = null;
    }
    this.start();
    this.showReasoning(id, reasoningText(merged));
    this.showText(id, shownAnswer(merged.content));
    for (const call of message.tool_call_chunks ?? []) this.toolChunk(call);
    for (const call of message.tool_calls ?? []) this.toolCall(call);
  }

  /**
   * The message whose parts message `id`'s `kind` ("text", "reasoning") goes to: the one
   * it re-types while its text is what that one shows, or continues it; else its own.
   * Null while it only re-types what is shown: nothing to add.
   */
  target(id, kind, full) {
    const retyped = this.alias.get(id);
    if (retyped === undefined) return id;
    const shown = this[kind].get(`${kind}:${retyped}`) ?? "";
    if (shown.startsWith(full)) return null;
    if (full.startsWith(shown)) return retyped;
    if (kind === "text") this.alias.delete(id); // another answer: a part of its own
    return id;
  }

  showReasoning(messageId, full) {
    const id = this.target(messageId, "reasoning", full);
    if (id === null) return;
    const part = `reasoning:${id}`;
    const shown = this.reasoning.get(part) ?? "";
    if (!full || full === shown || !full.startsWith(shown)) return;
    if (!this.open.has(part)) {
      this.open.add(part);
      this.enqueue({ type: "reasoning-start", id: part });
    }
    this.enqueue({ type: "reasoning-delta", id: part, delta: full.slice(shown.length) });
    this.reasoning.set(part, full);
  }

  /** Appends to the text part of message `id` what `full` adds to what it shows. */
  showText(messageId, full) {
    const id = this.target(messageId, "text", full);
    if (id === null) return false;
    const part = `text:${id}`;
    const shown = this.text.get(part) ?? "";
    if (!full || full === shown) return false;
    if (!full.startsWith(shown)) return false; // never take back what was shown
    this.closeReasoning(id);
    if (!this.open.has(part)) {
      this.open.add(part);
      this.enqueue({ type: "text-start", id: part });
    }
    this.enqueue({ type: "text-delta", id: part, delta: full.slice(shown.length) });
    this.text.set(part, full);
    this.lastTextId = id;
    return true;
  }

  closeReasoning(id) {
    const part = `reasoning:${id}`;
    if (this.open.delete(part)) this.enqueue({ type: "reasoning-end", id: part });
  }

  toolChunk(call) {
    if (!call || typeof call !== "object") return;
    let id = call.id;
    if (!id) {
      // Later chunks of a call name it by index only: the newest call of that index.
      id = [...this.tools.entries()].reverse().find(([, t]) => t.index === call.index)?.[0];
      if (!id) return;
    }
    const tool = this.toolOf(id, call.name, call.index);
    if (typeof call.args === "string" && call.args && tool.state === "streaming") {
      tool.args += call.args;
      this.enqueue({ type: "tool-input-delta", toolCallId: id, inputTextDelta: call.args });
    }
  }

  toolCall(call) {
    if (!call || typeof call !== "object" || !call.id) return;
    const tool = this.toolOf(call.id, call.name);
    this.toolInput(call.id, call.args ?? parseArgs(tool.args));
  }

  /** The tool call `id`, opened as a tool part the first time it is seen. */
  toolOf(id, name, index = undefined) {
    let tool = this.tools.get(id);
    if (!tool) {
      tool = { name: name ?? "tool", args: "", index, state: "streaming" };
      this.tools.set(id, tool);
      this.enqueue({ type: "tool-input-start", toolCallId: id, toolName: tool.name, dynamic: true });
    }
    return tool;
  }

  toolInput(id, input) {
    const tool = this.tools.get(id);
    if (!tool || tool.state !== "streaming") return;
    tool.state = "input";
    this.enqueue({ type: "tool-input-available", toolCallId: id, toolName: tool.name, input, dynamic: true });
  }

  toolResult(message) {
    const id = message.tool_call_id;
    if (!id) return;
    const tool = this.toolOf(id, message.name);
    this.toolInput(id, parseArgs(tool.args));
    if (tool.state === "output") return;
    tool.state = "output";
    const output = contentText(message.content);
    if (message.status === "error") {
      this.enqueue({ type: "tool-output-error", toolCallId: id, errorText: output, dynamic: true });
    } else {
      this.enqueue({ type: "tool-output-available", toolCallId: id, output, dynamic: true });
    }
  }

  /**
   * The answer's text so far, as the route (or the stream's text) has it: appended to
   * the part of its message, or of the last message the page shows text of when the
   * text continues it (the route's message id may be the stored message's where the
   * stream named its chunks otherwise). Text that does not continue what the page
   * shows goes to a part of its own, and the page keeps what it showed. Returns
   * whether it was appended to a part already shown (or none was).
   */
  progress(content, messageId = null, runId = null) {
    if (!content) return true;
    this.start(runId);
    for (const id of [messageId, this.lastTextId]) {
      if (id == null) continue;
      const shown = this.text.get(`text:${id}`) ?? "";
      if (shown && content.startsWith(shown)) {
        this.showText(id, content);
        return true;
      }
    }
    const id = messageId ?? this.lastTextId ?? "answer";
    const taken = (this.text.get(`text:${id}`) ?? "") !== "";
    this.showText(taken ? `${id}:answer` : id, content);
    return !taken;
  }

  /**
   * The run's answer, as the route gives it (`content`, `message_id`, `status`, `error`,
   * `interrupts`): the text part of its message completed to it, then the end: an
   * `error` chunk for a failed run, else `finish`. Returns whether the shown text could
   * be completed by appending (false: the page showed text the answer does not begin
   * with, and keeps it; the answer went to a part of its own).
   */
  finish(answer) {
    const content = answer?.content ?? "";
    const appended = this.progress(content, answer?.message_id ?? null, answer?.run_id ?? null);
    this.start(answer?.run_id ?? null);
    for (const [id, tool] of this.tools) this.toolInput(id, parseArgs(tool.args));
    this.endOpenParts();
    for (const interrupt of answer?.interrupts ?? []) {
      this.enqueue({ type: "data-interrupt", id: interrupt.id ?? undefined, data: interrupt.value });
    }
    if (answer?.status === "error" && answer.error) {
      this.enqueue({ type: "error", errorText: answer.error.message ?? answer.error.code });
    } else {
      this.enqueue({ type: "finish", finishReason: answer?.status === "interrupted" ? "other" : "stop" });
    }
    return appended;
  }

  /** A Stop: the parts end where they are (the text shown is kept), then `finish`. */
  stop() {
    this.start();
    this.endOpenParts();
    this.enqueue({ type: "finish", finishReason: "stop" });
  }

  /** Every part still open ends where it is (`text-end`, `reasoning-end`). */
  endOpenParts() {
    for (const part of this.open) {
      const [kind] = part.split(":", 1);
      this.enqueue({ type: `${kind}-end`, id: part });
    }
    this.open.clear();
  }
}
