// A CopilotKit chat page (@copilotkit/react-core's v2 provider and `useAgent`), served by
// the runtime it talks to (page/serve.mjs). It drives react-core as a chat app does:
// `window.chat.submit(question)` adds the user's message and runs the agent
// (`copilotkit.runAgent`), `stop()` is the Stop button's `copilotkit.stopAgent`, and
// `switchTo(threadId)` changes the thread `useAgent` is scoped to (null: a new thread),
// connecting to it as CopilotChat does (`copilotkit.connectAgent`: the runtime replays the
// thread's runs, and follows one still going). A thread named in the URL (?thread=) is
// connected to on mount, so a reload shows it again; the page keeps its thread in the URL.
//
// Every message of the thread is rendered (`.msg`, a user's `.msg-user`; text in
// `.part-text`, each tool call a `.part-tool`), so tests/js/browser/answers.js reads each
// turn's answer off the page (`window.answers()`). #status says how the last AG-UI run
// ended, #answer shows the last assistant text (`window.chat.ask` is `submit`).
import { HttpAgent } from "@ag-ui/client";
import { CopilotKitProvider, useAgent, useCopilotKit } from "@copilotkit/react-core/v2";
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

import { watchAnswers } from "../../browser/answers.js";

const params = new URLSearchParams(location.search);

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (part && part.type === "text" ? part.text : "")).join("");
}

function Message({ message }) {
  const text = textOf(message.content);
  if (message.role === "tool") {
    return (
      <div className="msg msg-tool" data-id={message.id}>
        <div className="tool-result">{text}</div>
      </div>
    );
  }
  if (message.role !== "user" && message.role !== "assistant") {
    // Reasoning and activity messages: shown, never part of a turn's answer.
    return (
      <div className={`msg msg-${message.role}`} data-id={message.id}>
        <div className="part-other">{text}</div>
      </div>
    );
  }
  return (
    <div className={`msg msg-${message.role}`} data-id={message.id}>
      {text ? <span className="part-text">{text}</span> : null}
      {(message.toolCalls ?? []).map((call) => (
        <div key={call.id} className="part-tool tool-call" data-name={call.function?.name}>
          tool call: {call.function?.name}
        </div>
      ))}
    </div>
  );
}

/** The thread shown: its id, and whether the user picked it (then it is connected to). */
function initialThread() {
  const id = params.get("thread");
  return id ? { id, explicit: true } : { id: crypto.randomUUID(), explicit: false };
}

function Chat() {
  const [thread, setThread] = useState(initialThread);
  const { agent } = useAgent({
    agentId: "chat",
    runtimeAgentId: params.get("agent"),
    threadId: thread.id,
  });
  const { copilotkit } = useCopilotKit();
  const [status, setStatus] = useState("idle");

  // The thread in the URL, as an app routes it: a reload comes back to it.
  useEffect(() => {
    const url = new URL(location.href);
    url.searchParams.set("thread", thread.id);
    history.replaceState(null, "", url);
  }, [thread.id]);

  // CopilotChat's connect effect: a thread the user picked is connected to (its runs
  // replayed, one still going followed); a new one starts empty. Leaving a thread
  // detaches its run, it does not stop it.
  useEffect(() => {
    agent.threadId = thread.id;
    if (!thread.explicit) {
      if (agent.messages.length > 0) agent.setMessages([]);
      return undefined;
    }
    const connectAbort = new AbortController();
    if (agent instanceof HttpAgent) agent.abortController = connectAbort;
    copilotkit.connectAgent({ agent }).catch((error) => console.error("connectAgent failed", error));
    return () => {
      connectAbort.abort();
      void agent.detachActiveRun().catch(() => {});
    };
  }, [agent, thread, copilotkit]);

  useEffect(() => {
    const subscription = agent.subscribe({
      onRunFinishedEvent: () => setStatus((current) => (current === "stopped" ? current : "finished")),
      onRunErrorEvent: ({ event }) => setStatus(`error: ${event.message}`),
    });
    const submit = async (question) => {
      setStatus("running");
      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: question });
      try {
        await copilotkit.runAgent({ agent });
      } catch (error) {
        setStatus((current) => (current === "running" ? `error: ${error?.message ?? error}` : current));
      }
    };
    window.chat = {
      submit,
      ask: submit,
      stop: () => {
        setStatus("stopped");
        copilotkit.stopAgent({ agent });
      },
      loading: () => agent.isRunning,
      switchTo: (id) => setThread(id ? { id, explicit: true } : { id: crypto.randomUUID(), explicit: false }),
    };
    return () => subscription.unsubscribe();
  }, [agent, copilotkit]);

  const answer = [...agent.messages].reverse().find((m) => m.role === "assistant" && textOf(m.content));
  return (
    <main id="chat" data-thread={thread.id}>
      <p id="status">{status}</p>
      <div id="answer">{answer ? textOf(answer.content) : ""}</div>
      <section id="messages">
        {agent.messages.map((message) => (
          <Message key={message.id} message={message} />
        ))}
      </section>
    </main>
  );
}

watchAnswers();
createRoot(document.getElementById("root")).render(
  <CopilotKitProvider runtimeUrl={params.get("runtime")}>
    <Chat />
  </CopilotKitProvider>,
);
