// A CopilotKit page (@copilotkit/react-core's v2 provider and `useAgent`), served by the
// runtime it talks to (page/serve.mjs): `window.chat.ask(question)` runs one turn;
// #status says how the AG-UI run ended, #answer shows the last assistant message.
import { CopilotKitProvider, useAgent, useCopilotKit } from "@copilotkit/react-core/v2";
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(location.search);

function Chat() {
  const { agent } = useAgent({
    agentId: "chat",
    runtimeAgentId: params.get("agent"),
    threadId: params.get("thread"),
  });
  const { copilotkit } = useCopilotKit();
  const [status, setStatus] = useState("idle");
  useEffect(() => {
    const subscription = agent.subscribe({
      onRunFinishedEvent: () => setStatus("finished"),
      onRunErrorEvent: ({ event }) => setStatus(`error: ${event.message}`),
    });
    window.chat = {
      ask: async (question) => {
        setStatus("running");
        agent.addMessage({ id: crypto.randomUUID(), role: "user", content: question });
        try {
          await copilotkit.runAgent({ agent });
        } catch (error) {
          setStatus((current) => (current === "running" ? `error: ${error?.message ?? error}` : current));
        }
      },
    };
    return () => subscription.unsubscribe();
  }, [agent, copilotkit]);
  const answer = [...agent.messages].reverse().find((m) => m.role === "assistant" && m.content);
  return (
    <main>
      <p id="status">{status}</p>
      <div id="answer">{answer ? answer.content : ""}</div>
    </main>
  );
}

createRoot(document.getElementById("root")).render(
  <CopilotKitProvider runtimeUrl={params.get("runtime")}>
    <Chat />
  </CopilotKitProvider>,
);
