"use client";
// @evoscientist/final-answer/react: the drop-in for @langchain/langgraph-sdk's
// `useStream`. "use client" here as well as in the hook's module, so the entry is itself a
// client boundary.

export { IDLE_RECOVERY, STREAM_GRACE_MS } from "../core/follow.js";
export { useStreamWithRecovery } from "./use-stream.js";
