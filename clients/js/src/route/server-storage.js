// The server's own storage, where the server mounting the route lends it to its routes
// (LangGraph's JS server puts it on each request's Hono context): a thread's record and
// runs read in memory, under the caller's auth, where each API call is a request.

import { StoreUnavailable, ThreadNotFound } from "./reader.js";

// What the server's storage throws for a thread it does not have or the caller may not
// see (its auth: 403, 404), as the API answers them.
const UNKNOWN_THREAD = new Set([400, 403, 404, 422]);

// The API's JSON of a langchain object (a message) in a state: its dict, as the server's
// own responses write it.
function asApiJson(key, value) {
  const raw = this[key];
  if (raw !== null && typeof raw === "object" && typeof raw.toDict === "function") {
    const { type, data } = raw.toDict();
    return { ...data, type };
  }
  return value;
}

/** A state snapshot of the server's storage as its API answers it (`GET
 * /threads/{id}/state`): the fields an answer is read from. */
export function apiState(snapshot) {
  const tasks = (snapshot.tasks ?? []).map((task) => ({
    id: task.id,
    name: task.name,
    error: task.error == null ? null : task.error instanceof Error ? task.error.message : JSON.stringify(task.error),
    interrupts: task.interrupts,
  }));
  const checkpointId = snapshot.config?.configurable?.checkpoint_id;
  const state = {
    values: snapshot.values,
    next: snapshot.next,
    tasks,
    metadata: snapshot.metadata,
    created_at: snapshot.createdAt ? new Date(snapshot.createdAt) : null,
    checkpoint: checkpointId ? { checkpoint_id: checkpointId } : null,
  };
  return JSON.parse(JSON.stringify(state, asApiJson));
}

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
    const reads = typeof ops?.threads?.state?.get === "function" && typeof ops?.threads?.state?.list === "function";
    return lent && reads ? new ServerStorage(lent, c.var.auth) : null;
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

  /** The thread's latest state (`runId`: that run's newest; null: none), in the API's
   * shape, read as the API reads it but without a request through the server's stack. */
  async state(threadId, runId) {
    const thread = { configurable: { thread_id: threadId } };
    const states = this.ops.threads.state;
    const snapshot =
      runId == null
        ? await this.#call(() => states.get(thread, { subgraphs: false }, this.auth), threadId)
        : (
            await this.#call(
              () =>
                states.list(
                  { configurable: { thread_id: threadId, checkpoint_ns: "" } },
                  { limit: 1, metadata: { run_id: runId } },
                  this.auth,
                ),
              threadId,
            )
          )?.[0];
    return snapshot ? apiState(snapshot) : null;
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

/** A thread's state and the facts a verdict weighs, from the server's storage: what
 * `ApiFacts` asks the API for, without a request. */
export class StorageFacts {
  constructor(storage) {
    this.storage = storage;
  }

  state(threadId, runId) {
    return this.storage.state(threadId, runId);
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
