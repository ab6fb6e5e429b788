// A stand-in for @ag-ui/langgraph's `LangGraphAgent` (0.0.43), with what the drop-in relies
// on: `prepareStream` hands `forwardedProps` to `client.runs.stream`, `handleStreamEvents`
// iterates the stream (breaking on a requested cancel it has not sent), takes the
// server's run id from the stream's metadata, turns message chunks into text events, and
// ends with a `MESSAGES_SNAPSHOT` of the thread's state (read twice, as it does) and
// `RUN_FINISHED`; `abortRun` cancels `activeRun.id`. Events go to `events`, and (as
// @ag-ui/client's pipeline does) into `messages`. The runtime runs each request on a
// `clone()`.

export class FakeLangGraphAgent {
  constructor(config) {
    this.config = config;
    this.client = config.client;
    this.messages = [];
    this.events = [];
    this.messagesInProcess = {};
    this.cancelRequested = false;
    this.cancelSent = false;
  }

  clone() {
    const copy = Object.create(Object.getPrototypeOf(this));
    Object.assign(copy, {
      config: this.config,
      client: this.client,
      messages: [...this.messages],
      events: [],
      messagesInProcess: {},
      cancelRequested: false,
      cancelSent: false,
    });
    return copy;
  }

  /** One AG-UI run, as the runtime's runner starts it: `messages` the client sent. */
  async runAgent({ threadId, runId, messages = [] }) {
    this.messages = [...messages];
    this.activeRun = { id: runId, threadId };
    this.cancelRequested = false;
    this.cancelSent = false;
    const subscriber = { next: (event) => this.receive(event), error: (error) => this.receive({ type: "ERROR", error }), complete() {}, closed: false };
    this.subscriber = subscriber;
    const input = { threadId, runId, messages, forwardedProps: {} };
    const prepared = await this.prepareStream(input, ["events"]);
    await this.handleStreamEvents(prepared, threadId, subscriber, input, ["events"]);
  }

  receive(event) {
    this.events.push(event);
    if (event.type === "TEXT_MESSAGE_START") this.messages.push({ id: event.messageId, role: "assistant", content: "" });
    const message = this.messages.find((m) => m.id === event.messageId);
    if (event.type === "TEXT_MESSAGE_CONTENT" && message) message.content += event.delta;
    if (event.type === "MESSAGES_SNAPSHOT") this.messages = event.messages;
  }

  dispatchEvent(event) {
    this.subscriber.next(event);
    return true;
  }

  async prepareStream(input) {
    return { streamResponse: this.client.runs.stream(input.threadId, "assistant", input.forwardedProps), state: {} };
  }

  async handleStreamEvents(prepared, threadId, subscriber) {
    this.subscriber = subscriber;
    this.dispatchEvent({ type: "RUN_STARTED", threadId, runId: this.activeRun.id });
    for await (const part of prepared.streamResponse) {
      if (this.cancelRequested && !this.cancelSent) {
        await this.client.runs.cancel(threadId, this.activeRun.id).catch(() => {});
        this.cancelSent = true;
        break;
      }
      if (part.event === "metadata") {
        this.activeRun.id = part.data.run_id;
      } else if (part.event === "messages") {
        const [chunk] = part.data;
        let progress = this.messagesInProcess[this.activeRun.id];
        if (!progress) {
          this.dispatchEvent({ type: "TEXT_MESSAGE_START", messageId: chunk.id, role: "assistant" });
          progress = { id: chunk.id, toolCallId: null };
          this.messagesInProcess[this.activeRun.id] = progress;
        }
        this.dispatchEvent({ type: "TEXT_MESSAGE_CONTENT", messageId: progress.id, delta: chunk.content });
      }
    }
    // LangGraphAgent reads the state twice: for the node the run ended on, then for its snapshots.
    await this.client.threads.getState(threadId);
    const state = await this.client.threads.getState(threadId);
    this.dispatchEvent({ type: "MESSAGES_SNAPSHOT", messages: state.values.messages });
    this.dispatchEvent({ type: "RUN_FINISHED", threadId, runId: this.activeRun.id });
    subscriber.complete();
  }

  abortRun() {
    this.cancelRequested = true;
    const { threadId, id } = this.activeRun ?? {};
    if (threadId && id && !this.cancelSent) {
      this.client.runs.cancel(threadId, id).then(() => {
        this.cancelSent = true;
      }, () => {});
    }
  }
}

/**
 * A run stream the test feeds part by part (`push`), ended by `end()`, or, as the server
 * ends it, by a cancel of its run (`runId`, the server's id).
 */
export function feed(runId = "server-run") {
  const queued = [];
  let wake = null;
  let ended = false;
  const notify = () => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  return {
    runId,
    push(...parts) {
      queued.push(...parts);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    async *parts(signal) {
      signal?.addEventListener("abort", notify, { once: true });
      for (;;) {
        if (signal?.aborted) throw new DOMException("This operation was aborted", "AbortError");
        if (queued.length) {
          yield queued.shift();
          continue;
        }
        if (ended) return;
        await new Promise((resolve) => {
          wake = resolve;
        });
      }
    },
  };
}

/**
 * A langgraph SDK client on `stream` (a `feed()`): `runs.stream` records its payload,
 * `runs.cancel` its calls (a cancel of the stream's run ends it); the thread's state is
 * `state()`'s messages (AG-UI shape).
 */
export function fakeClient(stream, state = () => []) {
  const client = {
    payloads: [],
    cancels: [],
    runs: {
      stream(threadId, assistantId, payload) {
        client.payloads.push(payload);
        return stream.parts(payload?.signal);
      },
      async cancel(...args) {
        client.cancels.push(args);
        if (args[1] === stream.runId) stream.end();
      },
    },
    threads: {
      async getState(threadId) {
        return { values: { messages: state(threadId) } };
      },
    },
  };
  return client;
}

export const metadata = (runId) => ({ event: "metadata", data: { run_id: runId } });
export const token = (messageId, content) => ({ event: "messages", data: [{ id: messageId, content }, {}] });

/** Resolves once `check()` holds (polled each tick), or rejects after `ms`. */
export async function until(check, ms = 1000) {
  const began = Date.now();
  while (!check()) {
    if (Date.now() - began > ms) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** `promise`, or a rejection after `ms`: an AG-UI run that must end at once. */
export function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The text messages still open when `RUN_FINISHED` was sent (the runtime's verifier refuses it then). */
export function openAtFinish(events) {
  const open = new Set();
  for (const event of events) {
    if (event.type === "TEXT_MESSAGE_START") open.add(event.messageId);
    if (event.type === "TEXT_MESSAGE_END") open.delete(event.messageId);
    if (event.type === "RUN_FINISHED") return [...open];
  }
  return null;
}
