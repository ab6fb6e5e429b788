// @evoscientist/final-answer/svelte: the drop-in for @langchain/svelte (1.x).

export { IDLE_RECOVERY, STREAM_GRACE_MS } from "../core/follow.js";
export { useStreamWithRecovery } from "./use-stream.js";
