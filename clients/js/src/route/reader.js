// The route's reads, through the langgraph API of the server it is mounted in (the SDK's
// `Client` with no `apiUrl` reaches it by the server's loopback fetch), as the caller:
// the caller's credentials go with every call (`clients.js`), so the server's auth rules apply.

import { pendingAnswer } from "../answer/result.js";
import { verdict } from "../answer/run-liveness.js";
import { answerFromState } from "../answer/state.js";

export class ThreadNotFound extends Error {
  name = "ThreadNotFound";
}

/** The server could not answer (down, restarting, or answering junk): a 503. */
export class StoreUnavailable extends Error {
  name = "StoreUnavailable";
}

// What the JS server answers for a thread it cannot hold (not a UUID: 400 or 422) or
// does not have, or one the caller may not see (its auth: 403, 404).
const UNKNOWN_THREAD = new Set([400, 403, 404, 422]);

function statusOf(error) {
  return typeof error?.status === "number" ? error.status : null;
}

async function call(request) {
  try {
    return await request;
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    if (statusOf(error) === null || statusOf(error) >= 500) {
      throw new StoreUnavailable(`langgraph API: ${error?.message ?? error}`, { cause: error });
    }
    throw error;
  }
}

async function orNull(request) {
  try {
    return await call(request);
  } catch (error) {
    if (statusOf(error) === 404 || statusOf(error) === 422 || statusOf(error) === 400) return null;
    throw error;
  }
}

/** A thread's state and the facts a verdict weighs, asked of the server's API. */
export class ApiFacts {
  constructor(client) {
    this.client = client;
  }

  /** The thread's id and status, or `ThreadNotFound`. A search that selects them alone:
   * `threads.get` would also serialise the thread's values (its whole message list). */
  async thread(threadId, signal) {
    let found;
    try {
      found = await call(
        this.client.threads.search({ ids: [threadId], select: ["thread_id", "status"], limit: 1, signal }),
      );
    } catch (error) {
      if (UNKNOWN_THREAD.has(statusOf(error))) throw new ThreadNotFound(threadId);
      throw error;
    }
    const thread = Array.isArray(found) ? found.find((row) => row && row.thread_id === threadId) : null;
    if (!thread) throw new ThreadNotFound(threadId);
    return thread;
  }

  /** Run id → status, oldest first, of the runs that matter to a verdict: those queued
   * or executing, the state's writer and the asked run, each looked up alone, and
   * (`every`: the thread has no checkpoint) all of them, for its newest. */
  async runs(threadId, runIds, signal, every = false) {
    const [pending, running, all, ...alone] = await Promise.all([
      orNull(this.client.runs.list(threadId, { status: "pending", limit: 100, signal })),
      orNull(this.client.runs.list(threadId, { status: "running", limit: 100, signal })),
      every ? orNull(this.client.runs.list(threadId, { limit: 100, signal })) : null,
      ...runIds.map((runId) => orNull(this.client.runs.get(threadId, runId, { signal }))),
    ]);
    const runs = [...(pending ?? []), ...(running ?? []), ...(all ?? []), ...alone].filter(
      (run) => run && typeof run.run_id === "string",
    );
    runs.sort((a, b) => String(a.created_at ?? "").localeCompare(String(b.created_at ?? "")));
    return new Map(runs.map((run) => [run.run_id, run.status]));
  }

  /** The thread's latest state, or that of the run's newest checkpoint (null: none). */
  async state(threadId, runId, signal) {
    try {
      if (runId == null) return await call(this.client.threads.getState(threadId, undefined, { signal }));
      const history = await call(
        this.client.threads.getHistory(threadId, { limit: 1, metadata: { run_id: runId }, signal }),
      );
      return Array.isArray(history) && history.length ? history[0] : null;
    } catch (error) {
      if (UNKNOWN_THREAD.has(statusOf(error))) throw new ThreadNotFound(threadId);
      throw error;
    }
  }

  /** Whether a run of the thread is queued (created, not yet started). */
  async queued(threadId, signal) {
    const pending = await orNull(this.client.runs.list(threadId, { status: "pending", limit: 1, signal }));
    return Array.isArray(pending) && pending.length > 0;
  }
}

export class ApiReader {
  /** `facts`: where the thread's state, status and runs come from (default: the API). */
  constructor(client, facts = new ApiFacts(client)) {
    this.client = client;
    this.facts = facts;
  }

  /**
   * The route's answer now: the thread's (or the run's) state as an answer, judged by
   * what the server knows of its runs. Throws `ThreadNotFound`, `RunNotFound`,
   * `StoreUnavailable`.
   */
  async read(threadId, runId, signal) {
    // The three reads at once: through the API each is a request through the server's
    // stack, and in turn they cost three times one. Their order does not matter: a run that ends
    // between them leaves a state older than the runs say (read again below), one
    // that starts leaves a thread busy or a run queued (its answer is pending).
    const [thread, first, queued] = await Promise.all([
      this.facts.thread(threadId, signal),
      this.stateAnswer(threadId, runId, signal),
      runId == null ? this.facts.queued(threadId, signal) : false,
    ]);
    const threadStatus = typeof thread?.status === "string" ? thread.status : null;
    let answer = first;
    const settled = answer.complete && (runId != null || (threadStatus !== "busy" && !queued));
    // Settled: nothing executes it and no later run has taken the thread over, so no
    // run of the server can change the verdict.
    const asked = [runId, answer.run_id].filter((id, at, ids) => id != null && ids.indexOf(id) === at);
    const unwritten = answer.checkpoint_id == null && runId == null;
    const runs = settled ? new Map() : await this.facts.runs(threadId, asked, signal, unwritten);
    let judged = verdict(answer, runId, { threadStatus, runs });
    if (!answer.complete && judged.complete) {
      // The runs were read after the state: a run that ended in between left a state
      // older than its end. Read as new as the runs before calling it stopped.
      answer = await this.stateAnswer(threadId, runId, signal);
      judged = verdict(answer, runId, { threadStatus: answer.complete ? null : threadStatus, runs });
    }
    return judged;
  }

  /** The answer the thread's (or the run's) state alone gives. */
  async stateAnswer(threadId, runId, signal) {
    const state = await this.facts.state(threadId, runId, signal);
    if (!state?.checkpoint?.checkpoint_id) return { ...pendingAnswer(threadId, runId), reasoning: "" };
    return answerFromState(threadId, state, { includeReasoning: true });
  }

  /** Resolves when the run has ended (the server's own join), or on `signal`. */
  async join(threadId, runId, signal) {
    await orNull(this.client.runs.join(threadId, runId, { signal }));
  }
}
