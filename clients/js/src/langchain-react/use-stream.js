"use client";
// `useStreamWithRecovery` for @langchain/react (1.x): its `useStream`, plus the route, so
// a run always ends showing the thread's authoritative answer. Same options, same return
// value, and `recovery`; `useSuspenseStreamWithRecovery` is the same hook behind
// suspense.js's gate.

import { STREAM_CONTROLLER, useStream } from "@langchain/react";
import { useEffect, useRef, useState } from "react";

import { RecoveryBinding } from "../controller/binding.js";
import { hydrationKey, suspend, suspenseView } from "./suspense.js";

/**
 * `useStream(options)` from @langchain/react that always ends a run showing the thread's
 * authoritative answer. Extra option: `recovery: { maxWaitMs }` (default 240 s: how long
 * to follow a run). Extra return value: `recovery: { status, complete, recovered,
 * error }`, `status` one of `idle`, `streaming`, `settling`, `settled`, `failed`.
 *
 * It wraps the binding's hook (no fork): the binding keeps streaming, tool calls,
 * interrupts, sub-agent and sub-graph views, the submission queue. Once the route says
 * the run is complete, `messages` (and `values.messages`, so `useMessages(stream)` and
 * `useValues(stream)` too) show the route's answer text: the answer's message instance
 * rebuilt by its own class, never appended to, never spread.
 */
export function useStreamWithRecovery(options) {
  const [, setVersion] = useState(0);
  const bindingRef = useRef(null);
  if (bindingRef.current === null) {
    bindingRef.current = new RecoveryBinding(() => setVersion((v) => v + 1));
  }
  const binding = bindingRef.current;
  // The binding keeps the callbacks it was first given: these read the latest options.
  const base = useStream(binding.streamOptions(options));
  const controller = base[STREAM_CONTROLLER];
  const view = binding.view(base, controller, base.client?.threads?.apiUrl);

  useEffect(() => {
    binding.observe({ threadId: base.threadId, isLoading: base.isLoading });
  }, [base.threadId, base.isLoading]);

  useEffect(() => {
    binding.mounted = true;
    return () => {
      binding.mounted = false;
      // Not at once: StrictMode unmounts and remounts a component on the spot.
      setTimeout(() => {
        if (!binding.mounted) binding.dispose();
      }, 0);
    };
  }, []);

  return {
    ...base,
    ...view,
    submit: binding.submit(base.submit),
    stop: binding.stop(base.stop),
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
