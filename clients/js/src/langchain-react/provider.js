"use client";
// `StreamProvider` and `useStreamContext` as @langchain/react has them, on the drop-in:
// a provider of its own, since a component reading the binding's context would get the
// binding's stream, without `recovery` and without the route's answers.

import { createContext, createElement, useContext } from "react";

import { useStreamWithRecovery } from "./use-stream.js";

const StreamContext = createContext(null);

/**
 * @langchain/react's `StreamProvider`, on `useStreamWithRecovery`: read it with this
 * module's `useStreamContext` (the binding's own reads another context).
 */
export function StreamProvider(props) {
  const { children, ...options } = props;
  const stream = useStreamWithRecovery(options);
  return createElement(StreamContext.Provider, { value: stream }, children);
}

/** The nearest `StreamProvider`'s stream, `recovery` included. */
export function useStreamContext() {
  const stream = useContext(StreamContext);
  if (stream === null) {
    throw new Error(
      "useStreamContext must be used within @evoscientist/final-answer/langchain-react's <StreamProvider>",
    );
  }
  return stream;
}
