// The route as a fetch handler: a `Request` in, a `Response` out, whatever framework
// mounts it (`../hono` on LangGraph's JS server). Same contract as the Python route
// (docs/final-answer.md), read through the server's own API (`reader.js`).

import { RunNotFound } from "../answer/run-liveness.js";
import { InvalidRequest, parseQuery, pythonRepr } from "./params.js";
import { ApiReader, StoreUnavailable, ThreadNotFound, clientFor } from "./reader.js";
import { answerEtag, answerResponse, errorResponse, etagMatches, representationOf } from "./responses.js";
import { waitForAnswer } from "./wait.js";

export const ROUTE_METHODS = ["GET", "HEAD"];

/**
 * `GET|HEAD /api/threads/{threadId}/final-answer`. `options.apiUrl`: the server to
 * read (default: the one the route is mounted in); `options.client`: a langgraph SDK
 * `Client`, or `(request) => Client`, to read through instead.
 */
export async function handleFinalAnswer(request, threadId, options = {}) {
  if (!ROUTE_METHODS.includes(request.method)) {
    return errorResponse(405, "method_not_allowed", `${request.method} is not allowed here; use GET or HEAD`, false, {
      Allow: ROUTE_METHODS.join(", "),
    });
  }
  let query;
  try {
    query = parseQuery(threadId, new URL(request.url).searchParams);
  } catch (error) {
    if (error instanceof InvalidRequest) return errorResponse(422, "invalid_request", error.message, false);
    throw error;
  }
  const ifNoneMatch = request.headers.get("if-none-match");
  const reader = new ApiReader(clientFor(request, options));
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

function failure(error, query) {
  if (error instanceof ThreadNotFound) {
    return errorResponse(404, "thread_not_found", `thread ${pythonRepr(query.threadId)} not found`, false);
  }
  if (error instanceof RunNotFound) {
    return errorResponse(
      404,
      "run_not_found",
      `run ${pythonRepr(query.runId)} not found on thread ${pythonRepr(query.threadId)}`,
      false,
    );
  }
  if (error?.name === "AbortError") {
    // The caller left: nobody reads this; a status of its own keeps access logs truthful.
    return new Response(null, { status: 499 });
  }
  if (!(error instanceof StoreUnavailable)) {
    console.error(`final-answer: thread ${query.threadId}:`, error);
  }
  return errorResponse(503, "store_unavailable", "the session store could not be read; retry shortly", true);
}
