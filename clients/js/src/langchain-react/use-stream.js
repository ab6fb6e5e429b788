"use client";
// `useStreamWithRecovery` for @langchain/react (1.x): its `useStream`, plus the route.
// Same options, same return value, and `recovery`. It wraps the binding's hook (no
// fork): the binding keeps streaming, tool calls, interrupts, sub-agent and sub-graph
// views, the submission queue; this hook follows every run through the final-answer
// route and, once the route says the run is complete, `messages` (and
// `values.messages`, so `useMessages(stream)` and `useValues(stream)` too) show the
// route's answer text in place of whatever the stream showed: the answer's message
// instance rebuilt by its own class, never appended to, never spread.
// `useSuspenseStreamWithRecovery` is the same hook behind suspense.js's gate.

import { STREAM_CONTROLLER, useStream } from "@langchain/react";
import { useEffect, useRef, useState } from "react";

import { IDLE_RECOVERY, routeHeaders } from "../core/follow.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY } from "../core/settle.js";
import { newRequestId } from "../core/stream.js";
import { RunFollower } from "./follower.js";
import { overlayAnswers } from "./messages.js";
import { exactlyOnceCommandsFetch, exactlyOnceWebSocketFactory } from "./once.js";
import { hydrationKey, suspend, suspenseView } from "./suspense.js";

/** How long a rebinding waits for the binding to close its old stream. */
const TEARDOWN_LIMIT_MS = 2000;

function within(promise, ms) {
  let timer;
  const limit = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/**
 * Rebind the binding's controller to `threadId`: its run is over (the route said so).
 * `disconnect()` ends the local run without cancelling anything on the server; leaving
 * the thread closes the transport (its reconnect loop ends); hydrating reads the
 * thread's state, which holds what the stream missed (tool results, later steps).
 */
async function rebind(controller, threadId) {
  await controller.disconnect();
  await within(controller.hydrate(null), TEARDOWN_LIMIT_MS);
  await controller.hydrate(threadId);
}

/**
 * `useStream(options)` from @langchain/react that always ends a run showing the thread's
 * authoritative answer. Extra option: `recovery: { maxWaitMs }` (default 240 s: how long
 * to follow a run). Extra return value: `recovery: { status, complete, recovered,
 * error }`, `status` one of `idle`, `streaming`, `settling`, `settled`, `failed`.
 */
export function useStreamWithRecovery(options) {
  const { recovery: recoveryOptions, ...streamOptions } = options;
  const [, setVersion] = useState(0);
  const followerRef = useRef(null);
  if (followerRef.current === null) {
    followerRef.current = new RunFollower(() => setVersion((v) => v + 1));
  }
  const follower = followerRef.current;
  // The binding keeps the callbacks it was first given: these read the latest options.
  const latest = useRef(options);
  latest.current = options;

  // Run starts exactly once (once.js): the binding's SSE transport sends its commands
  // through this fetch, and retries none; its WebSocket transport opens its sockets
  // through this factory, which answers a `run.start` cut before its answer. A transport
  // the app built itself is its own.
  const once = useRef(null);
  if (
    once.current === null ||
    once.current.fetchBase !== options.fetch ||
    once.current.socketBase !== options.webSocketFactory
  ) {
    once.current = {
      fetchBase: options.fetch,
      socketBase: options.webSocketFactory,
      fetch: exactlyOnceCommandsFetch(options.fetch),
      webSocketFactory: exactlyOnceWebSocketFactory(options.webSocketFactory, options.fetch),
    };
  }
  const ownTransport = options.transport != null && typeof options.transport !== "string";

  const base = useStream({
    ...streamOptions,
    ...(ownTransport
      ? {}
      : { fetch: once.current.fetch, webSocketFactory: once.current.webSocketFactory }),
    onThreadId(id) {
      follower.threadNamed(id);
      latest.current.onThreadId?.(id);
    },
    onCreated(meta) {
      follower.runCreated(meta && meta.runId);
      latest.current.onCreated?.(meta);
    },
    onReconnect(info) {
      follower.reconnecting();
      latest.current.onReconnect?.(info);
    },
  });
  const controller = base[STREAM_CONTROLLER];

  const final = follower.final;
  const frozen = follower.frozen;
  const messagesKey = options.messagesKey ?? "messages";
  const messages = overlayAnswers(frozen ?? base.messages, follower.answers, final && final.answer);
  follower.config = {
    apiUrl: base.client?.threads?.apiUrl ?? options.apiUrl,
    headers: routeHeaders(options),
    maxWaitMs: recoveryOptions?.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    isLoading: () => controller.rootStore.getSnapshot().isLoading,
    baseMessages: () => controller.rootStore.getSnapshot().messages,
    baseError: () => controller.rootStore.getSnapshot().error,
    shown: () => follower.shown ?? messages,
    refresh: (threadId) => rebind(controller, threadId),
  };
  follower.shown = messages;

  useEffect(() => {
    if (follower.frozen === null) follower.threadShown(base.threadId ?? null);
  }, [base.threadId]);

  const loadingRef = useRef(false);
  useEffect(() => {
    if (base.isLoading === loadingRef.current) return;
    loadingRef.current = base.isLoading;
    follower.loadingChanged(base.isLoading);
  }, [base.isLoading]);

  useEffect(() => {
    follower.mounted = true;
    return () => {
      follower.mounted = false;
      // Not at once: StrictMode unmounts and remounts a component on the spot.
      setTimeout(() => {
        if (!follower.mounted) follower.dispose();
      }, 0);
    };
  }, []);

  const submit = async (input, submitOptions) => {
    await follower.beforeSubmit();
    const requestId = newRequestId();
    const run = follower.begin({ requestId });
    try {
      return await base.submit(input, {
        ...submitOptions,
        metadata: { ...(submitOptions?.metadata || {}), [REQUEST_ID_KEY]: requestId },
      });
    } finally {
      follower.submitReturned(run);
    }
  };

  const over = final !== null && final.run === follower.run && final.answer.complete;
  const values =
    base.values && base.values[messagesKey] === messages
      ? base.values
      : { ...(base.values || {}), [messagesKey]: messages };
  return {
    ...base,
    values,
    messages,
    // A run the route says is over is not loading, whatever its stream still does.
    isLoading: base.isLoading && !over && frozen === null,
    isThreadLoading: frozen === null ? base.isThreadLoading : false,
    error: follower.hidesError(base.error) ? undefined : base.error,
    submit,
    recovery: follower.recovery ?? IDLE_RECOVERY,
    [STREAM_CONTROLLER]: controller,
  };
}

/**
 * `useSuspenseStream(options)` from @langchain/react, on `useStreamWithRecovery`: the
 * component suspends until the shown thread's first hydration settles, and returns
 * `isStreaming` in place of `isLoading`, `isThreadLoading` and `hydrationPromise`, plus
 * `recovery`. A stream error reaches the error boundary only when the route did not
 * recover the run (suspense.js).
 */
export function useSuspenseStreamWithRecovery(options) {
  const stream = useStreamWithRecovery(options);
  suspend(stream, hydrationKey(options));
  return suspenseView(stream);
}
