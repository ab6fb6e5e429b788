"use client";
// @evoscientist/final-answer/react: the drop-in for @langchain/langgraph-sdk's
// `useStream`. "use client" here as well as in the hook's module, so the entry stays the
// one client boundary it was when it was a single file.

export { IDLE_RECOVERY, STREAM_GRACE_MS } from "../core/follow.js";
export { useStreamWithRecovery } from "./use-stream.js";
