// Compiled by `tsc --noEmit` (tests/js/test_package.py): the assistant-ui binding's
// declarations as an app uses them.
import { Client } from "@langchain/langgraph-sdk";
import { useLangGraphRuntime } from "@assistant-ui/react-langgraph";
import {
  createLangGraphStreamWithRecovery,
  unstable_createLangGraphStream,
} from "@evoscientist/final-answer/assistant-ui";

const client = new Client({ apiUrl: "http://127.0.0.1:2024" });

export function useChatRuntime() {
  return useLangGraphRuntime({
    stream: createLangGraphStreamWithRecovery({
      client,
      assistantId: "EvoScientist",
      recovery: { maxWaitMs: 120_000 },
    }),
  });
}

export const upstreamName = unstable_createLangGraphStream({
  client,
  assistantId: "EvoScientist",
  streamMode: ["messages", "updates"],
  onDisconnect: "continue",
});

// @ts-expect-error assistantId is required, as upstream's
export const missing = createLangGraphStreamWithRecovery({ client });
