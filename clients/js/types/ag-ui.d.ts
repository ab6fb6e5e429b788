// Declarations for "@evoscientist/final-answer/ag-ui" (hand-written; src/ is plain ESM).

import type {
  LangGraphAgent as BaseLangGraphAgent,
  LangGraphAgentConfig,
} from "@ag-ui/langgraph";

import type { FetchLike, FinalAnswer } from "./index.js";

/** Where and how long the drop-in follows a run through the final-answer route. */
export interface FinalAnswerAgentOptions {
  /** The route's server (default: `deploymentUrl`, the langgraph server). */
  apiUrl?: string;
  /** Headers added to the route's requests, over the SDK client's own. */
  headers?: Record<string, string>;
  /** How long to follow a run whose stream ended while it still ran (default 240 000). */
  maxWaitMs?: number;
  fetch?: FetchLike;
}

export interface FinalAnswerAgentConfig extends LangGraphAgentConfig {
  finalAnswer?: FinalAnswerAgentOptions;
}

/**
 * @ag-ui/langgraph's `LangGraphAgent`, constructed with the same options: a run whose
 * stream ends early (cut, failed, rejoin refused) or stalls is followed through the
 * final-answer route until it settles, then ends on the settled state with the route's
 * text (`MESSAGES_SNAPSHOT`, then `RUN_FINISHED`), or with `RUN_ERROR` carrying the
 * route's error when the run failed or was lost. Run submits are exactly-once. Its
 * `abortRun()` (the runtime's Stop) cancels the run on the server, ends the AG-UI run
 * with `RUN_FINISHED` where the client's text stopped, and keeps that turn in the
 * thread's later `MESSAGES_SNAPSHOT`s, on every clone of the agent.
 */
export declare class LangGraphAgent extends BaseLangGraphAgent {
  constructor(config: FinalAnswerAgentConfig);
}

// Any class: @copilotkit/runtime/langgraph's subclass declares `run` with @ag-ui/client's
// own event type, which TypeScript does not see as LangGraphAgent's.
type AgentClass = new (...args: any[]) => object;

/**
 * The same behaviour on `LangGraphAgent` or a subclass of it (e.g.
 * @copilotkit/runtime/langgraph's), returned as a subclass of `Base`.
 */
export declare function withFinalAnswer<T extends AgentClass>(Base: T): T;

/** The `RUN_ERROR` code for a run that could not be followed (not the run's own error). */
export declare function followErrorCode(
  error: unknown,
): "run_not_found" | "thread_not_found" | "final_answer_unavailable";

export interface AgUiMessage {
  id: string;
  role: string;
  content?: unknown;
  toolCalls?: unknown[];
  [key: string]: unknown;
}

/** Where `answer` belongs in AG-UI `messages` (by its `message_id`, else the last assistant
 * message without tool calls after the last user one), or -1. */
export declare function answerIndex(messages: AgUiMessage[], answer: FinalAnswer): number;

/** AG-UI `messages` with the answer message showing the route's text. */
export declare function withAnswerText<M extends AgUiMessage>(
  messages: M[],
  answer: FinalAnswer,
): Array<M | AgUiMessage>;

export type TextEvent =
  | { type: "TEXT_MESSAGE_START"; messageId: string; role: "assistant" }
  | { type: "TEXT_MESSAGE_CONTENT"; messageId: string; delta: string }
  | { type: "TEXT_MESSAGE_END"; messageId: string };

/** What the AG-UI client was sent of each text message. */
export declare class TextLedger {
  record(event: { type: string; messageId?: string; delta?: string }): void;
  open(): string[];
  /** The text events that end the open messages, the answer's text made whole. */
  completion(answer: FinalAnswer): TextEvent[];
  answerMessage(answer: FinalAnswer): string | null;
}
