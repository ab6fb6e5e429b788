// @evoscientist/final-answer: the client half of final-answer recovery, no framework.
// `settleFinalAnswer` for any app (the WebUI's useStream included, via ./react);
// `streamWithRecovery` for apps that stream without the langgraph SDK.

export { accumulateEvents, createStreamAccumulator } from "./accumulate.js";
export {
  HttpStatusError,
  RunGone,
  StallError,
  ThreadGone,
  Unrecoverable,
  isRetryable,
} from "./errors.js";
export { BACKOFF_MS, STEADY_BACKOFF_MS, backoffMs, sleep } from "./http.js";
export {
  DEFAULT_MAX_WAIT_MS,
  LONG_POLL_SECONDS,
  REQUEST_ID_KEY,
  Reconciler,
  findRun,
  settleFinalAnswer,
} from "./settle.js";
export { createSseParser, eventData, parseSse } from "./sse.js";
export {
  LOOKUP_INTERVAL_MS,
  LOOKUP_LIMIT,
  LOOKUP_WINDOW_MS,
  exactlyOnceFetch,
  submitOf,
  taggedRun,
  withExactlyOnce,
} from "./once.js";
export { finalAnswer } from "../answer/extract.js";
export { pendingAnswer } from "../answer/result.js";
export { answerFromState, statusFromState } from "../answer/state.js";
export { describeException, errorFromTasks } from "../answer/status.js";
export {
  DEFAULT_STALL_TIMEOUT_MS,
  joinPathFromHeaders,
  newRequestId,
  streamWithRecovery,
} from "./stream.js";
export { StoppedTurns, stoppedTurn, withStoppedTurns } from "./stopped.js";
export { stoppedTurnsOf } from "./stopped-reads.js";
export { answerText, contentText, mergeContent, reasoningText, splitThink } from "./text.js";
export { applyAnswers, replaceText, withFinalAnswer } from "./messages.js";
