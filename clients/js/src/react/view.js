// What `useStreamWithRecovery` returns: the SDK's own return value behind a proxy that
// answers `messages` and `values` with the route's answers in place, and adds `recovery`.
//
// The SDK (1.9+) picks a run's stream modes from the fields the app reads: its
// `messages` getter adds `messages-tuple` (token streaming), `values` adds only
// `values`. So each field the app reads here is read from the SDK's own getter first,
// and no field the app did not read is ever read: a page that renders `messages` must
// stream tokens exactly as with bare `useStream`, and one that reads only `values` must
// not start asking for tokens.

import { applyAnswers, withFinalAnswer } from "../core/messages.js";
import { withStoppedTurns } from "../core/stopped.js";

/**
 * `base` (the SDK hook's return value) as the app sees it through recovery.
 * `follower`: the hook's RunFollower; `threadId`: the thread shown; `submit`, `joinStream`:
 * the hook's own, which tell the follower a stream begins.
 */
export function recoveryView(base, { follower, threadId, messagesKey, submit, joinStream, stop }) {
  const final = follower.final;
  // The SDK may still say it loads a stream this hook ended once the route said its run
  // was complete (follower.js's endStream): that run is over. So is one the user stopped
  // (SDK 1.9's isLoading outlives its stop() by a reconnect backoff it sleeps out).
  const ended =
    base.isLoading && final !== null && final.run !== null && final.run.stopped === true &&
    final.run === follower.run;
  const stopped = follower.run !== null && follower.run.userStopped === true;
  // A run whose stream is gone while the route follows it still runs: the app keeps its
  // Stop button, and does not take a new question the server would refuse.
  const recovering = follower.recovery.status === "settling";
  const loading = (base.isLoading && !ended && !stopped) || recovering;
  const settled = final !== null && final.threadId === threadId && !loading;
  let overlaid = null; // once per render: stable identities for the app's memos

  // `streamValues` are the SDK's values, read by the caller through the getter the app
  // asked for (so it has tracked its stream modes).
  const overlay = (streamValues) => {
    if (overlaid !== null) return overlaid;
    follower.streamValues = streamValues;
    let values = settled && final.values ? { ...streamValues, ...final.values } : streamValues;
    let messages = Array.isArray(values?.[messagesKey]) ? values[messagesKey] : [];
    messages = applyAnswers(messages, follower.answers);
    if (settled) messages = withFinalAnswer(messages, final.answer, follower.answers);
    messages = withStoppedTurns(messages, follower.stopped.of(threadId));
    follower.shown = messages;
    if (!(values && values[messagesKey] === messages)) {
      values = { ...(values || {}), [messagesKey]: messages };
    }
    overlaid = values;
    return overlaid;
  };

  // The error that ended a stream is not the run's while the route follows the run, nor
  // once the route says it succeeded: `recovery` tells the user instead.
  const run = follower.run;
  const following = follower.recovery.status === "settling";
  const recoveredFine =
    follower.recovery.status === "settled" && final !== null && final.answer.status !== "error";
  const dropped = run !== null && run.dropError !== undefined && (following || recoveredFine);

  return new Proxy(base, {
    get(target, prop) {
      switch (prop) {
        case "messages":
          // The SDK's getter first: it adds `messages-tuple` and `values` to the next run.
          Reflect.get(target, "messages", target);
          return overlay(Reflect.get(target, "values", target))[messagesKey] ?? [];
        case "values":
          return overlay(Reflect.get(target, "values", target));
        case "error":
          // A drop the route recovered from is not the run's error.
          return dropped && target.error === run.dropError ? undefined : target.error;
        case "isLoading":
          return loading;
        case "recovery":
          return follower.recovery;
        case "submit":
          return submit;
        case "joinStream":
          return joinStream;
        case "stop":
          return stop;
        default:
          return Reflect.get(target, prop, target);
      }
    },
    has(target, prop) {
      return prop === "recovery" || Reflect.has(target, prop);
    },
  });
}
