// The route's answers for one run as an async iterable, for bindings that hand a
// framework a stream of events (assistant-ui's `stream` callback): each newer text the
// route reads while the run goes on, then the settled answer, last.

import { settleFinalAnswer } from "./settle.js";

/**
 * `settleFinalAnswer(options)` as an async iterable: `{ latest }` for each newer answer
 * while the run goes on (`onUpdate`), then `{ answer }` once it settled. Rejects as
 * `settleFinalAnswer` does.
 */
export async function* routeAnswers(options) {
  const queue = [];
  let wake = null;
  let outcome = null;
  const nudge = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  settleFinalAnswer({
    ...options,
    onUpdate: (latest) => {
      queue.push({ latest });
      nudge();
    },
  }).then(
    (answer) => {
      outcome = { answer };
      nudge();
    },
    (error) => {
      outcome = { error };
      nudge();
    },
  );
  for (;;) {
    while (queue.length) yield queue.shift();
    if (outcome !== null) break;
    await new Promise((resolve) => {
      wake = resolve;
    });
  }
  if (outcome.error !== undefined) throw outcome.error;
  yield { answer: outcome.answer };
}
