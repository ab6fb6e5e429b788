// A chat page that reads ONE field of the hook, to see whether tokens stream: the SDK
// (1.9+) asks the server for the stream modes of the fields a page reads, and a page
// reading `messages` must see the answer grow token by token, with recovery as without.
// Query: ?api=URL&hook=recovery|bare&reads=messages|values. It passes no `streamMode`,
// so the modes come from what it reads alone; it reads nothing else of the hook
// (`isLoading` is a plain field, no getter).
import { useStream } from "@langchain/langgraph-sdk/react";
import { useStreamWithRecovery } from "@evoscientist/final-answer/react";
import { createRoot } from "react-dom/client";
import { useState } from "react";

const params = new URLSearchParams(window.location.search);
const useChat = params.get("hook") === "bare" ? useStream : useStreamWithRecovery;
const reads = params.get("reads");

function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => (typeof b === "string" ? b : b && b.type === "text" ? b.text : "")).join("");
}

function App() {
  const [threadId, setThreadId] = useState(null);
  const stream = useChat({
    apiUrl: params.get("api"),
    assistantId: "EvoScientist",
    threadId,
    onThreadId: setThreadId,
  });
  window.chat = {
    submit: (question) => stream.submit({ messages: [{ type: "human", content: question }] }),
  };
  const messages = (reads === "values" ? stream.values?.messages : stream.messages) ?? [];
  return (
    <main id="chat" data-thread={threadId ?? ""} data-loading={String(stream.isLoading)}>
      {messages.map((message, i) => (
        <div key={message.id ?? i} className={`msg msg-${message.type}`} data-id={message.id}>
          <div className="text">{text(message.content)}</div>
        </div>
      ))}
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
