// What `reconnectToStream` streams: the thread's latest turn replayed from its state (the
// reasoning, tool calls and text the page had), then its run followed through the route
// to its answer, under the message id the run's stream gave the turn (its run id).

import { ThreadGone } from "../core/errors.js";
import { CONNECT_MARGIN_MS, READ_MARGIN_MS, fetchWithin, join, jsonBody } from "../core/http.js";
import { Reconciler } from "../core/settle.js";
import { TurnReplay } from "./replay.js";
import { threadExists } from "./thread-exists.js";

/** The thread's state; null when it cannot be read now (the route still answers) or the
 * resume was left. */
async function stateOf({ url, threadId, fetchImpl, headers, signal }) {
  const path = `/threads/${encodeURIComponent(threadId)}/state`;
  try {
    const response = await fetchWithin(
      fetchImpl,
      join(url, path),
      { method: "GET", headers: { Accept: "application/json", ...headers }, cache: "no-store" },
      CONNECT_MARGIN_MS + READ_MARGIN_MS,
      signal,
    );
    return response.ok ? jsonBody(response.body) : null;
  } catch {
    return null;
  }
}

const answerKey = (answer) => JSON.stringify([answer.status, answer.message_id, answer.content]);

/**
 * The resume of a thread: null when there is nothing to resume (a new chat, whose thread
 * the server does not have yet, asked without a request that fails; a thread with no
 * run; a stopped run), else `produce(writer)`, which writes the turn to its end on a
 * `UiChunkWriter`.
 */
export async function openResume({ url, threadId, fetchImpl, headers, signal, maxWait }) {
  const io = { url, threadId, fetchImpl, headers, signal };
  if ((await threadExists(io)) === false) return null;
  const reconciler = new Reconciler(io);
  let latest;
  try {
    latest = await reconciler.fetch(0);
  } catch (error) {
    if (error instanceof ThreadGone) return null;
    throw error;
  }
  if (!latest.run_id && !latest.content) return null;
  // A cancelled run (a Stop) wrote nothing more: the page's own message, as shown at
  // Stop, is all there is, and a replay would put the checkpoint's in its place.
  if (latest.error?.code === "run_cancelled") return null;
  // Read before the stream starts: the SDK empties the message at its first chunk.
  const firstState = await stateOf(io);
  const replay = new TurnReplay(latest.run_id);
  return async (writer) => {
    // The state's new messages first, then the route's text: a message's reasoning and
    // the tool calls before it stay ahead of its text.
    const show = (answer, state) => {
      for (const [event, data] of replay.events(state)) writer.event(event, data);
      writer.progress(answer.content ?? "", answer.message_id);
    };
    writer.start(latest.run_id);
    show(latest, firstState);
    let shown = answerKey(latest);
    let updates = Promise.resolve();
    const answer = latest.complete
      ? latest
      : await reconciler.settle(maxWait, (next) => {
          if (answerKey(next) === shown) return;
          shown = answerKey(next);
          updates = updates.then(async () => show(next, await stateOf(io)));
        });
    await updates;
    writer.finish(answer);
  };
}
