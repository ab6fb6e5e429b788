// Is the run behind an answer still executing? A pure decision, the Python route's
// `answer.run_liveness.verdict` for a route inside the server that runs the thread's
// runs (LangGraph's JS server keeps no store another server writes): the answer read
// from the thread's state in, and what the server knows of the thread's runs.
//
// A state with work left says only that its run has not finished; the server's runs
// say whether something still executes it: a run it holds as `pending`/`running` is
// alive, one it holds as `interrupted` was cancelled, one it does not know died with a
// previous process.

import { pendingAnswer } from "../core/state.js";

export const ACTIVE_RUN_STATUSES = new Set(["pending", "running"]);
export const RUN_LOST_MESSAGE =
  "the run stopped without finishing: nothing is executing it any more " +
  "(its server or process was killed or restarted)";
export const RUN_CANCELLED_MESSAGE =
  "the run was cancelled (POST /threads/{thread_id}/runs/{run_id}/cancel)";
const RUN_FAILED_MESSAGE = "the run failed; see the server log";
const UNWRITTEN_FAILURE_MESSAGE = "the run failed before it wrote a checkpoint; see the server log";
const RUN_STOPPED_MESSAGE = "the run stopped before finishing (cancelled, or the server restarted)";

/** A `run_id` nothing knows: neither a run of the server nor a checkpoint's. */
export class RunNotFound extends Error {
  name = "RunNotFound";
}

function runError(code, message, retryable) {
  return { code, message, retryable };
}

function state(status, error = null, interrupts = []) {
  return { status, error, interrupts };
}

function complete(status) {
  return status === "success" || status === "error" || status === "interrupted";
}

function unfinished(runState) {
  return runState.status === "running" || runState.status === "pending";
}

/** The server's status of the thread applied where it knows better than the state. */
export function overlayThreadStatus(runState, threadStatus) {
  if (threadStatus === "busy") return complete(runState.status) ? state("running") : runState;
  if (threadStatus === "error" && runState.status !== "error") {
    return state("error", runError("run_failed", RUN_FAILED_MESSAGE, false));
  }
  if (threadStatus === "interrupted" && runState.status === "running") {
    return state("interrupted", null, runState.interrupts);
  }
  if (threadStatus === "idle" && runState.status === "running") {
    return state("error", runError("run_stopped", RUN_STOPPED_MESSAGE, true));
  }
  return runState;
}

/** What the server knows of a thread: its status and its runs' statuses. */
export class ServerRuns {
  constructor(threadStatus, runs) {
    this.threadStatus = threadStatus ?? null;
    this.runs = runs; // Map run id → status
  }

  get active() {
    for (const status of this.runs.values()) if (ACTIVE_RUN_STATUSES.has(status)) return true;
    return false;
  }

  /** The run that has taken the thread over from the state's writer before writing
   * anything: the executing one first, else the oldest queued. */
  successor(writerRunId) {
    if (writerRunId != null && ACTIVE_RUN_STATUSES.has(this.runs.get(writerRunId))) return null;
    for (const wanted of ["running", "pending"]) {
      for (const [runId, status] of this.runs) {
        if (status === wanted && runId !== writerRunId) return runId;
      }
    }
    return null;
  }

  /** The thread's newest run (`runs` are oldest first). */
  get latest() {
    let latest = null;
    for (const runId of this.runs.keys()) latest = runId;
    return latest;
  }

  /** One run that has ended here, alone: another run's `busy` says nothing about it. */
  about(runId) {
    const status = this.runs.get(runId);
    if (status == null || ACTIVE_RUN_STATUSES.has(status)) return this;
    return new ServerRuns(this.threadStatus === "busy" ? null : this.threadStatus, new Map([[runId, status]]));
  }
}

/** The end of a run the server holds as `status` that wrote no checkpoint (null: it
 * has not ended): the server's word is all there is of it. */
export function endedUnwritten(status) {
  if (status === "interrupted") return state("error", runError("run_cancelled", RUN_CANCELLED_MESSAGE, false));
  if (status === "error" || status === "timeout") {
    return state("error", runError("run_failed", UNWRITTEN_FAILURE_MESSAGE, false));
  }
  if (status === "success") return state("success");
  return null;
}

/** `runState` (from the thread's state alone) as the server's runs have it. */
export function judge(runState, writer, server) {
  if (server.active) return complete(runState.status) ? state("running") : runState;
  if (!unfinished(runState)) {
    return overlayThreadStatus(runState, server.threadStatus === "busy" ? null : server.threadStatus);
  }
  const runStatus = writer.runId != null ? server.runs.get(writer.runId) : undefined;
  if (runStatus === "interrupted") return state("error", runError("run_cancelled", RUN_CANCELLED_MESSAGE, false));
  if (runStatus === "error" || runStatus === "timeout") return overlayThreadStatus(runState, "error");
  if (runStatus != null) {
    // Ended here with work left: a static breakpoint leaves the thread `interrupted`;
    // anything else stopped the run early.
    return overlayThreadStatus(runState, server.threadStatus === "interrupted" ? "interrupted" : "idle");
  }
  if (server.threadStatus === "interrupted") return overlayThreadStatus(runState, "interrupted");
  if (writer.runId != null) return state("error", runError("run_lost", RUN_LOST_MESSAGE, false));
  return runState;
}

/**
 * The route's answer: `answer` (from the thread's state, or its run's newest state) as
 * the server's `runs` (Map run id → status) and `threadStatus` have it. `askedRunId`:
 * the `run_id` asked for (null: the thread's latest turn). Throws `RunNotFound`.
 */
export function verdict(answer, askedRunId, { threadStatus, runs }) {
  let server = new ServerRuns(threadStatus, runs);
  if (askedRunId == null) {
    const successor = server.successor(answer.run_id);
    if (successor != null) return pendingAnswer(answer.thread_id, successor, answer.source);
  }
  if (askedRunId != null && askedRunId === answer.run_id) server = server.about(askedRunId);
  if (answer.status === "pending" && askedRunId != null && !server.runs.has(askedRunId)) {
    throw new RunNotFound(askedRunId);
  }
  if (answer.status === "pending" && !server.active && (askedRunId != null || answer.checkpoint_id == null)) {
    // Nothing written of the run asked for, or of any run of the thread: a run that
    // ended before its first checkpoint (cancelled before it began) ends so here.
    const endedRun = askedRunId ?? server.latest;
    const ended = endedRun == null ? null : endedUnwritten(server.runs.get(endedRun));
    if (ended) {
      return { ...answer, run_id: endedRun, ...ended, complete: true, completed_at: null };
    }
  }
  const judged = judge(
    { status: answer.status, error: answer.error, interrupts: answer.interrupts },
    { runId: answer.run_id },
    server,
  );
  if (judged.status === answer.status && judged.error === answer.error && judged.interrupts === answer.interrupts) {
    return answer;
  }
  const ended = complete(judged.status);
  return {
    ...answer,
    status: judged.status,
    complete: ended,
    completed_at: ended ? answer.updated_at : null,
    error: judged.error,
    interrupts: judged.interrupts,
  };
}
