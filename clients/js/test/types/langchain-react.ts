// Compiled by `tsc --noEmit` (tests/js/test_package.py): the @langchain/react binding's
// declarations as an app uses them.
import { useMessages, useValues } from "@langchain/react";
import type { BaseMessage } from "@langchain/core/messages";
import {
  StreamProvider,
  useStreamContext,
  useStreamWithRecovery,
  useSuspenseStreamWithRecovery,
  type Recovery,
} from "@evoscientist/final-answer/langchain-react";

export function useChat(threadId: string | null) {
  const stream = useStreamWithRecovery({
    apiUrl: "http://127.0.0.1:2024",
    assistantId: "EvoScientist",
    threadId,
    transport: "websocket",
    recovery: { maxWaitMs: 120_000 },
  });
  const recovery: Recovery = stream.recovery;
  const texts: string[] = stream.messages.map((m) => m.text);
  const viaSelector: BaseMessage[] = useMessages(stream);
  const values = useValues(stream);
  const submit = () => stream.submit({ messages: [{ type: "human", content: "hi" }] });
  // @ts-expect-error recovery.status is a closed set
  const wrong: typeof recovery.status = "done";
  return { texts, viaSelector, values, submit, loading: stream.isLoading, recovered: recovery.recovered, wrong };
}

export function Shared(): ReturnType<typeof StreamProvider> {
  return StreamProvider({ apiUrl: "http://127.0.0.1:2024", assistantId: "EvoScientist", children: null });
}

export function useShared(): boolean {
  return useStreamContext().recovery.complete;
}

export function useSuspended(threadId: string): { streaming: boolean; texts: string[] } {
  const stream = useSuspenseStreamWithRecovery({
    apiUrl: "http://127.0.0.1:2024",
    assistantId: "EvoScientist",
    threadId,
  });
  const messages: BaseMessage[] = stream.messages;
  // @ts-expect-error Suspense replaces isLoading with isStreaming, as in useSuspenseStream
  const loading: boolean = stream.isLoading;
  const status: Recovery["status"] = stream.recovery.status;
  return { streaming: stream.isStreaming && status !== "failed" && !loading, texts: messages.map((m) => m.text) };
}
