// Declarations for "@evoscientist/final-answer/langchain-react".
import type { ReactNode } from "react";
import type {
  StreamProvider as BaseStreamProvider,
  UseStreamReturn,
  UseSuspenseStreamReturn,
  useStream,
} from "@langchain/react";

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
  /** How long to follow a run (default 240 000 ms). */
  maxWaitMs?: number;
}

/** @langchain/react's `useStream` options, plus `recovery`. */
export type UseStreamWithRecoveryOptions<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
> = Parameters<typeof useStream<T, InterruptType, ConfigurableType>>[0] & {
  recovery?: RecoveryOptions;
};

/** @langchain/react's `useStream` return value, plus `recovery`. */
export type UseStreamWithRecoveryReturn<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
> = UseStreamReturn<T, InterruptType, ConfigurableType> & { recovery: Recovery };

/** @langchain/react's `useStream`, plus `recovery`: see the package README. */
export function useStreamWithRecovery<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
>(
  options: UseStreamWithRecoveryOptions<T, InterruptType, ConfigurableType>,
): UseStreamWithRecoveryReturn<T, InterruptType, ConfigurableType>;

/** @langchain/react's `useSuspenseStream` return value, plus `recovery`. */
export type UseSuspenseStreamWithRecoveryReturn<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
> = UseSuspenseStreamReturn<T, InterruptType, ConfigurableType> & {
  recovery: Recovery;
};

/**
 * @langchain/react's `useSuspenseStream`, plus `recovery`: suspends until the shown
 * thread's first hydration settles; a stream error reaches the error boundary only
 * when the route did not recover the run.
 */
export function useSuspenseStreamWithRecovery<T = Record<string, unknown>>(
  options: UseStreamWithRecoveryOptions<T>,
): UseSuspenseStreamWithRecoveryReturn<T>;

/** @langchain/react's `StreamProvider` on `useStreamWithRecovery` (read it with this module's `useStreamContext`). */
export function StreamProvider<T = Record<string, unknown>>(
  props: Parameters<typeof BaseStreamProvider<T>>[0] & { recovery?: RecoveryOptions },
): ReactNode;

/** The nearest `StreamProvider`'s stream, `recovery` included. */
export function useStreamContext<T = Record<string, unknown>>(): UseStreamWithRecoveryReturn<T>;

export const STREAM_GRACE_MS: number;
export const IDLE_RECOVERY: Readonly<Recovery>;
