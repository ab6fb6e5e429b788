// `wait=`: hold the request until the answer is complete (or, with `If-None-Match`,
// until it changes) or the time is up. The run's end is the server's own news (its
// `/join` returns when the run does), not a busy poll; a re-read every few seconds
// catches what no join reports (a run cancelled, or lost with a restart).

import { sleep } from "../core/http.js";

export const RECHECK_MS = 2000;
// With `If-None-Match` any new checkpoint is news, and no join reports one.
export const PROGRESS_MS = 250;

/** Until the answer's run ends, `ms` pass or the caller leaves, whichever is first. */
async function nextNews(reader, threadId, runId, ms, signal) {
  // One signal ends every wait: the caller leaving aborts it, and so does the first wait
  // to end (a listener per wait on the caller's signal would pile up over a long poll).
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (signal?.aborted) stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const waits = [sleep(ms, stop.signal).catch(() => {})];
    if (runId != null) waits.push(reader.join(threadId, runId, stop.signal).catch(() => {}));
    await Promise.race(waits);
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
  if (signal?.aborted) throw Object.assign(new Error("the caller left"), { name: "AbortError" });
}

/**
 * The answer once it is complete or `changed(answer)` holds, or when `query.wait` is up.
 * `progress`: the caller holds an answer already (`If-None-Match`), so a new checkpoint
 * is news too.
 */
export async function waitForAnswer(reader, query, { changed, progress = false, signal }) {
  const deadline = Date.now() + query.wait * 1000;
  let answer = await reader.read(query.threadId, query.runId, signal);
  while (!answer.complete && !(await changed(answer))) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const interval = progress ? PROGRESS_MS : RECHECK_MS;
    await nextNews(reader, query.threadId, answer.run_id, Math.min(left, interval), signal);
    answer = await reader.read(query.threadId, query.runId, signal);
  }
  return answer;
}
