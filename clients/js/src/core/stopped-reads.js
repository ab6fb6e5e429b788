// The turns a page stopped, in what the page reads of its threads through its own client:
// an app that shows the thread's state itself once a run is over would drop a stopped
// turn's text (the cancelled node wrote no message), so a langgraph SDK `Client`'s reads of
// a thread's values carry the client's stopped turns. The thread on the server is untouched.

import { StoppedTurns, withStoppedTurns } from "./stopped.js";

const STOPPED_READS = Symbol.for("@evoscientist/final-answer.stoppedReads");

/** `values` (a thread's) with the stopped turns of `turns` in `values[messagesKey]`. */
function valuesWith(values, turns, messagesKey) {
  const list = values && Array.isArray(values[messagesKey]) ? values[messagesKey] : null;
  if (list === null || turns.length === 0) return values;
  const messages = withStoppedTurns(list, turns);
  return messages === list ? values : { ...values, [messagesKey]: messages };
}

function withValues(holder, turns, messagesKey) {
  if (!holder || typeof holder !== "object") return holder;
  const values = valuesWith(holder.values, turns, messagesKey);
  return values === holder.values ? holder : { ...holder, values };
}

/**
 * The turns stopped on pages that read through `client` (a langgraph SDK `Client`):
 * its `threads.getState`, `threads.get` and `threads.getHistory` carry them from now on
 * (patched in place, once; `messagesKey` is the values' message list). A client without
 * those reads (another SDK's shape) keeps its own; the turns are kept all the same.
 */
export function stoppedTurnsOf(client, messagesKey = "messages") {
  if (client === null || typeof client !== "object") return new StoppedTurns();
  if (client[STOPPED_READS]) return client[STOPPED_READS];
  const stopped = new StoppedTurns();
  Object.defineProperty(client, STOPPED_READS, { value: stopped });
  const threads = client.threads;
  if (!threads || typeof threads.getState !== "function") return stopped;
  const wrap = (name, carry) => {
    const read = threads[name];
    if (typeof read !== "function") return;
    threads[name] = async (threadId, ...rest) => carry(await read.call(threads, threadId, ...rest), stopped.of(threadId));
  };
  wrap("getState", (state, turns) => withValues(state, turns, messagesKey));
  wrap("get", (thread, turns) => withValues(thread, turns, messagesKey));
  wrap("getHistory", (states, turns) =>
    Array.isArray(states) ? states.map((state) => withValues(state, turns, messagesKey)) : states,
  );
  return stopped;
}
