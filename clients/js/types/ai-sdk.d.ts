// Declarations for "@evoscientist/final-answer/ai-sdk" (hand-written; src/ is plain ESM).

import type { ChatTransport, UIMessage, UIMessageChunk } from "ai";

export interface LangGraphChatTransportOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The LangGraph server's URL. */
  apiUrl: string;
  /** The graph (or assistant) each submit runs. */
  assistantId: string;
  /** Sent with every request (auth). */
  defaultHeaders?: Record<string, string>;
  /** The run's input from the chat's messages (default: the last user message's text). */
  input?: (messages: UI_MESSAGE[], trigger: string) => Record<string, unknown> | null;
  fetch?: typeof fetch;
  /** ms to follow a run after its stream dropped (default 240000). */
  maxWait?: number;
  /** ms without a byte before a stream counts as dropped (default 15000). */
  stallTimeout?: number;
}

/**
 * `useChat({ transport: new LangGraphChatTransport({ apiUrl, assistantId }) })`: the chat
 * id is the LangGraph thread (a chat id that is no UUID maps to one, `threadIdOf`).
 */
export class LangGraphChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  constructor(options: LangGraphChatTransportOptions<UI_MESSAGE>);
  readonly resumeStreamIsReplay: true;
  sendMessages: ChatTransport<UI_MESSAGE>["sendMessages"];
  /**
   * The thread's latest turn replayed whole (tool calls and results, reasoning, text)
   * under its run's message id, then followed to its answer; `null` for a new chat
   * (asked without a failing request), a thread with no run, or a stopped run.
   */
  reconnectToStream: ChatTransport<UI_MESSAGE>["reconnectToStream"];
}

/** The run's input for a submit: the last user message's text as a human message. */
export function defaultInput(messages: UIMessage[]): { messages: { role: "human"; content: string }[] } | null;

/** The thread id of a chat id: a UUID as is, any other id its UUID v5. */
export function threadIdOf(chatId: string): Promise<string>;
export const CHAT_NAMESPACE: string;

/** A run's `messages-tuple` events as UI message chunks, the route's answer as their end. */
export class UiChunkWriter {
  constructor(enqueue: (chunk: UIMessageChunk) => void);
  start(messageId?: string | null): void;
  event(event: string, data: unknown): void;
  progress(content: string, messageId?: string | null): boolean;
  finish(answer: {
    content?: string | null;
    message_id?: string | null;
    status?: string;
    error?: { code: string; message?: string } | null;
    interrupts?: { id?: string | null; value: unknown }[];
  }): boolean;
  stop(): void;
}

/** The answer text of content streamed so far (nothing while a leading `<think>` is open). */
export function shownAnswer(content: unknown): string;
