// Type-checks the one line of an AI SDK app (npm run typecheck).
import type { ChatTransport, UIMessage } from "ai";

import { LangGraphChatTransport, threadIdOf } from "@evoscientist/final-answer/ai-sdk";

const transport: ChatTransport<UIMessage> = new LangGraphChatTransport({
  apiUrl: "http://127.0.0.1:2024",
  assistantId: "agent",
});
const replay: true = new LangGraphChatTransport({ apiUrl: "x", assistantId: "y" }).resumeStreamIsReplay;
const thread: Promise<string> = threadIdOf("chat-1");
void transport;
void replay;
void thread;
