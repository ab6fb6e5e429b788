// The recovery of one v2 stream controller (`StreamController`, which @langchain/react's
// and @langchain/svelte's `useStream` both build), with no framework: what a drop-in hands
// the framework's `useStream`, what it shows in place of its fields, and its `submit`. A
// framework's drop-in adds only re-rendering, observing and disposing (`RecoveryBinding`).

import { IDLE_RECOVERY, routeHeaders, within } from "../core/follow.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY } from "../core/settle.js";
import { newRequestId } from "../core/stream.js";
import { RunFollower } from "./follower.js";
import { withStoppedTurns } from "../core/stopped.js";
import { overlayAnswers } from "./messages.js";
import { exactlyOnceCommandsFetch, exactlyOnceWebSocketFactory } from "./once.js";

/** How long a rebinding waits for the controller to close its old stream. */
const TEARDOWN_LIMIT_MS = 2000;

/**
 * The errors with which the WebSocket transport of @langchain/langgraph-sdk (1.11.0 under
 * @langchain/react 1.1.0, 1.9.28 under @langchain/svelte 1.0.29;
 * dist/client/stream/transport/websocket.js) refuses a command before sending it:
 * `open()` (the socket failed before it opened, or the transport is closed) and
 * `sendCommand()` (no socket open, none coming). A submit that failed with one never sent
 * its `run.start`: sending it again cannot make a second run.
 */
const UNSENT = new Set([
  "Failed to open protocol WebSocket.",
  "Protocol WebSocket transport is closed.",
  "Protocol WebSocket is not open.",
]);

/** Whether `error` is one a command was refused with before it left (`UNSENT`). */
export function neverSent(error) {
  return error instanceof Error && UNSENT.has(error.message);
}

/**
 * Rebind `controller` to `threadId`: its run is over (the route said so).
 * `disconnect()` ends the local run without cancelling anything on the server; leaving
 * the thread closes the transport (its reconnect loop ends); hydrating reads the
 * thread's state, which holds what the stream missed (tool results, later steps).
 */
export async function rebind(controller, threadId) {
  await controller.disconnect();
  await within(controller.hydrate(null), TEARDOWN_LIMIT_MS);
  await controller.hydrate(threadId);
}

export class RecoveryBinding {
  /** `rerender()`: the framework shows the binding's fields again. */
  constructor(rerender) {
    this.follower = new RunFollower(rerender);
    this.options = {};
    this.once = null;
    this.controller = null;
    this.lastThreadId = undefined;
    this.lastLoading = false;
  }

  /**
   * The framework's `useStream` options for the app's `options` (`recovery` taken out):
   * its transports made exactly-once (a transport the app built itself is its own), its
   * callbacks telling the follower first. Callbacks read the newest options.
   */
  streamOptions(options) {
    const { recovery: _recovery, ...streamOptions } = options;
    this.options = options;
    if (
      this.once === null ||
      this.once.fetchBase !== options.fetch ||
      this.once.socketBase !== options.webSocketFactory
    ) {
      // Run starts exactly once (once.js): the SSE transport sends its commands through
      // this fetch and retries none; the WebSocket transport opens its sockets through
      // this factory, which answers a `run.start` cut before its answer.
      this.once = {
        fetchBase: options.fetch,
        socketBase: options.webSocketFactory,
        fetch: exactlyOnceCommandsFetch(options.fetch),
        webSocketFactory: exactlyOnceWebSocketFactory(options.webSocketFactory, options.fetch, {
          startsOverHttp: (threadUrl) => this.startsOverHttp(threadUrl),
        }),
      };
    }
    const ownTransport = options.transport != null && typeof options.transport !== "string";
    const follower = this.follower;
    return {
      ...streamOptions,
      ...(ownTransport ? {} : { fetch: this.once.fetch, webSocketFactory: this.once.webSocketFactory }),
      onThreadId: (id) => {
        follower.threadNamed(id);
        this.options.onThreadId?.(id);
      },
      onCreated: (meta) => {
        follower.runCreated(meta && meta.runId);
        this.options.onCreated?.(meta);
      },
      onReconnect: (info) => {
        follower.reconnecting();
        this.options.onReconnect?.(info);
      },
    };
  }

  /**
   * How a socket's `run.start` for `threadUrl` goes over HTTP instead (the commands fetch
   * and the app's headers), when the thread's latest run was cancelled; else null.
   */
  startsOverHttp(threadUrl) {
    const threadId = decodeURIComponent(threadUrl.slice(threadUrl.lastIndexOf("/") + 1));
    if (!this.follower.latestRunCancelled(threadId)) return null;
    return { fetch: this.once.fetch, headers: routeHeaders(this.options) };
  }

