// useSuspenseStreamWithRecovery's gate (src/langchain-react/suspense.js): when a
// component suspends, what reaches its error boundary, and the shape it returns. The hook
// itself runs in the browser tests (tests/js/test_browser_langchain_react.py).

import assert from "node:assert/strict";
import { test } from "node:test";

import { hydrationKey, suspend, suspenseView } from "../../src/langchain-react/suspense.js";

function thrown(fn) {
  try {
    fn();
  } catch (value) {
    return value;
  }
  return undefined;
}

function stream(fields = {}) {
  return {
    isLoading: false,
    error: undefined,
    hydrationPromise: Promise.resolve(),
    recovery: { status: "idle" },
    ...fields,
  };
}

test("no thread shown: a new chat never suspends", () => {
  const key = hydrationKey({ apiUrl: "http://a", assistantId: "g", threadId: null });
  assert.equal(key, null);
  const pending = new Promise(() => {});
  assert.equal(thrown(() => suspend(stream({ hydrationPromise: pending }), key, new Map())), undefined);
});

test("the key tells servers, assistants and threads apart", () => {
  const keys = new Set([
    hydrationKey({ apiUrl: "http://a", assistantId: "g", threadId: "t" }),
    hydrationKey({ apiUrl: "http://b", assistantId: "g", threadId: "t" }),
    hydrationKey({ apiUrl: "http://a", assistantId: "h", threadId: "t" }),
    hydrationKey({ apiUrl: "http://a", assistantId: "g", threadId: "u" }),
  ]);
  assert.equal(keys.size, 4);
});

test("a thread suspends until its first hydration settles, and only then", async () => {
  const gates = new Map();
  let resolve;
  const first = new Promise((r) => {
    resolve = r;
  });
  const suspended = thrown(() => suspend(stream({ hydrationPromise: first }), "k", gates));
  assert.ok(suspended instanceof Promise, "the component must suspend on the pending hydration");
  // A retry before it settles suspends on the same promise.
  assert.equal(thrown(() => suspend(stream({ hydrationPromise: first }), "k", gates)), suspended);
  resolve();
  await suspended;
  assert.equal(thrown(() => suspend(stream({ hydrationPromise: first }), "k", gates)), undefined);
  // A rebinding hydrates the thread again (a new pending promise): no second suspension,
  // the recovered answer must not be hidden behind a fallback.
  const again = new Promise(() => {});
  assert.equal(thrown(() => suspend(stream({ hydrationPromise: again }), "k", gates)), undefined);
});

test("a failed hydration reaches the error boundary as an Error", async () => {
  const gates = new Map();
  const failing = Promise.reject("thread gone");
  const suspended = thrown(() => suspend(stream({ hydrationPromise: failing }), "k", gates));
  await suspended;
  const error = thrown(() => suspend(stream(), "k", gates));
  assert.ok(error instanceof Error);
  assert.equal(error.message, "thread gone");
});

test("a stream error waits for the route while the run is still followed", () => {
  const gates = new Map();
  const cut = new TypeError("network error");
  // The render where the stream ended on an error: the follower has not seen the end.
  const ended = stream({ error: cut, recovery: { status: "streaming" } });
  assert.equal(thrown(() => suspend(ended, null, gates)), undefined);
  // Still loading: never thrown, as with the binding.
  const loading = stream({ error: cut, isLoading: true, recovery: { status: "settled" } });
  assert.equal(thrown(() => suspend(loading, null, gates)), undefined);
});

test("an error the route did not recover reaches the boundary, as with the binding", () => {
  const gates = new Map();
  for (const status of ["idle", "settled", "failed"]) {
    const error = thrown(() => suspend(stream({ error: "boom", recovery: { status } }), null, gates));
    assert.ok(error instanceof Error, status);
    assert.equal(error.message, "boom");
  }
  // No recovery field at all (not the drop-in): the binding's rule.
  const bare = { isLoading: false, error: new Error("x"), hydrationPromise: Promise.resolve() };
  assert.equal(thrown(() => suspend(bare, null, gates)), bare.error);
});

test("the view drops the loading fields for isStreaming and keeps the rest", () => {
  const controller = Symbol.for("@langchain/react/controller");
  const base = {
    ...stream({ isLoading: true, isThreadLoading: false }),
    messages: ["m"],
    recovery: { status: "streaming" },
    [controller]: "c",
  };
  const view = suspenseView(base);
  assert.equal(view.isStreaming, true);
  for (const gone of ["isLoading", "isThreadLoading", "hydrationPromise"]) {
    assert.ok(!(gone in view), gone);
  }
  assert.deepEqual(view.messages, ["m"]);
  assert.equal(view.recovery, base.recovery);
  assert.equal(view[controller], "c");
});
