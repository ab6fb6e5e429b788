// Declarations for "@evoscientist/final-answer/assistant-ui".
import type {
  CreateLangGraphStreamOptions,
  LangChainMessage,
  LangGraphStreamCallback,
} from "@assistant-ui/react-langgraph";

export interface RecoveryOptions {
  /** How long to follow a run after its stream ended (default 240 000 ms). */
  maxWaitMs?: number;
}

/** `unstable_createLangGraphStream`'s options, plus `recovery`. */
export type CreateLangGraphStreamWithRecoveryOptions = CreateLangGraphStreamOptions & {
  recovery?: RecoveryOptions;
};

/**
 * The `stream` callback `useLangGraphRuntime` takes, as `unstable_createLangGraphStream`
 * builds it, that keeps the run alive across a dropped connection (`onDisconnect`
 * defaults to "continue"), starts it exactly once, and ends each turn on the
 * final-answer route's answer.
 */
export function createLangGraphStreamWithRecovery(
  options: CreateLangGraphStreamWithRecoveryOptions,
): LangGraphStreamCallback<LangChainMessage>;

/** The same function under upstream's name: adoption can be the import alone. */
export const unstable_createLangGraphStream: typeof createLangGraphStreamWithRecovery;
