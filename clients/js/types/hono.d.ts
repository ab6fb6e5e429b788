// Declarations for "@evoscientist/final-answer/hono" (hand-written; src/ is plain ESM).

import type { Client } from "@langchain/langgraph-sdk";
import type { Hono } from "hono";

export const FINAL_ANSWER_PATH: "/api/threads/:thread_id/final-answer";

export interface FinalAnswerAppOptions {
  /** Read another server's API (a sidecar); default: the server the app is mounted in. */
  apiUrl?: string;
  /** A langgraph SDK client to read through, or one per request. */
  client?: Client | ((request: Request) => Client);
}

/**
 * `GET /api/threads/{thread_id}/final-answer` on LangGraph's JavaScript server:
 * `export const app = finalAnswerApp();` in the `http.app` of `langgraph.json`.
 */
export function finalAnswerApp(options?: FinalAnswerAppOptions): Hono;
