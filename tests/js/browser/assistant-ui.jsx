// The chat page on assistant-ui: its Thread (the primitives the shadcn template
// composes) on `useLangGraphRuntime`, whose `stream` is `unstable_createLangGraphStream`
// (hook=bare) or, one call changed, `createLangGraphStreamWithRecovery` from
// @evoscientist/final-answer/assistant-ui (hook=recovery). Query: ?api=URL&hook=…
// &assistant=GRAPH (default EvoScientist). A question is typed into the composer and
// sent (`window.chat.submit`); `window.chat.answers()` reads each turn's answer off the
// rendered thread: the text parts after the turn's last tool call. The runtime allows
// cancelling (the Stop button's `cancelRun`), and `window.chat.switchTo` switches threads
// as a thread list does. The adopted page loads a thread with the drop-in's `load`
// (`load: stream.load`); the bare one reads the thread's state, as apps do. The thread's
// id is kept in the URL (&thread=ID), and the page's thread list (an app's own: assistant-ui
// keeps none across a reload) lists it, so that a reload opens the thread again.
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
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

import { watchAnswers } from "./answers.js";

const params = new URLSearchParams(window.location.search);
const hook = params.get("hook") ?? "recovery";
const client = new Client({ apiUrl: params.get("api") });
const makeStream = hook === "bare" ? unstable_createLangGraphStream : createLangGraphStreamWithRecovery;
const stream = makeStream({ client, assistantId: params.get("assistant") ?? "EvoScientist" });
// Every event the runtime pulled from the stream, counted: a Stop's test tells an answer
// the runtime held at the click (drawn in the next frame) from one that came after it.
// `chat.onPull` hears each as the runtime takes it, for a Stop placed right after one.
let pulled = 0;
function counted(events) {
  const it = events[Symbol.asyncIterator]();
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: (...args) =>
      it.next(...args).then((step) => {
        if (!step.done) {
          pulled += 1;
          window.chat?.onPull?.(step.value);
        }
        return step;
      }),
    return: (...args) => it.return?.(...args) ?? Promise.resolve({ done: true, value: undefined }),
  };
}
const runtimeStream = async (messages, config) => counted(await stream(messages, config));
const load =
  hook === "bare"
    ? async (id) => ({ messages: (await client.threads.getState(id)).values.messages ?? [] })
    : stream.load;

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

function keepInUrl(id) {
  const url = new URL(window.location.href);
  if (id) url.searchParams.set("thread", id);
  else url.searchParams.delete("thread");
  window.history.replaceState(null, "", url);
}

// The app's thread list: the LangGraph threads this page made, and the one in its URL.
// A thread's remote id is its LangGraph id.
const known = new Set(params.get("thread") ? [params.get("thread")] : []);
let shown = (id) => keepInUrl(id);
const threadList = {
  list: async () => ({ threads: [...known].map((id) => ({ status: "regular", remoteId: id, externalId: id })) }),
  initialize: async () => {
    const { thread_id: id } = await client.threads.create();
    known.add(id);
    shown(id);
    return { remoteId: id, externalId: id };
  },
  fetch: async (id) => ({ status: "regular", remoteId: id, externalId: id }),
  rename: async () => {},
  archive: async () => {},
  unarchive: async () => {},
  delete: async (id) => {
    known.delete(id);
  },
  generateTitle: async () => new ReadableStream({ start: (controller) => controller.close() }),
};

function App() {
  const [threadId, setThreadId] = useState(params.get("thread") ?? undefined);
  shown = (id) => {
    keepInUrl(id);
    setThreadId(id);
  };
  const runtime = useLangGraphRuntime({
    stream: runtimeStream,
    unstable_allowCancellation: true,
    unstable_threadListAdapter: threadList,
    load,
  });
  useEffect(() => {
    if (params.get("thread")) runtime.threads.switchToThread(params.get("thread"));
  }, []);
  window.chat = {
    submit: (question) => {
      runtime.thread.composer.setText(question);
      runtime.thread.composer.send();
    },
    stop: () => runtime.thread.cancelRun(),
    pulled: () => pulled,
    loading: () => runtime.thread.getState().isRunning,
    // A thread list's item names the thread by its local id; the test knows the server's.
    switchTo: (id) => {
      if (id === null) return runtime.threads.switchToNewThread();
      shown(id);
      return runtime.threads.switchToThread(id);
    },
  };
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <Thread threadId={threadId} />
    </AssistantRuntimeProvider>
  );
}

watchAnswers();
createRoot(document.getElementById("root")).render(<App />);
