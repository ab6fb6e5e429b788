// @evoscientist/final-answer/hono: the final-answer route on LangGraph's JavaScript
// server (`@langchain/langgraph-api`), as a Hono app for `langgraph.json`'s `http.app`.
// The server mounts it after its auth and CORS middleware and before its own routes.

import { Hono } from "hono";

import { handleFinalAnswer } from "../route/routes.js";
import { ServerStorage } from "../route/server-storage.js";

export const FINAL_ANSWER_PATH = "/api/threads/:thread_id/final-answer";

/**
 * A Hono app serving `GET /api/threads/{thread_id}/final-answer` (and `HEAD`; any other
 * method is a 405 in the route's error shape), reading the server it is mounted in
 * through that server's own API, as the caller.
 *
 * `export const app = finalAnswerApp();` in the project's `src/app.ts`, or
 * `app.route("/", finalAnswerApp())` in an app it has already.
 *
 * `options.apiUrl`: read another server's API instead (a sidecar in front of a server
 * that takes no custom routes). `options.client`: a langgraph SDK `Client`, or
 * `(request) => Client`, to read through.
 */
export function finalAnswerApp(options = {}) {
  const app = new Hono();
  app.all(FINAL_ANSWER_PATH, (c) =>
    handleFinalAnswer(c.req.raw, c.req.param("thread_id"), { ...options, storage: ServerStorage.of(c) }),
  );
  return app;
}
