// The chat page on @langchain/react's `useStream` (or its drop-in from
// @evoscientist/final-answer/langchain-react): messages rendered with their tool calls,
// as tests/js/browser/app.jsx renders the langgraph-sdk hook's. Query: ?api=URL
// &hook=recovery|bare|suspense|suspense-bare (the last two: `useSuspenseStream` and its
// drop-in, under a Suspense boundary and an error boundary)&transport=sse|websocket&thread=ID (the thread id is kept in the
// URL, as chat apps do, so a reload shows the run again)&assistant=GRAPH (default
// EvoScientist). `window.chat.seen()` is what the page shows, for comparing the hooks;
// `window.chat` also stops and switches threads as the app's own controls would, and each
// turn's answer is read as answers.js reads it.
import { useStream, useSuspenseStream } from "@langchain/react";
import {
  useStreamWithRecovery,
  useSuspenseStreamWithRecovery,
} from "@evoscientist/final-answer/langchain-react";
import { createRoot } from "react-dom/client";
import { Component, Suspense, useState } from "react";

import { watchAnswers } from "./answers.js";

const params = new URLSearchParams(window.location.search);
const HOOKS = {
  bare: useStream,
  recovery: useStreamWithRecovery,
  suspense: useSuspenseStreamWithRecovery,
  "suspense-bare": useSuspenseStream,
};
const hook = params.get("hook") ?? "recovery";
const useChat = HOOKS[hook];
const suspense = hook.startsWith("suspense");
// How often the Suspense fallback rendered, and what reached the error boundary.
window.suspended = 0;
window.boundaryErrors = [];
const transport = params.get("transport") === "websocket" ? "websocket" : "sse";

function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => (typeof b === "string" ? b : b && b.type === "text" ? b.text : "")).join("");
}

function Message({ message }) {
  const type = message.type;
  const calls = message.tool_calls || [];
  return (
    <div className={`msg msg-${type}`} data-id={message.id}>
      {calls.map((call) => (
        <div className="tool-call part-tool" key={call.id} data-name={call.name}>
          tool call: {call.name}
        </div>
      ))}
      {type === "tool" ? <div className="tool-result">{text(message.content)}</div> : null}
      {type !== "tool" ? <div className="text part-text">{text(message.content)}</div> : null}
    </div>
  );
}

function Fallback() {
  window.suspended += 1;
  return <p id="fallback">loading the thread</p>;
}

class Boundary extends Component {
  state = { error: null };
  static getDerivedStateFromError(error) {
    return { error };
  }
  componentDidCatch(error) {
    window.boundaryErrors.push(String(error));
  }
  render() {
    if (this.state.error === null) return this.props.children;
    return <main id="chat" data-error={String(this.state.error)} />;
  }
}

function App() {
  const [threadId, setThreadId] = useState(params.get("thread"));
  if (!suspense) return <Chat threadId={threadId} setThreadId={setThreadId} />;
  // The thread id lives above the boundary: a suspended Chat loses its own state.
  return (
    <Boundary>
      <Suspense fallback={<Fallback />}>
        <Chat threadId={threadId} setThreadId={setThreadId} />
      </Suspense>
    </Boundary>
  );
}

function Chat({ threadId, setThreadId }) {
  const stream = useChat({
    apiUrl: params.get("api"),
    assistantId: params.get("assistant") ?? "EvoScientist",
    transport,
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      const url = new URL(window.location.href);
      url.searchParams.set("thread", id);
      window.history.replaceState(null, "", url);
    },
  });
  // useSuspenseStream has `isStreaming` in place of `isLoading`.
  const loading = suspense ? stream.isStreaming : stream.isLoading;
  window.chat = {
    submit: (question) => stream.submit({ messages: [{ type: "human", content: question }] }),
    stop: () => stream.stop(),
    loading: () => loading,
    switchTo: (id) => {
      setThreadId(id);
      const url = new URL(window.location.href);
      if (id) url.searchParams.set("thread", id);
      else url.searchParams.delete("thread");
      window.history.replaceState(null, "", url);
    },
    threadId,
    respond: (value) => stream.respond(value),
    seen: () => ({
      loading,
      messages: stream.messages.map((m) => ({
        type: m.type,
        text: text(m.content),
        calls: (m.tool_calls || []).map((c) => c.name),
        instance: typeof m.getType === "function",
      })),
      toolCalls: (stream.toolCalls || []).map((c) => ({
        name: c.name ?? c.call?.name,
        status: c.status ?? null,
      })),
      interrupts: (stream.interrupts || []).map((i) => i.value),
      interrupt: stream.interrupt ? stream.interrupt.value : null,
    }),
  };
  const recovery = stream.recovery;
  const instances = stream.messages.every((m) => typeof m.getType === "function");
  return (
    <main
      id="chat"
      data-thread={threadId ?? ""}
      data-loading={String(loading)}
      data-instances={String(instances)}
      data-recovery={recovery ? recovery.status : "none"}
      data-recovery-error={recovery && recovery.error ? String(recovery.error) : ""}
    >
      {stream.messages.map((message, i) => (
        <Message key={message.id ?? i} message={message} />
      ))}
      {recovery && recovery.recovered ? <p className="notice">stream dropped — recovered</p> : null}
      {stream.error ? <p className="error">{String(stream.error)}</p> : null}
    </main>
  );
}

watchAnswers();
createRoot(document.getElementById("root")).render(<App />);
