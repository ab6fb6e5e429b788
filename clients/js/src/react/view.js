// What `useStreamWithRecovery` returns: the SDK's own return value behind a proxy that
// answers `messages` and `values` with the route's answers in place, and adds `recovery`.
// The SDK (1.9+) picks a run's stream modes from the fields the app reads, so each field is
// read from the SDK's own getter, only when the app reads it; while nothing is recovered
// they are the SDK's very objects.

import { applyAnswers, withFinalAnswer } from "../core/messages.js";
import { withStoppedTurns } from "../core/stopped.js";
import { answerText } from "../core/text.js";

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

  // Once per render and source list: stable identities for the app's memos, and one list
  // through `messages` and `values` when the SDK gives one list to both.
  const lists = new Map();
  const overlayList = (list) => {
    if (lists.has(list)) return lists.get(list);
    const source = Array.isArray(list) ? list : [];
    let messages = applyAnswers(source, answersToApply(source, follower.answers));
    if (settled) messages = withFinalAnswer(messages, final.answer, follower.answers);
    messages = withStoppedTurns(messages, follower.stopped.of(threadId));
    const shown = messages === source ? list : messages;
    if (Array.isArray(shown)) follower.shown = shown;
    lists.set(list, shown);
    return shown;
  };
  // What the stream showed, before any recovery: the follower judges a settled answer
  // against it (never read from the SDK there: see follower.js's streamMessages).
  const noteStreamed = (list) => {
    if (Array.isArray(list)) follower.streamMessages = list;
  };

  let values; // once per render
  const readValues = () => {
    if (values !== undefined) return values;
    const streamValues = Reflect.get(base, "values", base);
    noteStreamed(streamValues?.[messagesKey]);
    const merged = settled ? withState(streamValues, final) : streamValues;
    const list = merged?.[messagesKey];
    const shown = overlayList(list);
    values = shown === list ? merged : { ...(merged || {}), [messagesKey]: shown };
    return values;
  };
  const readMessages = () => {
    // The SDK's getter: it adds `messages-tuple` and `values` to the next run.
    const streamMessages = Reflect.get(base, "messages", base);
    noteStreamed(streamMessages);
    return overlayList(settled ? withStateMessages(streamMessages, final, messagesKey) : streamMessages);
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
          return readMessages();
        case "values":
          return readValues();
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

/** `answers` less those `list` shows already (applied, they would only copy messages). */
function answersToApply(list, answers) {
  if (!(answers instanceof Map) || answers.size === 0) return answers;
  let left = answers;
  for (const message of list) {
    const id = message && message.id;
    if (id == null || !left.has(id) || answerText(message.content) !== left.get(id)) continue;
    if (left === answers) left = new Map(answers);
    left.delete(id);
  }
  return left;
}

/**
 * The SDK's `streamValues` with the thread's state read after the settled run
 * (`final.values`) over it: what a cut stream missed (tool results, later steps). The
 * SDK's own object when the state holds nothing else (a run streamed whole), kept on
 * `final` so that every render gets the same object for the same SDK values.
 */
function withState(streamValues, final) {
  const state = final.values;
  if (!state || typeof state !== "object") return streamValues;
  const kept = final.withState;
  if (kept && kept.streamValues === streamValues) return kept.values;
  const differs = Object.keys(state).some((key) => !sameData(state[key], streamValues?.[key]));
  const values = differs ? { ...(streamValues || {}), ...state } : streamValues;
  final.withState = { streamValues, values };
  return values;
}

/** `withState` for the SDK's `messages`: the state's list where it holds other data. */
function withStateMessages(streamMessages, final, messagesKey) {
  const state = final.values?.[messagesKey];
  if (!Array.isArray(state)) return streamMessages;
  const kept = final.withStateMessages;
  if (kept && kept.streamMessages === streamMessages) return kept.messages;
  const messages = sameData(state, streamMessages) ? streamMessages : state;
  final.withStateMessages = { streamMessages, messages };
  return messages;
}

/** Whether `a` and `b` hold the same data (JSON-like: arrays, plain objects, primitives). */
export function sameData(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keys = (o) => Object.keys(o).filter((key) => o[key] !== undefined);
  const ka = keys(a);
  if (ka.length !== keys(b).length) return false;
  return ka.every((key) => Object.prototype.hasOwnProperty.call(b, key) && sameData(a[key], b[key]));
}
