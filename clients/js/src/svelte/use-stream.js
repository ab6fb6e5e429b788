// `useStreamWithRecovery` for @langchain/svelte (1.x): its `useStream`, plus the route.
// Everything that is not Svelte is shared with the @langchain/react drop-in
// (../controller/binding.js); what is Svelte here is the handle's tracked getters, the
// controller's store observed, and `onDestroy`. Plain JavaScript: no Svelte compiler needed.

import { STREAM_CONTROLLER, useStream } from "@langchain/svelte";
import { onDestroy } from "svelte";
import { createSubscriber } from "svelte/reactivity";

import { RecoveryBinding } from "../controller/binding.js";

// The fields the drop-in shows in place of upstream's (binding.js's `view`).
const VIEWED = ["values", "messages", "isLoading", "isThreadLoading", "error", "recovery"];
const OWN = [...VIEWED, "submit", "stop"];

/**
 * `useStream(options)` from @langchain/svelte that always ends a run showing the
 * thread's authoritative answer. Call it where upstream's is called (a component's
 * initialisation). Extra option: `recovery: { maxWaitMs }`. Extra field: `recovery`.
 * Same options (`threadId` may be a getter, as upstream's) and the same handle of
 * reactive getters, which Svelte tracks through upstream's own `$state` and, for the
 * route's answers, `createSubscriber`.
 */
export function useStreamWithRecovery(options) {
  let notify = null;
  // Reading a viewed field inside an effect subscribes it to the route's answers.
  const tracked = createSubscriber((update) => {
    notify = update;
    return () => {
      notify = null;
    };
  });
  let version = 0;
  const binding = new RecoveryBinding(() => {
    version += 1;
    notify?.();
  });
  const base = useStream(binding.streamOptions(options));
  const controller = base[STREAM_CONTROLLER];
  const apiUrl = base.client?.threads?.apiUrl;

  // One view per change of what it is made of, so that a field read twice is the same
  // value (a message list is not rebuilt on every read).
  let memo = null;
  const view = () => {
    const inputs = [version, base.messages, base.values, base.isLoading, base.isThreadLoading, base.error];
    if (memo === null || inputs.some((input, i) => input !== memo.inputs[i])) {
      memo = { inputs, view: binding.view(base, controller, apiUrl) };
    }
    return memo.view;
  };
  view(); // the follower's config, before the controller's first change

  const observe = () => {
    const snapshot = controller.rootStore.getSnapshot();
    binding.observe({ threadId: snapshot.threadId, isLoading: snapshot.isLoading });
  };
  onDestroy(controller.rootStore.subscribe(observe));
  observe();
  onDestroy(() => binding.dispose());

  const handle = {};
  for (const key of Reflect.ownKeys(base)) {
    if (OWN.includes(key)) continue;
    Object.defineProperty(handle, key, { enumerable: true, get: () => base[key] });
  }
  for (const key of VIEWED) {
    Object.defineProperty(handle, key, {
      enumerable: true,
      get: () => {
        tracked();
        return view()[key];
      },
    });
  }
  const submit = binding.submit(base.submit);
  Object.defineProperty(handle, "submit", { enumerable: true, value: submit });
  Object.defineProperty(handle, "stop", { enumerable: true, value: binding.stop(base.stop) });
  return handle;
}
