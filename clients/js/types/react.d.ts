// Declarations for "@evoscientist/final-answer/react".
import type { BagTemplate } from "@langchain/langgraph-sdk";
import type {
  InferBag,
  ResolveStreamInterface,
  ResolveStreamOptions,
} from "@langchain/langgraph-sdk/react";

export interface Recovery {
  /**
   * `idle` (no run yet) · `streaming` · `settling` (the stream ended; the run is followed
   * through the route, and `isLoading` stays true) · `settled` (the authoritative answer
   * is shown) · `failed` · `stopped` (the user's `stop()`: the run was cancelled, and its
   * turn keeps what it showed at Stop through later turns and re-reads of the thread).
   */
  status: "idle" | "streaming" | "settling" | "settled" | "failed" | "stopped";
  /** The route said the run is over. */
  complete: boolean;
  /** The stream dropped or showed other text: the answer came from the route. */
  recovered: boolean;
  error: Error | null;
}

export interface RecoveryOptions {
  /** How long to follow a run whose stream is gone (default 240 000 ms). */
  maxWaitMs?: number;
}

/** `useStream`'s options and return value, plus `recovery`: see the package README. */
export function useStreamWithRecovery<
  T = Record<string, unknown>,
  Bag extends BagTemplate = BagTemplate,
>(
  options: ResolveStreamOptions<T, InferBag<T, Bag>> & { recovery?: RecoveryOptions },
): ResolveStreamInterface<T, InferBag<T, Bag>> & { recovery: Recovery };

export const STREAM_GRACE_MS: number;
export const IDLE_RECOVERY: Readonly<Recovery>;