  /**
   * What the drop-in shows for `base` (the framework's `useStream` value) on `controller`:
   * `messages` and `values` with the route's answers, `isLoading` false once the route
   * said the run is over, the error of a recovered run hidden, and `recovery`. Also
   * points the follower at this controller and these options (call it on every render).
   */
  view(base, controller, apiUrl) {
    const follower = this.follower;
    const options = this.options;
    this.controller = controller;
    const final = follower.final;
    const frozen = follower.frozen;
    const messagesKey = options.messagesKey ?? "messages";
    const messages = withStoppedTurns(
      overlayAnswers(frozen ?? base.messages, follower.answers, final && final.answer),
      follower.stopped.of(follower.threadId),
    );
    const snapshot = () => controller.rootStore.getSnapshot();
    follower.config = {
      apiUrl: apiUrl ?? options.apiUrl,
      headers: routeHeaders(options),
      maxWaitMs: options.recovery?.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      isLoading: () => snapshot().isLoading,
      baseMessages: () => snapshot().messages,
      baseError: () => snapshot().error,
      shown: () => follower.shown ?? messages,
      refresh: (threadId) => rebind(controller, threadId),
      cancel: (threadId, runId) => base.client.runs.cancel(threadId, runId, true),
    };
    follower.shown = messages;
    const over = final !== null && final.run === follower.run && final.answer.complete;
    const stopped = follower.run !== null && follower.run.userStopped === true;
    // A run whose stream is gone while the route follows it still runs: the app keeps its
    // Stop button, and does not take a new question the server would refuse.
    const recovering = follower.recovery.status === "settling";
    const values =
      base.values && base.values[messagesKey] === messages
        ? base.values
        : { ...(base.values || {}), [messagesKey]: messages };
    return {
      values,
      messages,
      // A run the route says is over is not loading, whatever its stream still does.
      isLoading: (base.isLoading && !over && !stopped && frozen === null) || recovering,
      isThreadLoading: frozen === null ? base.isThreadLoading : false,
      error: follower.hidesError(base.error) ? undefined : base.error,
      recovery: follower.recovery ?? IDLE_RECOVERY,
    };
  }

  /**
   * The controller shows `threadId` and is (not) `isLoading`: a thread shown anew is
   * followed from its latest turn (unless a rebinding is under way), a change of the
   * loading flag is a run's start or its stream's end.
   */
  observe({ threadId, isLoading }) {
    const follower = this.follower;
    if (threadId !== this.lastThreadId) {
      this.lastThreadId = threadId;
      if (follower.frozen === null) follower.threadShown(threadId ?? null);
    }
    if (isLoading !== this.lastLoading) {
      this.lastLoading = isLoading;
      follower.loadingChanged(isLoading);
    }
  }

  /**
   * `submit(input, options)` on `baseSubmit`, tagged with a request id, followed.
   *
   * A submit the controller's thread stream could not send is sent once more, on a fresh
   * stream: the SDK's `ThreadStream` keeps the promise of its first socket's open for its
   * life (`#ensureOpen`, dist/client/stream/index.js), so when that socket failed before
   * it opened (a connection cut at the handshake, e.g. right after a Stop rebinds the
   * controller while the network is still down) every later command of the stream
   * rejects with that failure, though its transport reconnects on its own, and the
   * controller keeps the stream as long as it shows the thread: the page could start no
   * more runs there. Rebinding the controller to the thread replaces the stream.
   */
  submit(baseSubmit) {
    const follower = this.follower;
    return async (input, submitOptions) => {
      await follower.beforeSubmit();
      const requestId = newRequestId();
      const run = follower.begin({ requestId });
      const options = {
        ...submitOptions,
        metadata: { ...(submitOptions?.metadata || {}), [REQUEST_ID_KEY]: requestId },
      };
      let unsent = false;
      try {
        const result = await baseSubmit(input, {
          ...options,
          // The controller reports a submit's failure here (it does not reject).
          onError: (error) => {
            if (neverSent(error)) unsent = true;
            else submitOptions?.onError?.(error);
          },
        });
        const controller = this.controller;
        if (!unsent || controller === null || run !== follower.run) return result;
        const threadId = controller.rootStore.getSnapshot().threadId ?? run.threadId ?? follower.threadId;
        if (threadId) await follower.rebound(threadId);
        return await baseSubmit(input, options);
      } finally {
        follower.submitReturned(run);
      }
    };
  }

  /**
   * `stop(options)` on `baseStop`: a Stop keeps what its turn showed and cancels the run
   * (the follower does, whether or not the controller still knows it); `{cancel: false}`
   * is a disconnect, not a Stop, and passes through.
   */
  stop(baseStop) {
    return (stopOptions) => {
      if (stopOptions?.cancel === false || !this.follower.userStop()) return baseStop(stopOptions);
      return baseStop({ ...stopOptions, cancel: false });
    };
  }

  dispose() {
    this.follower.dispose();
  }
}
