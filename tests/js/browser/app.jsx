// A chat page shaped like the EvoScientist WebUI: one `useStream` hook (or its drop-in,
// `useStreamWithRecovery`), the WebUI's hook and submit options, messages rendered with
// their tool calls. Query: ?api=URL&hook=recovery|bare&thread=ID (the thread id is kept
// in the URL, as chat apps do, so a reload rejoins the run)&assistant=GRAPH (default
// EvoScientist). `window.chat` submits, stops (the page's Stop button) and switches
// threads as the app's own controls would; each turn's answer is read as answers.js reads
// it (a message's text is a `.part-text`, a tool call a `.part-tool`).
import { useStream } from "@langchain/langgraph-sdk/react";
import { useStreamWithRecovery } from "@evoscientist/final-answer/react";
import { createRoot } from "react-dom/client";
import { useState } from "react";

import { watchAnswers } from "./answers.js";

const params = new URLSearchParams(window.location.search);
const useChat = params.get("hook") === "bare" ? useStream : useStreamWithRecovery;

const SUBMIT_OPTIONS = {
  streamMode: ["updates", "messages-tuple", "values", "custom"],
  streamSubgraphs: true,
  streamResumable: true,
  onDisconnect: "continue",
};

function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => (typeof b === "string" ? b : b && b.type === "text" ? b.text : "")).join("");
}

function Message({ message }) {
  const calls = message.tool_calls || [];
  return (
    <div className={`msg msg-${message.type}`} data-id={message.id}>
      {calls.map((call) => (
        <div className="tool-call part-tool" key={call.id} data-name={call.name}>
          tool call: {call.name}
        </div>
      ))}
      {message.type === "tool" ? <div className="tool-result">{text(message.content)}</div> : null}
      {message.type !== "tool" ? <div className="text part-text">{text(message.content)}</div> : null}
    </div>
  );
}

function keepInUrl(id) {
  const url = new URL(window.location.href);
  if (id) url.searchParams.set("thread", id);
  else url.searchParams.delete("thread");
  window.history.replaceState(null, "", url);
}

function App() {
  const [threadId, setThreadId] = useState(params.get("thread"));
  const stream = useChat({
    apiUrl: params.get("api"),
    assistantId: params.get("assistant") ?? "EvoScientist",
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      keepInUrl(id);
    },
    reconnectOnMount: true,
    fetchStateHistory: true,
  });
  window.chat = {
    submit: (question) =>
      stream.submit({ messages: [{ type: "human", content: question }] }, SUBMIT_OPTIONS),
    stop: () => stream.stop(),
    loading: () => stream.isLoading,
    // Another thread (null: a new one), as a thread list's click does.
    switchTo: (id) => {
      setThreadId(id);
      keepInUrl(id);
    },
    threadId,
  };
  const recovery = stream.recovery;
  return (
    <main
      id="chat"
      data-thread={threadId ?? ""}
      data-loading={String(stream.isLoading)}
      data-recovery={recovery ? recovery.status : "none"}
      data-recovery-error={recovery && recovery.error ? String(recovery.error) : ""}
    >
      {/* As the WebUI does: while the thread's history loads and none is held yet, a
          placeholder in place of the conversation. */}
      {stream.isThreadLoading ? (
        <p className="thread-loading">Loading…</p>
      ) : (
        stream.messages.map((message, i) => <Message key={message.id ?? i} message={message} />)
      )}
      {recovery && recovery.recovered ? <p className="notice">stream dropped — recovered</p> : null}
      {stream.error ? <p className="error">{String(stream.error)}</p> : null}
    </main>
  );
}

watchAnswers();
createRoot(document.getElementById("root")).render(<App />);
