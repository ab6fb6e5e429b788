// The ./hono entry as a langgraph.js project adopts it (checked by `npm run typecheck`).
import { Hono } from "hono";
import { Client } from "@langchain/langgraph-sdk";
import { FINAL_ANSWER_PATH, finalAnswerApp } from "@evoscientist/final-answer/hono";

export const app = finalAnswerApp();

const existing = new Hono();
existing.route("/", finalAnswerApp({ apiUrl: "http://127.0.0.1:2024" }));
existing.route("/", finalAnswerApp({ client: (request) => new Client({ defaultHeaders: { authorization: request.headers.get("authorization") ?? "" } }) }));

const path: "/api/threads/:thread_id/final-answer" = FINAL_ANSWER_PATH;
void path;
