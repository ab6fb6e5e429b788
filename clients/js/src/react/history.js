"use client";
// The thread history `useStream` keeps when `fetchStateHistory` is set, held here and
// handed back to it through its `thread` option, so it can be refetched after a run that
// the route settled: the SDK refetches only after a clean end, and its next submit forks
// from the head it knows — a stale head after a cut would drop the recovered turn.

import { useCallback, useEffect, useRef, useState } from "react";

function fetchHistory(client, threadId, limit) {
  if (limit === false) {
    return client.threads.getState(threadId).then((state) => (state.checkpoint == null ? [] : [state]));
  }
  return client.threads.getHistory(threadId, { limit: typeof limit === "number" ? limit : 10 });
}

/** `fetchStateHistory` as `useStream` reads it: false, true, or a number (the limit). */
export function historyLimit(fetchStateHistory) {
  if (typeof fetchStateHistory === "object" && fetchStateHistory != null) {
    return fetchStateHistory.limit ?? false;
  }
  return fetchStateHistory ?? false;
}

/**
 * The history's state once a read of `key` (thread and limit) begins: the SDK's (what it
 * held for that key, now loading; for another key, nothing yet), except that a `refetch`
 * (`mutate`) of a thread with no history yet says nothing loads (see below).
 */
export function fetchBegun(prev, key, refetch) {
  if (prev.key !== key) return { key, data: undefined, error: undefined, isLoading: !refetch };
  return { ...prev, isLoading: !refetch || prev.data !== undefined || prev.isLoading };
}

/**
 * `{data, error, isLoading, mutate}` for `threadId`, as the SDK's own history hook keeps
 * it. `skipFetch()` true: a submit is creating this thread, whose end refetches anyway.
 *
 * One difference: `mutate` (a refetch: after a run's end, a Stop, a settled cut) never
 * says the thread is loading when it has no history yet. That is the page's own submit's
 * thread, shown from its stream; the SDK reads `isLoading` with no `data` as the thread
 * loading (`isThreadLoading`), which apps render as a placeholder in place of the whole
 * conversation (the EvoScientist WebUI does): one frame of an empty page until the read
 * answers, at every Stop on a new thread.
 */
export function useThreadHistory(client, threadId, limit, { enabled, skipFetch, onError }) {
  const [state, setState] = useState({ key: undefined, data: undefined, error: undefined, isLoading: enabled && threadId != null });
  const latest = useRef({ client, onError });
  latest.current = { client, onError };
  const fetcher = useCallback(
    (id, refetch = false) => {
      if (!enabled || id == null) {
        setState({ key: id, data: undefined, error: undefined, isLoading: false });
        return Promise.resolve([]);
      }
      const key = `${id}:${limit}`;
      setState((prev) => fetchBegun(prev, key, refetch));
      return fetchHistory(latest.current.client, id, limit).then(
        (data) => {
          setState((prev) => (prev.key === key ? { key, data, error: undefined, isLoading: false } : prev));
          return data;
        },
        (error) => {
          setState((prev) => (prev.key === key ? { ...prev, error, isLoading: false } : prev));
          latest.current.onError?.(error);
          return Promise.reject(error);
        },
      );
    },
    [enabled, limit],
  );
  useEffect(() => {
    if (skipFetch()) return;
    fetcher(threadId).catch(() => {});
  }, [fetcher, threadId]);
  return {
    data: state.data,
    error: state.error,
    isLoading: state.isLoading,
    mutate: (id) => fetcher(id ?? threadId, true),
  };
}
