"use client";
// @evoscientist/final-answer/langchain-react: the drop-ins for @langchain/react (1.x).
// "use client" here as well as in the hooks' modules, so the entry is itself a client
// boundary.

export { IDLE_RECOVERY, STREAM_GRACE_MS } from "../core/follow.js";
export { StreamProvider, useStreamContext } from "./provider.js";
export { useStreamWithRecovery, useSuspenseStreamWithRecovery } from "./use-stream.js";
