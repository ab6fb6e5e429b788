// The Suspense half of `useSuspenseStreamWithRecovery` (use-stream.js): @langchain/react's
// `useSuspenseStream` gate, rebuilt on the drop-in so that a run's error reaches the error
// boundary only once the route had its say. No React here.

/** Gates by thread: hydrations already asked for, settled or not. */
export const HYDRATIONS = new Map();

/** The gate's key, or null when no thread is shown (a new chat never suspends). */
export function hydrationKey(options) {
  if (options.threadId == null) return null;
  return JSON.stringify([options.apiUrl ?? null, options.assistantId ?? null, options.threadId]);
}

function gate(key, hydration, gates) {
  let entry = gates.get(key);
  if (entry === undefined) {
    entry = { settled: false, error: null, promise: null };
    entry.promise = Promise.resolve(hydration).then(
      () => {
        entry.settled = true;
      },
      (error) => {
        entry.settled = true;
        entry.error = error instanceof Error ? error : new Error(String(error));
      },
    );
    gates.set(key, entry);
  }
  return entry;
}

function asError(error) {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Throw what Suspense and error boundaries expect for `stream` (the drop-in's return
 * value, `hydrationPromise` included), or return when the component may render:
 * - the thread's first hydration pending: its promise (the component suspends; once per
 *   apiUrl, assistant and thread for the page's life);
 * - that hydration failed: its error;
 * - a stream error while nothing loads, unless the run is still being followed
 *   (`recovery.status` `streaming`: the follower has not seen the stream end yet;
 *   `settling` hides the error already). An error the route turns into a recovered
 *   answer never unmounts the component that was about to show it.
 */
export function suspend(stream, key, gates = HYDRATIONS) {
  if (key !== null) {
    const entry = gate(key, stream.hydrationPromise, gates);
    if (!entry.settled) throw entry.promise;
    if (entry.error !== null) throw entry.error;
  }
  const following = stream.recovery != null && stream.recovery.status === "streaming";
  if (stream.error != null && !stream.isLoading && !following) throw asError(stream.error);
}

/** The drop-in's return value as `useSuspenseStream` returns it: loading becomes `isStreaming`. */
export function suspenseView(stream) {
  const { isLoading, isThreadLoading, hydrationPromise, ...rest } = stream;
  return { ...rest, isStreaming: isLoading };
}
