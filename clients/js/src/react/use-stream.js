"use client";
// `useStreamWithRecovery`: `useStream` from @langchain/langgraph-sdk/react, plus the route.
// Same options, same return value, and `recovery`. It wraps the SDK's hook (no fork), and
// once the route says a run is complete `messages` show the route's answer text in place of
// whatever the stream showed: replaced, never appended, so no truncated or doubled prefix
// survives the run's end.

import { Client } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { useEffect, useMemo, useRef, useState } from "react";

import { routeHeaders } from "../core/follow.js";
import { exactlyOnceFetch, withExactlyOnce } from "../core/once.js";
import { stoppedTurnsOf } from "../core/stopped-reads.js";
import { DEFAULT_MAX_WAIT_MS, REQUEST_ID_KEY } from "../core/settle.js";
import { newRequestId } from "../core/stream.js";
import { RunFollower, runStorage } from "./follower.js";
import { historyLimit, useThreadHistory } from "./history.js";
import { recoveryView } from "./view.js";

/**
 * `useStream(options)` that always ends a run showing the thread's authoritative answer.
 * Extra option: `recovery: { maxWaitMs }` (default 240 s: how long to follow a run whose
 * stream is gone). Extra return value: `recovery: { status, complete, recovered, error }`
 * with `status` one of `idle`, `streaming`, `settling` (the stream ended; the run is
 * being followed), `settled`, `failed`.
 */
export function useStreamWithRecovery(options) {
  const { recovery: recoveryOptions, ...streamOptions } = options;
  const [, setVersion] = useState(0);
  const followerRef = useRef(null);
  if (followerRef.current === null) {
    followerRef.current = new RunFollower(() => setVersion((v) => v + 1));
  }
  const follower = followerRef.current;
  const storageRef = useRef(undefined);
  if (storageRef.current === undefined) storageRef.current = runStorage(options.reconnectOnMount);

  const [ownThreadId, setOwnThreadId] = useState(options.threadId ?? null);
  const threadId = "threadId" in options ? (options.threadId ?? null) : ownThreadId;

  const client = useMemo(
    () =>
      // An app's own client is kept, its submits made exactly-once in place.
      (options.client && withExactlyOnce(options.client)) ??
      new Client({
        apiUrl: options.apiUrl,
        apiKey: options.apiKey,
        // The SDK re-sends a POST whose response never came (see core/once.js): each submit
        // is tagged with a request id, and this fetch joins its run instead.
        callerOptions: {
          ...options.callerOptions,
          fetch: exactlyOnceFetch(options.callerOptions?.fetch),
        },
        defaultHeaders: options.defaultHeaders,
      }),
    [options.client, options.apiKey, options.apiUrl, options.callerOptions, options.defaultHeaders],
  );
  // The route is asked at the server the client talks to. A client that names none (a
  // test's stand-in for the SDK's Client) has no route to ask: the hook is then the
  // wrapped hook itself, its options and its return value passed through untouched.
  const apiUrl = client.threads?.apiUrl ?? options.apiUrl;
  const live = typeof apiUrl === "string" && apiUrl !== "";
  // The turns the user stopped live with the client: what the app reads of its threads
  // through it (a WebUI's own state read after a run) carries them too.
  if (live) follower.stopped = stoppedTurnsOf(client, options.messagesKey ?? "messages");
  const ownHistory = useThreadHistory(client, threadId, historyLimit(options.fetchStateHistory), {
    enabled: live && options.thread == null,
    skipFetch: () => follower.run !== null && follower.run.streaming,
    onError: options.onError,
  });
  const thread = options.thread ?? ownHistory;

  const sdkOptions = {
    ...streamOptions,
    client,
    thread,
    onThreadId(id) {
      setOwnThreadId(id);
      follower.switchThread(id);
      options.onThreadId?.(id);
    },
    onCreated(meta) {
      follower.runCreated(meta);
      options.onCreated?.(meta);
    },
    onStop(args) {
      if (!follower.stopping) options.onStop?.(args);
    },
  };
  const base = useStream(live ? sdkOptions : streamOptions);

  const messagesKey = options.messagesKey ?? "messages";
  follower.config = {
    apiUrl,
    headers: routeHeaders(options),
    maxWaitMs: recoveryOptions?.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    client,
    refreshHistory: (id) => thread.mutate(id).catch(() => {}),
    storage: storageRef.current,
    stop: base.stop,
    messagesKey,
  };
  if (follower.threadId !== threadId && !(follower.run && follower.run.streaming)) {
    follower.switchThread(threadId);
  }

  const loadingRef = useRef(false);
  useEffect(() => {
    if (!live || base.isLoading === loadingRef.current) return;
    loadingRef.current = base.isLoading;
    follower.loadingChanged(base.isLoading, base.error);
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

  const send = (values, submitOptions) => {
    const requestId = newRequestId();
    follower.begin({ requestId });
    return base.submit(values, {
      ...submitOptions,
      metadata: { ...(submitOptions?.metadata || {}), [REQUEST_ID_KEY]: requestId },
    });
  };
  // After a Stop the thread is busy until the stopped run's cancel lands.
  const submit = (values, submitOptions) =>
    follower.cancelling === null
      ? send(values, submitOptions)
      : follower.beforeSubmit().then(() => send(values, submitOptions));
  // Stop is the user's word: the run is cancelled and what its turn showed stays.
  const stop = () => {
    follower.userStop();
    return base.stop();
  };
  const joinStream = (runId, ...rest) => {
    follower.begin({ runId });
    return base.joinStream(runId, ...rest);
  };

  if (!live) {
    return recoveryView(base, {
      follower, threadId, messagesKey, submit: base.submit, joinStream: base.joinStream, stop: base.stop,
    });
  }
  return recoveryView(base, { follower, threadId, messagesKey, submit, joinStream, stop });
}
