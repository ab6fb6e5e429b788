// A stand-in for `useStream` of @langchain/langgraph-sdk/react, as an app's tests make
// one (`vi.mock("@langchain/langgraph-sdk/react")`): it returns what the test set, with
// `messages` kept apart from `values`, as a hand-made mock may. drop-in.test.mjs routes
// the hook's import of the SDK here (stand-in-hooks.mjs).

export const standIn = {
  /** The options each call was given, newest last. */
  calls: [],
  /** What the hook returns: set by the test. */
  result: null,
};

export function useStream(options) {
  standIn.calls.push(options);
  return standIn.result;
}
