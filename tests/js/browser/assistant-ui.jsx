// The chat page on assistant-ui: its Thread (the primitives the shadcn template
// composes) on `useLangGraphRuntime`, whose `stream` is `unstable_createLangGraphStream`
// (hook=bare) or, one call changed, `createLangGraphStreamWithRecovery` from
// @evoscientist/final-answer/assistant-ui (hook=recovery). Query: ?api=URL&hook=…
// &assistant=GRAPH (default EvoScientist). A question is typed into the composer and
// sent (`window.chat.submit`); `window.chat.answers()` reads each turn's answer off the
// rendered thread: the text parts after the turn's last tool call.
import {
  AssistantRuntimeProvider,
  ComposerPrimitive,
  ThreadPrimitive,
} from "@assistant-ui/react";
import {
  unstable_createLangGraphStream,
  useLangGraphRuntime,
} from "@assistant-ui/react-langgraph";
import { createLangGraphStreamWithRecovery } from "@evoscientist/final-answer/assistant-ui";
import { Client } from "@langchain/langgraph-sdk";
import { useState } from "react";
import { createRoot } from "react-dom/client";

import { watchAnswers } from "./answers.js";

const params = new URLSearchParams(window.location.search);
const hook = params.get("hook") ?? "recovery";
const client = new Client({ apiUrl: params.get("api") });
const makeStream = hook === "bare" ? unstable_createLangGraphStream : createLangGraphStreamWithRecovery;
const stream = makeStream({ client, assistantId: params.get("assistant") ?? "EvoScientist" });

function Part({ part }) {
  if (part.type === "text") return <span className="part-text">{part.text}</span>;
  if (part.type === "tool-call") {
    return (
      <div className="part-tool tool-call" data-name={part.toolName}>
        tool call: {part.toolName}
      </div>
    );
  }
  return null;
}

function Message({ message }) {
  const status = message.status ?? {};
  return (
    <div
      className={`msg msg-${message.role}`}
      data-id={message.id}
      data-status={status.type ?? ""}
      data-reason={status.reason ?? ""}
    >
      {message.content.map((part, i) => (
        <Part key={i} part={part} />
      ))}
    </div>
  );
}

function Thread({ threadId }) {
  return (
    <ThreadPrimitive.Root id="chat" data-thread={threadId ?? ""}>
      <ThreadPrimitive.Viewport>
        <ThreadPrimitive.Messages>{({ message }) => <Message message={message} />}</ThreadPrimitive.Messages>
      </ThreadPrimitive.Viewport>
      <ComposerPrimitive.Root>
        <ComposerPrimitive.Input placeholder="Ask" />
        <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
      </ComposerPrimitive.Root>
    </ThreadPrimitive.Root>
  );
}

function App() {
  const [threadId, setThreadId] = useState(undefined);
  const runtime = useLangGraphRuntime({
    stream,
    create: async () => {
      const { thread_id: id } = await client.threads.create();
      setThreadId(id);
      return { externalId: id };
    },
    load: async (id) => ({ messages: (await client.threads.getState(id)).values.messages ?? [] }),
  });
  window.chat = {
    submit: (question) => {
      runtime.thread.composer.setText(question);
      runtime.thread.composer.send();
    },
    loading: () => runtime.thread.getState().isRunning,
  };
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <Thread threadId={threadId} />
    </AssistantRuntimeProvider>
  );
}

watchAnswers();
createRoot(document.getElementById("root")).render(<App />);
