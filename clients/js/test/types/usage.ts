// Compiled by `tsc --noEmit` (tests/js/test_package.py): the declarations as an app uses
// them. A wrong type here, or in types/, fails the test.
import {
  exactlyOnceFetch,
  settleFinalAnswer,
  ThreadGone,
  type FinalAnswer,
} from "@evoscientist/final-answer";
import { useStreamWithRecovery, type Recovery } from "@evoscientist/final-answer/react";
import { Client, type Message } from "@langchain/langgraph-sdk";

export async function show(threadId: string, runId: string): Promise<string> {
  try {
    const answer: FinalAnswer = await settleFinalAnswer({
      apiUrl: "http://127.0.0.1:2024",
      threadId,
      runId,
      maxWaitMs: 60_000,
      onUpdate: (latest) => void latest.content.length,
    });
    return answer.complete ? answer.content : "";
  } catch (error) {
    if (error instanceof ThreadGone) return error.threadId;
    throw error;
  }
}

// @ts-expect-error apiUrl is required
void settleFinalAnswer({ threadId: "t" });

export function useChat(threadId: string | null) {
  const stream = useStreamWithRecovery<{ messages: Message[] }>({
    apiUrl: "http://127.0.0.1:2024",
    assistantId: "EvoScientist",
    threadId,
    reconnectOnMount: true,
    fetchStateHistory: true,
    recovery: { maxWaitMs: 120_000 },
  });
  const recovery: Recovery = stream.recovery;
  const texts: string[] = stream.messages.map((m) => (typeof m.content === "string" ? m.content : ""));
  const submit = () =>
    stream.submit(
      { messages: [{ type: "human", content: "hi" }] },
      {
        streamMode: ["updates", "messages-tuple", "values", "custom"],
        streamSubgraphs: true,
        streamResumable: true,
        onDisconnect: "continue",
      },
    );
  // @ts-expect-error recovery.status is a closed set
  const wrong: typeof recovery.status = "done";
  return { texts, submit, stop: stream.stop, isLoading: stream.isLoading, recovered: recovery.recovered, wrong };
}

// An app's own Client: its submits made exactly-once by the package's fetch.
export const client = new Client({
  apiUrl: "http://127.0.0.1:2024",
  callerOptions: {
    fetch: exactlyOnceFetch(undefined, { onResubmit: (info) => void info.runId?.length }),
  },
});
