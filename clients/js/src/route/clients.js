// The route's SDK clients: it reads as the caller (the caller's credentials on every API
// call, so the server's auth decides), with one client per distinct credentials, reused
// by every request that carries them.

import { Client } from "@langchain/langgraph-sdk";

// Headers that describe the caller's request, not the caller: never passed on.
const NOT_PASSED_ON = new Set([
  "accept",
  "accept-encoding",
  "connection",
  "content-length",
  "content-type",
  "host",
  "if-none-match",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
]);
// Distinct callers' clients kept; the least recently used goes first.
export const MAX_CLIENTS = 256;

const pool = new Map();

/** The caller's headers to send on the route's own API calls (its credentials). */
export function callerHeaders(request) {
  const headers = {};
  for (const [name, value] of request.headers) {
    if (!NOT_PASSED_ON.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  return headers;
}

/** Who is asking, as the server's auth sees it: every header passed on, in one string.
 * Two requests share a client, or a cached answer, only when their keys are equal. */
export function callerKey(request) {
  return JSON.stringify(Object.entries(callerHeaders(request)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A client of the server the route is mounted in (or of `apiUrl`), as the caller. */
export function clientFor(request, { apiUrl, client } = {}) {
  if (typeof client === "function") return client(request);
  if (client) return client;
  const key = `${apiUrl ?? ""}\n${callerKey(request)}`;
  let made = pool.get(key);
  if (made) {
    pool.delete(key); // re-inserted below: most recently used last
  } else {
    made = new Client({
      apiUrl,
      apiKey: null,
      defaultHeaders: callerHeaders(request),
      // The route answers at once or holds its own wait: the caller retries, not us. A
      // shared client queues nothing: one caller's long-polls never hold its reads.
      callerOptions: { maxRetries: 0, maxConcurrency: Infinity },
    });
    if (pool.size >= MAX_CLIENTS) pool.delete(pool.keys().next().value);
  }
  pool.set(key, made);
  return made;
}
