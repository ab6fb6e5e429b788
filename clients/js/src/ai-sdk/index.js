// @evoscientist/final-answer/ai-sdk: the AI SDK's `useChat` on a LangGraph server.
export { LangGraphChatTransport, defaultInput } from "./transport.js";
export { UiChunkWriter, shownAnswer } from "./chunks.js";
export { CHAT_NAMESPACE, threadIdOf } from "./thread-id.js";
