// The chat page on the AI SDK's `useChat` (@ai-sdk/react), `resume: true`, its transport
// @ai-sdk/langchain's `LangSmithDeploymentTransport` (hook=bare) or, one line changed,
// `LangGraphChatTransport` from @evoscientist/final-answer/ai-sdk (hook=recovery).
// Query: ?api=URL&hook=…&assistant=GRAPH (default EvoScientist)&chat=ID. The chat id is
// made up as useChat makes one (not a UUID) and kept in the URL; the page keeps its
// messages in sessionStorage under it, as an app keeps a chat's messages in its own
// store, so a reload shows the chat again and `resume: true` resumes its run. Its chats
// are `Chat`s it keeps (`useChat({ chat })`), so a chat left mid-run goes on. Each turn's
// answer is read as answers.js reads it; `window.chat` submits, stops and switches chats
// as the app's own controls would.
import { LangSmithDeploymentTransport } from "@ai-sdk/langchain";
import { Chat, useChat } from "@ai-sdk/react";
import { LangGraphChatTransport, threadIdOf } from "@evoscientist/final-answer/ai-sdk";
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

import { watchAnswers } from "./answers.js";

const params = new URLSearchParams(window.location.search);
const hook = params.get("hook") ?? "recovery";
const apiUrl = params.get("api");
const assistantId = params.get("assistant") ?? "EvoScientist";
const transport =
  hook === "bare"
    ? new LangSmithDeploymentTransport({ url: apiUrl, graphId: assistantId })
    : new LangGraphChatTransport({ apiUrl, assistantId });

const newChatId = () => `chat-${Math.random().toString(36).slice(2, 12)}`;
const saved = (chatId) => JSON.parse(sessionStorage.getItem(`chat:${chatId}`) ?? "[]");

function keepInUrl(chatId) {
  const url = new URL(window.location.href);
  url.searchParams.set("chat", chatId);
  window.history.replaceState(null, "", url);
}

function Part({ part }) {
  if (part.type === "text") return <span className="part-text">{part.text}</span>;
  if (part.type === "reasoning") return <div className="part-reasoning">{part.text}</div>;
  if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
    const name = part.toolName ?? part.type.slice("tool-".length);
    const output = part.output === undefined ? "" : JSON.stringify(part.output);
    return (
      <div
        className="part-tool tool-call"
        data-name={name}
        data-call={part.toolCallId}
        data-state={part.state}
        data-output={output}
      >
        tool call: {name}
      </div>
    );
  }
  return null;
}

function ChatView({ chatId }) {
  // The LangGraph thread this chat is (the bare transport's runs have none).
  const [threadId, setThreadId] = useState("");
  useEffect(() => {
    keepInUrl(chatId);
    if (hook === "bare") return;
    threadIdOf(chatId).then((id) => {
      chats.set(id, chatId);
      setThreadId(id);
    });
  }, [chatId]);
  const { messages, sendMessage, stop, status, error } = useChat({ chat: chatOf(chatId), resume: true });
  useEffect(() => {
    sessionStorage.setItem(`chat:${chatId}`, JSON.stringify(messages));
  }, [chatId, messages]);
  window.chat = {
    submit: (question) => sendMessage({ text: question }),
    stop: () => stop(),
    loading: () => status === "submitted" || status === "streaming",
    switchTo: (id) => switchChat(id),
  };
  return (
    <main id="chat" data-thread={threadId} data-status={status} data-error={error ? String(error.message) : ""}>
      {messages.map((message) => (
        <div key={message.id} className={`msg msg-${message.role}`} data-id={message.id}>
          {message.parts.map((part, i) => (
            <Part key={i} part={part} />
          ))}
        </div>
      ))}
    </main>
  );
}

// The page's chats, kept as the AI SDK's docs keep several: `useChat({ id })` stops the
// chat it leaves (its cleanup calls `stop`, which is a Stop: the run is cancelled), a
// chat the app keeps goes on while another is shown.
const kept = new Map();
function chatOf(chatId) {
  if (!kept.has(chatId)) kept.set(chatId, new Chat({ id: chatId, transport, messages: saved(chatId) }));
  return kept.get(chatId);
}

// The app's chat list: its chats by their threads' ids. A switch opens another chat (null:
// a new one), named by its chat id or its thread's, with the messages the page kept.
const chats = new Map();
let switchChat = () => {};

function App() {
  const [chatId, setChatId] = useState(params.get("chat") ?? newChatId());
  switchChat = (id) => setChatId(id === null ? newChatId() : (chats.get(id) ?? id));
  return <ChatView key={chatId} chatId={chatId} />;
}

watchAnswers();
createRoot(document.getElementById("root")).render(<App />);
