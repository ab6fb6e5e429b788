// Whether the server holds a thread, asked as a search by its id (a 200 either way): a new
// chat has no thread yet, and asking for one by its path answers 404, which the browser
// logs as a failed request on every new chat.

import { CONNECT_MARGIN_MS, READ_MARGIN_MS, fetchWithin, join, jsonBody } from "../core/http.js";

/**
 * True or false; null when the server could not say (an error status, or it ignored
 * the `ids` filter and listed other threads).
 */
export async function threadExists({ url, threadId, fetchImpl = globalThis.fetch, headers = {}, signal }) {
  const response = await fetchWithin(
    fetchImpl,
    join(url, "/threads/search"),
    {
      method: "POST",
      headers: { Accept: "application/json", "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ ids: [threadId], limit: 1, select: ["thread_id"] }),
      cache: "no-store",
    },
    CONNECT_MARGIN_MS + READ_MARGIN_MS,
    signal,
  );
  const threads = response.ok ? jsonBody(response.body) : null;
  if (!Array.isArray(threads)) return null;
  if (threads.some((thread) => thread?.thread_id === threadId)) return true;
  return threads.length === 0 ? false : null;
}
