// A thread's change token, from the server's own storage: it moves whenever the thread's
// answer can, so an unchanged token lets the route answer from its cache without a read.

import { ACTIVE_RUN_STATUSES } from "../answer/run-liveness.js";

// A number per object seen: the server replaces, never edits, the objects the token
// names, so the same object is the same content.
const serials = new WeakMap();
let nextSerial = 1;

function identity(value) {
  if (value === null || typeof value !== "object") return String(value);
  let serial = serials.get(value);
  if (serial === undefined) {
    serial = nextSerial++;
    serials.set(value, serial);
  }
  return `#${serial}`;
}

function stamp(value) {
  return value instanceof Date ? String(value.getTime()) : String(value);
}

/**
 * The token of the thread's answer now (`storage`: a `ServerStorage`), or null while it
 * can move without the token moving: a run is queued or executing (its checkpoints touch
 * no record). Throws `ThreadNotFound` as the caller may not see the thread.
 *
 * What else writes a thread's checkpoints moves a part of it: a run's start or end (the
 * thread's status and `updated_at`), a state update (the thread's `values`, replaced even
 * when equal: the server does not bump `updated_at` for it), a run's cancel or deletion
 * (its record, and the checkpoints it wrote), a thread deleted and made again (its record).
 */
export async function changeToken(storage, threadId) {
  const thread = await storage.record(threadId);
  if (thread.status === "busy") return null;
  const runs = await storage.runRecords(threadId);
  if (runs.some((run) => ACTIVE_RUN_STATUSES.has(run.status))) return null;
  return [
    identity(thread),
    thread.status,
    stamp(thread.updated_at),
    identity(thread.values),
    identity(thread.interrupts),
    ...runs.map((run) => `${run.run_id}:${run.status}:${stamp(run.updated_at)}`),
  ].join(" ");
}
