// Declarations for "@evoscientist/final-answer/svelte".
import type { UseStreamReturn, useStream } from "@langchain/svelte";
import type { Recovery, RecoveryOptions } from "./langchain-react.js";

export type { Recovery, RecoveryOptions };

export declare const IDLE_RECOVERY: Readonly<Recovery>;
export declare const STREAM_GRACE_MS: number;

/** @langchain/svelte's `useStream` options, plus `recovery`. */
export type UseStreamWithRecoveryOptions<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
> = Parameters<typeof useStream<T, InterruptType, ConfigurableType>>[0] & {
  recovery?: RecoveryOptions;
};

/** @langchain/svelte's `useStream` handle, plus `recovery`. */
export type UseStreamWithRecoveryReturn<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
> = UseStreamReturn<T, InterruptType, ConfigurableType> & { readonly recovery: Recovery };

/** @langchain/svelte's `useStream`, plus `recovery`: see the package README. */
export function useStreamWithRecovery<
  T = Record<string, unknown>,
  InterruptType = unknown,
  ConfigurableType extends object = Record<string, unknown>,
>(
  options: UseStreamWithRecoveryOptions<T, InterruptType, ConfigurableType>,
): UseStreamWithRecoveryReturn<T, InterruptType, ConfigurableType>;
