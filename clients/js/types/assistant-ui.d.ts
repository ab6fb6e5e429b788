// Declarations for "@evoscientist/final-answer/assistant-ui".
import type {
  CreateLangGraphStreamOptions,
  LangChainMessage,
  LangGraphStreamCallback,
  UseLangGraphRuntimeOptions,
} from "@assistant-ui/react-langgraph";

export interface RecoveryOptions {
  /** How long to follow a run after its stream ended (default 240 000 ms). */
  maxWaitMs?: number;
}

/** `unstable_createLangGraphStream`'s options, plus `recovery`. */
export type CreateLangGraphStreamWithRecoveryOptions = CreateLangGraphStreamOptions & {
  recovery?: RecoveryOptions;
};

/** `useLangGraphRuntime`'s `load`: what a thread shows when its runtime mounts. */
export type LangGraphLoad = NonNullable<UseLangGraphRuntimeOptions["load"]>;

/** The stream callback, and the `load` that goes with it. */
export type LangGraphStreamWithRecovery = LangGraphStreamCallback<LangChainMessage> & {
  /**
   * `useLangGraphRuntime({ stream, load: stream.load })`: the thread's state once its
   * latest run is over (a reload mid-run shows the run's answer, not the state at the
   * reload), with the route's text in the answer message and every turn the user
   * stopped as it was shown at Stop.
   */
  load: LangGraphLoad;
};

/** The status a message the user stopped shows: `{type: "incomplete", reason: "cancelled"}`. */
export const STOPPED_STATUS: { readonly type: "incomplete"; readonly reason: "cancelled" };

/**
 * The `stream` callback `useLangGraphRuntime` takes, as `unstable_createLangGraphStream`
 * builds it, that keeps the run alive across a dropped connection (`onDisconnect`
 * defaults to "continue"), starts it exactly once, and ends each turn on the
 * final-answer route's answer. A Stop cancels the run and its turn keeps what it showed,
 * marked `STOPPED_STATUS`, through later turns and loads.
 */
export function createLangGraphStreamWithRecovery(
  options: CreateLangGraphStreamWithRecoveryOptions,
): LangGraphStreamWithRecovery;

/** The same function under upstream's name: adoption can be the import alone. */
export const unstable_createLangGraphStream: typeof createLangGraphStreamWithRecovery;
