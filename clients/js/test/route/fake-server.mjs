// A stand-in for LangGraph's JS server as the route meets it: its storage lent on each
// request's Hono context (`LANGGRAPH_OPS`, the caller's `auth`), and its API behind the
// loopback fetch the SDK's `Client` uses, each API call counted. Threads belong to the
// user who made them; a bearer token names the user, as tests/jsserver/src/auth.ts does.

import { Hono } from "hono";

import { finalAnswerApp } from "../../src/hono/index.js";

const LOOPBACK = Symbol.for("langgraph_api:fetch");
// The route keeps its clients, and each its fetch, across requests: the loopback is bound
// once, to whichever stand-in was made last.
let current = null;
globalThis[LOOPBACK] = (url, init) => current.api(new Request(url, init));

// A state as the server's storage holds it (a `StateSnapshot`), from its API's JSON.
const snapshot = (state) => ({
  values: structuredClone(state.values),
  next: state.next,
  tasks: state.tasks,
  metadata: state.metadata,
  createdAt: state.created_at,
  config: { configurable: { checkpoint_id: state.checkpoint.checkpoint_id } },
});

class HttpError extends Error {
  constructor(status) {
    super(`HTTP ${status}`);
    this.status = status;
  }
}

const userOf = (authorization) => authorization?.match(/^Bearer (\w+)$/)?.[1] ?? null;
const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

export class FakeServer {
  threads = new Map(); // thread id → {record, owner, state, runs: Map run id → record}
  calls = []; // the API calls made, as "METHOD /path"
  storageReads = 0;
  #clock = Date.parse("2026-12-05T10:00:00Z");
  #serial = 0;

  constructor() {
    const server = this;
    const owned = (threadId, auth) => {
      server.storageReads += 1;
      const thread = server.threads.get(threadId);
      if (!thread || thread.owner !== (auth?.user?.identity ?? null)) throw new HttpError(404);
      return thread;
    };
    this.ops = {
      threads: {
        get: async (threadId, auth) => owned(threadId, auth).record,
        state: {
          get: async ({ configurable }, _options, auth) => snapshot(owned(configurable.thread_id, auth).state),
          list: async ({ configurable }, { metadata }, auth) =>
            owned(configurable.thread_id, auth)
              .history.filter((state) => state.metadata.run_id === metadata.run_id)
              .slice(-1)
              .map(snapshot),
        },
      },
      runs: {
        search: async (threadId, { offset, limit }, auth) =>
          [...owned(threadId, auth).runs.values()].slice(offset, limit),
      },
    };
    this.app = new Hono();
    this.app.use(async (c, next) => {
      c.set("LANGGRAPH_OPS", this.ops);
      const user = userOf(c.req.header("authorization"));
      c.set("auth", user ? { user: { identity: user } } : undefined);
      await next();
    });
    this.app.route("/", finalAnswerApp());
    current = this;
  }

  #now() {
    this.#clock += 1000;
    return new Date(this.#clock);
  }

  #id(prefix) {
    this.#serial += 1;
    return `${prefix}-${this.#serial}`;
  }

  /** A request to the route, as `user` (null: no credentials). */
  get(threadId, { user = "alice", query = "", headers = {} } = {}) {
    const auth = user ? { Authorization: `Bearer ${user}` } : {};
    return this.app.request(`http://langgraph.test/api/threads/${threadId}/final-answer${query}`, {
      headers: { ...auth, ...headers },
    });
  }

  /** A thread of `owner`'s with one finished turn answering `content`. */
  thread(owner, content) {
    const threadId = this.#id("thread");
    const now = this.#now();
    this.threads.set(threadId, {
      owner,
      record: { thread_id: threadId, status: "idle", created_at: now, updated_at: now, values: undefined },
      state: null,
      runs: new Map(),
    });
    this.run(threadId, content);
    return threadId;
  }

  /** A run on the thread that ends answering `content`, as the server runs one: the
   * thread busy, the run's checkpoint, then the run and the thread's status at its end. */
  run(threadId, content) {
    const thread = this.threads.get(threadId);
    const runId = this.#id("run");
    thread.record.status = "busy";
    thread.record.updated_at = this.#now();
    const created = this.#now();
    thread.runs.set(runId, { run_id: runId, thread_id: threadId, status: "running", created_at: created, updated_at: created });
    this.#checkpoint(thread, [...(thread.state?.values.messages ?? []), ...this.#turn(content)], runId);
    Object.assign(thread.runs.get(runId), { status: "success", updated_at: this.#now() });
    Object.assign(thread.record, { status: "idle", updated_at: this.#now(), values: structuredClone(thread.state.values) });
    return runId;
  }

  /** A state update as the server makes one: a new checkpoint, the thread's values
   * replaced by an equal copy, its `updated_at` and status untouched. */
  updateState(threadId) {
    const thread = this.threads.get(threadId);
    this.#checkpoint(thread, thread.state.values.messages, null);
    thread.record.values = structuredClone(thread.state.values);
  }

  /** A run deleted with the checkpoints it wrote; the thread's record untouched. */
  deleteRun(threadId, runId) {
    const thread = this.threads.get(threadId);
    thread.runs.delete(runId);
    thread.state = thread.history.filter((state) => state.metadata.run_id !== runId).at(-1) ?? null;
    thread.history = thread.history.filter((state) => state.metadata.run_id !== runId);
  }

  #turn(content) {
    return [
      { type: "human", content: "q", id: this.#id("human") },
      { type: "ai", content, id: this.#id("ai") },
    ];
  }

  #checkpoint(thread, messages, runId) {
    thread.state = {
      values: { messages },
      next: [],
      tasks: [],
      metadata: runId ? { run_id: runId } : {},
      created_at: this.#now().toISOString(),
      checkpoint: { checkpoint_id: this.#id("checkpoint") },
    };
    thread.history = [...(thread.history ?? []), thread.state];
  }

  /** The API, as the loopback fetch reaches it. */
  async api(request) {
    const { pathname, searchParams } = new URL(request.url);
    this.calls.push(`${request.method} ${pathname}`);
    const user = userOf(request.headers.get("authorization"));
    const mine = (threadId) => {
      const thread = this.threads.get(threadId);
      return thread && thread.owner === user ? thread : null;
    };
    if (pathname === "/threads/search") {
      const { ids } = await request.json();
      return json(ids.map(mine).filter(Boolean).map((thread) => ({ thread_id: thread.record.thread_id, status: thread.record.status })));
    }
    const [, , threadId, what] = pathname.split("/");
    const thread = mine(threadId);
    if (!thread) return json({ detail: "not found" }, 404);
    if (what === "state") return json(thread.state);
    if (what === "history") {
      const { metadata } = await request.json();
      return json(thread.history.filter((state) => state.metadata.run_id === metadata.run_id).slice(-1));
    }
    if (what === "runs") {
      const status = searchParams.get("status");
      return json([...thread.runs.values()].filter((run) => !status || run.status === status));
    }
    return json({ detail: "no such route" }, 404);
  }
}
