// Is the run behind an answer still executing? The route's verdict, inside the server
// that runs the thread's runs, from what it knows of them.
// Mirrors evoscientist_final_answer/answer/run_liveness.py.

import { pendingAnswer, runStateOf, withRunState } from "./result.js";
import { isComplete, overlayThreadStatus, runError, runState } from "./status.js";

export const ACTIVE_RUN_STATUSES = new Set(["pending", "running"]);
export const RUN_LOST_MESSAGE =
  "the run stopped without finishing: nothing is executing it any more " +
  "(its server or process was killed or restarted)";
export const RUN_CANCELLED_MESSAGE =
  "the run was cancelled (POST /threads/{thread_id}/runs/{run_id}/cancel)";
export const UNWRITTEN_FAILURE_MESSAGE = "the run failed before it wrote a checkpoint; see the server log";

/** A `run_id` nothing knows: neither a run of the server nor a checkpoint's. */
export class RunNotFound extends Error {
  name = "RunNotFound";
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

export function runLost() {
  return runState("error", runError("run_lost", RUN_LOST_MESSAGE, false));
}

export function runCancelled() {
  return runState("error", runError("run_cancelled", RUN_CANCELLED_MESSAGE, false));
}

/** The end of a run the server holds as `status` that wrote no checkpoint (null: it
 * has not ended): the server's word is all there is of it. */
export function endedUnwritten(status) {
  if (status === "interrupted") return runCancelled();
  if (status === "error" || status === "timeout") {
    return runState("error", runError("run_failed", UNWRITTEN_FAILURE_MESSAGE, false));
  }
  if (status === "success") return runState("success");
  return null;
}

/**
 * `state` (from the thread's state alone) as the server's runs have it; `writer`:
 * `{runId}` of the run that wrote the state. Work left says only that the run has not
 * finished: a run the server holds as `pending`/`running` is alive, one it holds as
 * `interrupted` was cancelled, one it does not know died with a previous process
 * (LangGraph's JS server keeps no store another server writes).
 */
export function judge(state, writer, server) {
  if (server.active) return isComplete(state.status) ? runState("running") : state;
  if (isComplete(state.status)) {
    // Finished by the state; a stale `busy` (a crash mid-run) must not hold it.
    return overlayThreadStatus(state, server.threadStatus === "busy" ? null : server.threadStatus);
  }
  const runStatus = writer.runId != null ? server.runs.get(writer.runId) : undefined;
  if (runStatus === "interrupted") return runCancelled();
  if (runStatus === "error" || runStatus === "timeout") return overlayThreadStatus(state, "error");
  if (runStatus != null) {
    // Ended here with work left: a static breakpoint leaves the thread `interrupted`;
    // anything else stopped the run early.
    return overlayThreadStatus(state, server.threadStatus === "interrupted" ? "interrupted" : "idle");
  }
  if (server.threadStatus === "interrupted") return overlayThreadStatus(state, "interrupted");
  if (writer.runId != null) return runLost();
  return state;
}

/**
 * The route's answer: `answer` (from the thread's state, or its run's newest state) as
 * the server's `runs` (Map run id → status, oldest first) and `threadStatus` have it.
 * `askedRunId`: the `run_id` asked for (null: the thread's latest turn). Throws
 * `RunNotFound`.
 */
export function verdict(answer, askedRunId, { threadStatus, runs }) {
  let server = new ServerRuns(threadStatus, runs);
  if (askedRunId == null) {
    // The thread's latest turn is a run that has written nothing yet: its answer is
    // empty, never the previous turn's.
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
    if (ended) return withRunState({ ...answer, run_id: endedRun }, ended);
  }
  return withRunState(answer, judge(runStateOf(answer), { runId: answer.run_id }, server));
}
