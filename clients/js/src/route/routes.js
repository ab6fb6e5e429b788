// The route as a fetch handler: a `Request` in, a `Response` out, whatever framework
// mounts it (`../hono` on LangGraph's JS server). The twin of the Python route
// (evoscientist_final_answer/http/routes.py), read through the server's own API (`reader.js`).

import { MethodNotAllowed, errorRow, errorRowOf } from "./errors.js";
import { InvalidRequest, parseQuery } from "./params.js";
import { readerFor } from "./readers.js";
import { answerEtag, answerResponse, etagMatches, representationOf } from "./responses.js";
import { waitForAnswer } from "./wait.js";

export const ROUTE_METHODS = ["GET", "HEAD"];

/**
 * `GET|HEAD /api/threads/{threadId}/final-answer`. `options.apiUrl`: the server to
 * read (default: the one the route is mounted in); `options.client`: a langgraph SDK
 * `Client`, or `(request) => Client`, to read through instead; `options.storage`: the
 * mounting server's own storage (`server-storage.js`), when it lends it.
 */
export async function handleFinalAnswer(request, threadId, options = {}) {
  if (!ROUTE_METHODS.includes(request.method)) {
    const response = failure(new MethodNotAllowed(request.method));
    response.headers.set("Allow", ROUTE_METHODS.join(", "));
    return response;
  }
  let query;
  try {
    query = parseQuery(threadId, new URL(request.url).searchParams);
  } catch (error) {
    if (error instanceof InvalidRequest) return failure(error);
    throw error;
  }
  const ifNoneMatch = request.headers.get("if-none-match");
  const reader = readerFor(request, options);
  const signal = request.signal;
  try {
    let answer;
    if (query.wait > 0) {
      const representation = representationOf(query);
      const changed = async (candidate) =>
        Boolean(ifNoneMatch) && !etagMatches(ifNoneMatch, await answerEtag(candidate, representation));
      answer = await waitForAnswer(reader, query, { changed, progress: Boolean(ifNoneMatch), signal });
    } else {
      answer = await reader.read(query.threadId, query.runId, signal);
    }
    return await answerResponse(answer, query, ifNoneMatch, request.method);
  } catch (error) {
    return failure(error, query);
  }
}

/** The documented error for `error`: its row of `errors.js`'s `ROUTE_ERRORS`. */
function failure(error, query = {}) {
  if (error?.name === "AbortError") {
    // The caller left: nobody reads this; a status of its own keeps access logs truthful.
    return new Response(null, { status: 499 });
  }
  const row = errorRow(error);
  if (row === null) {
    // What no row answers (an SDK or server surprise) is logged, and the client is told
    // the store could not be read: retryable, never a stack trace.
    console.error(`final-answer: thread ${query.threadId}:`, error);
    return errorRowOf("store_unavailable").response(error, query);
  }
  if (row.log) console[row.log](`final-answer: thread ${query.threadId}:`, error);
  return row.response(error, query);
}
