// `LangGraphChatTransport`: the AI SDK's `useChat` on a LangGraph server, its chat id the
// thread. A run streams as UI message chunks and, when its stream drops, ends on the route's
// exact answer; `reconnectToStream` replays the thread's latest turn and follows its run
// (resume.js); a Stop cancels the run on the server and keeps what was shown.

import { DEFAULT_MAX_WAIT_MS } from "../core/settle.js";
import { streamWithRecovery } from "../core/stream.js";
import { UiChunkWriter } from "./chunks.js";
import { openResume } from "./resume.js";
import { threadIdOf } from "./thread-id.js";

/** The run's input for a `useChat` submit: its last user message's text. */
export function defaultInput(messages) {
  for (let i = (messages?.length ?? 0) - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.role !== "user") continue;
    const text = (message.parts ?? [])
      .filter((part) => part?.type === "text" && typeof part.text === "string")
      .map((part) => part.text)
      .join("");
    return { messages: [{ role: "human", content: text }] };
  }
  return null;
}

export class LangGraphChatTransport {
  /**
   * @param {object} options
   * @param {string} options.apiUrl        the LangGraph server's URL
   * @param {string} options.assistantId   the graph (or assistant) to run
   * @param {Record<string,string>} [options.defaultHeaders]  sent with every request (auth)
   * @param {(messages: object[], trigger: string) => object|null} [options.input]
   *   the run's input from the chat's messages (default: the last user message)
   * @param {typeof fetch} [options.fetch]
   * @param {number} [options.maxWait]       ms to follow a run after its stream dropped
   * @param {number} [options.stallTimeout]  ms without a byte before a stream is dropped
   */
  constructor({ apiUrl, assistantId, defaultHeaders = {}, input = defaultInput, fetch, maxWait, stallTimeout } = {}) {
    if (!apiUrl) throw new TypeError("LangGraphChatTransport: apiUrl is required");
    if (!assistantId) throw new TypeError("LangGraphChatTransport: assistantId is required");
    this.apiUrl = apiUrl;
    this.assistantId = assistantId;
    this.defaultHeaders = defaultHeaders;
    this.input = input;
    this.fetchImpl = fetch ?? ((...args) => globalThis.fetch(...args));
    this.maxWait = maxWait ?? DEFAULT_MAX_WAIT_MS;
    this.stallTimeout = stallTimeout;
  }

  // `reconnectToStream` replays the answer from its start (never only what follows), so
  // a resume replaces the message it resumes instead of appending after its prefix.
  get resumeStreamIsReplay() {
    return true;
  }

  headersFor(headers) {
    return { ...this.defaultHeaders, ...(headers instanceof Headers ? Object.fromEntries(headers) : headers) };
  }

  async sendMessages({ chatId, messages, abortSignal, trigger, headers }) {
    const threadId = await threadIdOf(chatId);
    const requestHeaders = this.headersFor(headers);
    const input = this.input(messages, trigger);
    return chunkStream(async (writer) => {
      // The stream's own events show the run; once it has ended, the route's answer.
      let following = false;
      const answer = await streamWithRecovery({
        url: this.apiUrl,
        threadId,
        assistantId: this.assistantId,
        input,
        ifNotExists: "create", // a new chat's thread is made by its first run
        followRun: true, // a stream stalled after its run ended ends then, not at the stall timeout
        headers: requestHeaders,
        fetchImpl: this.fetchImpl,
        maxWait: this.maxWait,
        ...(this.stallTimeout ? { stallTimeout: this.stallTimeout } : {}),
        stopSignal: abortSignal,
        onEvent: (event, data) => writer.event(event, data),
        onReconcile: () => {
          following = true;
        },
        onUpdate: (text) => {
          if (following) writer.progress(text);
        },
      });
      if (answer.stopped) writer.stop();
      else writer.finish(answer);
    });
  }

  async reconnectToStream({ chatId, abortSignal, headers }) {
    const produce = await openResume({
      url: this.apiUrl,
      threadId: await threadIdOf(chatId),
      fetchImpl: this.fetchImpl,
      headers: this.headersFor(headers),
      signal: abortSignal,
      maxWait: this.maxWait,
    });
    return produce === null ? null : chunkStream(produce);
  }
}

/** A stream of UI message chunks written by `produce(writer)`; a failure is its `error`. */
function chunkStream(produce) {
  let cancelled = false;
  return new ReadableStream({
    start(controller) {
      const enqueue = (chunk) => {
        if (!cancelled) controller.enqueue(chunk);
      };
      const writer = new UiChunkWriter(enqueue);
      produce(writer).then(
        () => {
          if (!cancelled) controller.close();
        },
        (error) => {
          if (cancelled) return;
          enqueue({ type: "error", errorText: error?.message ?? String(error) });
          controller.close();
        },
      );
    },
    cancel() {
      // The consumer left (a Stop aborts the run through `abortSignal`); a reload is
      // simply gone, and the run goes on for `reconnectToStream` to find.
      cancelled = true;
    },
  });
}
