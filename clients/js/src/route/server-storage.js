// The server's own storage, where the server mounting the route lends it to its routes
// (LangGraph's JS server puts it on each request's Hono context): a thread's record and
// runs read in memory, under the caller's auth, where each API call is a request.

import { StoreUnavailable, ThreadNotFound } from "./reader.js";

// What the server's storage throws for a thread it does not have or the caller may not
// see (its auth: 403, 404), as the API answers them.
const UNKNOWN_THREAD = new Set([400, 403, 404, 422]);

function time(value) {
  return value instanceof Date ? value.getTime() : Date.parse(String(value ?? "")) || 0;
}

export class ServerStorage {
  /** `ops`: the server's storage (`threads`, `runs`); `auth`: the caller's auth context
   * as the server's auth middleware left it. */
  constructor(ops, auth) {
    this.ops = ops;
    this.auth = auth;
  }

  /** The storage a Hono context `c` lends, or null where the server lends none. */
  static of(c) {
    const ops = c?.var?.LANGGRAPH_OPS;
    const lent =
      typeof ops?.threads?.get === "function" && typeof ops?.runs?.search === "function" ? ops : null;
    return lent && new ServerStorage(lent, c.var.auth);
  }

  async #call(read, threadId) {
    try {
      return await read();
    } catch (error) {
      if (UNKNOWN_THREAD.has(error?.status)) throw new ThreadNotFound(threadId);
      if (typeof error?.status === "number") throw error;
      throw new StoreUnavailable(`the server's storage: ${error?.message ?? error}`, { cause: error });
    }
  }

  /** The thread's own record, live (never a copy), or `ThreadNotFound`. */
  async record(threadId) {
    const thread = await this.#call(() => this.ops.threads.get(threadId, this.auth), threadId);
    if (!thread || typeof thread !== "object") throw new ThreadNotFound(threadId);
    return thread;
  }

  /** The thread's runs' records, oldest first. */
  async runRecords(threadId) {
    const runs = await this.#call(
      () => this.ops.runs.search(threadId, { offset: 0, limit: Infinity }, this.auth),
      threadId,
    );
    return (Array.isArray(runs) ? runs : [])
      .filter((run) => run && typeof run.run_id === "string")
      .sort((a, b) => time(a.created_at) - time(b.created_at));
  }
}

/** The facts of a thread a verdict weighs, from the server's storage: what `ApiFacts`
 * asks the API for, without a request. */
export class StorageFacts {
  constructor(storage) {
    this.storage = storage;
  }

  async thread(threadId) {
    const record = await this.storage.record(threadId);
    return { thread_id: threadId, status: record.status };
  }

  async queued(threadId) {
    return (await this.storage.runRecords(threadId)).some((run) => run.status === "pending");
  }

  /** Every run of the thread (a superset of what the verdict asks for: it weighs the
   * same). */
  async runs(threadId) {
    return new Map((await this.storage.runRecords(threadId)).map((run) => [run.run_id, run.status]));
  }
}
