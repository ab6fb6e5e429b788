// Stop is the user's word: the run a page stopped is cancelled on the server, whether its
// stream is live, cut, or being recovered, and whether or not the page ever learnt its id.
// A submit stopped before its response named the run may still become one: it is looked
// for by the request id it was tagged with, for as long as a POST takes to become a run,
// and cancelled when it shows up.

import { sleep as defaultSleep } from "./http.js";
import { LOOKUP_INTERVAL_MS, LOOKUP_WINDOW_MS } from "./once.js";
import { findRun } from "./settle.js";

/**
 * Cancel the run a Stop ended: `runId`, else the run of `threadId` tagged `requestId`
 * (looked for over `windowMs`). `cancel(threadId, runId)` is the binding's own way (its
 * client's `runs.cancel`, waiting for the run to end), so the app's auth and fetch apply;
 * `find` options are `findRun`'s (`url`, `headers`, `fetchImpl`). Resolves with the run
 * id cancelled, or null when none was found; never rejects: a run that ended meanwhile,
 * or a server that is gone, leaves nothing to cancel.
 */
export async function cancelStoppedRun({
  threadId,
  runId = null,
  requestId = null,
  cancel,
  find = {},
  windowMs = LOOKUP_WINDOW_MS,
  intervalMs = LOOKUP_INTERVAL_MS,
  sleep = defaultSleep,
  clock = Date.now,
}) {
  if (!threadId) return null;
  let id = runId;
  if (!id && requestId && find.url) {
    const began = clock();
    for (;;) {
      id = await findRun({ ...find, threadId, requestId, sleep }).catch(() => null);
      if (id || clock() - began >= windowMs) break;
      await sleep(intervalMs);
    }
  }
  if (!id) return null;
  try {
    await cancel(threadId, id);
  } catch {
    // ended meanwhile, or unreachable: nothing left to cancel
  }
  return id;
}
