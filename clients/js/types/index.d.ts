// Declarations for "@evoscientist/final-answer" (hand-written; src/ is plain ESM).

/** `GET /api/threads/{id}/final-answer`'s body (docs/final-answer.md). */
export interface FinalAnswer {
  content: string;
  completed_at: string | null;
  complete: boolean;
  status: "pending" | "running" | "success" | "error" | "interrupted";
  thread_id: string;
  run_id: string | null;
  checkpoint_id: string | null;
  message_id: string | null;
  updated_at: string | null;
  source: "checkpointer" | "api";
  error: { code: string; message: string; retryable: boolean } | null;
  interrupts: Array<{ id: string | null; value: unknown }>;
  reasoning?: string;
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
export type SleepLike = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface SettleOptions {
  /** The langgraph server's base URL, e.g. "http://127.0.0.1:2024". */
  apiUrl: string;
  threadId: string;
  /** The run to settle; without it, the thread's latest turn. */
  runId?: string | null;
  /** Extra request headers (auth). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** How long to follow a run that is still executing (default 240 000). */
  maxWaitMs?: number;
  /** Every answer read, until the complete one: show `content` (replace, never append). */
  onUpdate?: ((answer: FinalAnswer) => void) | null;
  fetch?: FetchLike;
  sleep?: SleepLike;
}

/**
 * F2/F3/F2a: the run's final answer once `complete` (or the latest at `maxWaitMs`), through
 * the route with a `wait=` long-poll and backoff (1 s, 2 s, 4 s, then 5 s), retrying
 * network errors and 503; on a server without the route, from `/threads/{id}/state`.
 * Rejects with `ThreadGone` when the server says the thread does not exist.
 */
export function settleFinalAnswer(options: SettleOptions): Promise<FinalAnswer>;

export interface StreamWithRecoveryOptions {
  url: string;
  threadId: string;
  assistantId: string;
  input: Record<string, unknown> | null;
  maxWait?: number;
  stallTimeout?: number;
  onUpdate?: ((text: string) => void) | null;
  onReconcile?: (() => void) | null;
  fetchImpl?: FetchLike;
  headers?: Record<string, string>;
  streamResumable?: boolean;
  resume?: boolean;
  /** Each event of the run's stream (rejoins' replays included), as parsed. */
  onEvent?: ((event: string, data: unknown) => void) | null;
  /** A thread the server does not have: `"create"` makes it with the run (a new chat's). */
  ifNotExists?: "create" | "reject";
  /**
   * Watch the run's end through the route while its stream is read: a stream still open
   * 300 ms after the route said the run is over (stalled, or replaying) ends then, not at
   * `stallTimeout`. One long-poll more per run.
   */
  followRun?: boolean;
  /** Leaves the run (rejects with its reason); the run goes on on the server. */
  signal?: AbortSignal;
  /**
   * The user's Stop: the run is cancelled on the server (found by its request id if no
   * response named it), nothing more is shown, and the result is the text shown at Stop,
   * `status: "stopped"`.
   */
  stopSignal?: AbortSignal;
  sleep?: SleepLike;
}

export interface StreamWithRecoveryResult extends Omit<FinalAnswer, "status" | "source"> {
  /** The route's status; `"stopped"` when the user stopped the run (`stopSignal`). */
  status: FinalAnswer["status"] | "stopped";
  source: FinalAnswer["source"] | null;
  /** The user stopped the run: `content` is what was shown at Stop. */
  stopped?: boolean;
  /** The route's text differs from what the stream showed. */
  recovered: boolean;
  /** The stream did not prove its own end (always, for a successful langgraph run). */
  truncated: boolean;
  streamError: string | null;
  streamTerminalEvent: "end" | "error" | null;
  streamErrorEvent: unknown;
  drops: string[];
  resumes: number;
  /** The submit was cut before its response: `"joined <run id>"` or `"posted again"`; else null. */
  resubmitted: string | null;
}

/** Stream a run with `fetch` (no SDK) and end with its authoritative answer. */
export function streamWithRecovery(options: StreamWithRecoveryOptions): Promise<StreamWithRecoveryResult>;

export interface FindRunOptions {
  url: string;
  threadId: string;
  requestId: string;
  fetchImpl?: FetchLike;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  sleep?: SleepLike;
}

/** The run tagged `metadata.recovery_request_id = requestId`, or null. */
export function findRun(options: FindRunOptions): Promise<string | null>;

export class Reconciler {
  constructor(options: {
    url: string;
    threadId: string;
    runId?: string | null;
    fetchImpl?: FetchLike;
    headers?: Record<string, string>;
    signal?: AbortSignal;
    sleep?: SleepLike;
    clock?: () => number;
  });
  routeAvailable: boolean | null;
  fetch(waitSeconds?: number): Promise<FinalAnswer>;
  settle(maxWaitMs: number, onAnswer?: ((answer: FinalAnswer) => void) | null): Promise<FinalAnswer>;
}

export class ThreadGone extends Error {
  threadId: string;
  constructor(threadId: string);
}
/** 404 `run_not_found`: the run is not one of the thread's (a rolled-back run, a made-up id). */
export class RunGone extends ThreadGone {
  runId: string | null;
  constructor(threadId: string, runId: string | null);
}
export class Unrecoverable extends Error {}
export class HttpStatusError extends Error {
  status: number;
  constructor(status: number, url: string, body?: string);
}
export class StallError extends Error {
  constructor(ms: number);
}
export function isRetryable(error: unknown): boolean;

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}
export interface SseParser {
  readonly lastEventId: string | null;
  readonly pending: boolean;
  push(chunk: Uint8Array | string): SseEvent[];
  end(): SseEvent[];
}
export function createSseParser(): SseParser;
export function parseSse(chunks: Iterable<Uint8Array | string>): {
  events: SseEvent[];
  pending: boolean;
  lastEventId: string | null;
};
export function eventData(raw: string): unknown;

export interface StreamAccumulator {
  runId: string | null;
  terminalEvent: "end" | "error" | null;
  error: unknown;
  events: number;
  /** The events that follow may not follow on from those before (a join mid-run). */
  gap(): void;
  feed(event: string, data: unknown): boolean;
  readonly text: string;
  readonly provedComplete: boolean;
  readonly truncated: boolean;
}
export function createStreamAccumulator(): StreamAccumulator;
export function accumulateEvents(events: Iterable<{ event: string; data: unknown }>): {
  text: string;
  runId: string | null;
  terminalEvent: "end" | "error" | null;
  error: unknown;
  truncated: boolean;
};

export function splitThink(text: string): [string, string];
export function contentText(content: unknown): string;
export function answerText(content: unknown): string;
export function mergeContent(left: unknown, right: unknown): unknown;
/** A message's reasoning, every kind joined by blank lines (the route's `reasoning`). */
export function reasoningText(message: unknown): string;

export function finalAnswer(messages: unknown): {
  content: string;
  reasoning: string;
  messageId: string | null;
};
/** `[type name, "Type: text"]` of a task's error, as either server reports it. */
export function describeException(value: unknown): [string | null, string];
/** The `error` of a run whose tasks failed with `errors`. */
export function errorFromTasks(errors: unknown[]): NonNullable<FinalAnswer["error"]>;
export function statusFromState(
  state: unknown,
  threadStatus?: string | null,
): { status: FinalAnswer["status"]; error: FinalAnswer["error"]; interrupts: FinalAnswer["interrupts"] };
export function answerFromState(
  threadId: string,
  state: unknown,
  options?: { threadStatus?: string | null; source?: FinalAnswer["source"]; includeReasoning?: boolean },
): FinalAnswer;
export function pendingAnswer(threadId: string, runId?: string | null, source?: FinalAnswer["source"]): FinalAnswer;

/** A message as useStream renders it (plain dict form). */
export interface MessageLike {
  type?: string;
  id?: string;
  content?: unknown;
  [key: string]: unknown;
}
export function replaceText<M extends MessageLike>(message: M, text: string): M;
export function applyAnswers<M extends MessageLike>(
  messages: M[],
  answers: Map<string, string> | Record<string, string>,
): M[];
/**
 * `messages` ending the latest turn with `answer`. `settled`: the answers already shown
 * (message id → text, as `applyAnswers` takes them), so that a message holding one of
 * them, an earlier turn's, never becomes this turn's answer.
 */
export function withFinalAnswer<M extends MessageLike>(
  messages: M[],
  answer: FinalAnswer | null,
  settled?: Map<string, string> | Record<string, string> | null,
): M[];

/** A turn the user stopped: its question and the messages shown after it at Stop. */
export interface StoppedTurn<M = MessageLike> {
  readonly question: {
    readonly id: string | null;
    readonly text: string;
    /** The question as shown at Stop. */
    readonly message: M;
    /** The id of the message it followed (null: none, or one without an id). */
    readonly after: string | null;
    /** It opened the thread. */
    readonly opened: boolean;
  } | null;
  readonly messages: readonly M[];
}
/** The turn `messages` (as shown at Stop) ends with; null for an empty list. */
export function stoppedTurn<M extends MessageLike>(messages: M[]): StoppedTurn<M> | null;
/**
 * `messages` with each stopped turn showing what it showed at Stop: kept messages in
 * place of the list's with their ids, or inserted after their turn's question when the
 * list lacks them (a cancelled node writes no message); a list that lost the question
 * itself gets it back after the message it followed. The same array when nothing changes.
 */
export function withStoppedTurns<M extends MessageLike>(messages: M[], turns: readonly StoppedTurn<M>[]): M[];
/** The turns a page stopped, per thread. */
export class StoppedTurns<M extends MessageLike = MessageLike> {
  stop(threadId: string | null | undefined, shown: M[]): StoppedTurn<M> | null;
  of(threadId: string | null | undefined): readonly StoppedTurn<M>[];
}

/**
 * The turns stopped on pages that read through `client` (a langgraph SDK `Client`): its
 * `threads.getState`, `threads.get` and `threads.getHistory` carry them from then on, so
 * an app that shows the thread's state itself after a run keeps a stopped turn's text.
 * `useStreamWithRecovery` keeps its stopped turns here.
 */
export function stoppedTurnsOf<M extends MessageLike = MessageLike>(client: unknown, messagesKey?: string): StoppedTurns<M>;

export function joinPathFromHeaders(headers: Headers, baseUrl: string): string | null;
export function newRequestId(): string;
export function backoffMs(attempt: number): number;
export function sleep(ms: number, signal?: AbortSignal): Promise<void>;

export const BACKOFF_MS: number[];
export const STEADY_BACKOFF_MS: number;
export const DEFAULT_MAX_WAIT_MS: number;
export const DEFAULT_STALL_TIMEOUT_MS: number;
export const LONG_POLL_SECONDS: number;
export const REQUEST_ID_KEY: "recovery_request_id";

export interface ResubmitInfo {
  requestId: string;
  /** The run joined; null when the submit was posted again. */
  runId: string | null;
  action: "joined" | "posted";
  /** The network error of the first send; null for the SDK's own re-send. */
  cause: unknown;
}

export interface ExactlyOnceOptions {
  /** How long a run whose POST failed may take to be listed (default 2000 ms). */
  lookupWindowMs?: number;
  lookupIntervalMs?: number;
  onResubmit?: (info: ResubmitInfo) => void;
  sleep?: SleepLike;
  clock?: () => number;
}

/**
 * A `fetch` under which a run submit (`POST …/threads/{id}/runs/stream` tagged with
 * `metadata.recovery_request_id`) makes one run, however often the SDK re-sends it:
 * pass it as the langgraph SDK `Client`'s `callerOptions.fetch`.
 */
export function exactlyOnceFetch(fetchImpl?: FetchLike, options?: ExactlyOnceOptions): FetchLike;
/**
 * An app's own langgraph SDK `Client`, its run submits made exactly-once: the fetch of
 * its `runs` client is wrapped in place with `exactlyOnceFetch` (once; other requests pass
 * through). `useStreamWithRecovery` does this to a `client` it is given. A client of
 * another shape is returned untouched.
 */
export function withExactlyOnce<C>(client: C, options?: ExactlyOnceOptions): C;
export function submitOf(
  input: string,
  init?: RequestInit,
): { requestId: string; threadUrl: string; body: Record<string, unknown>; resumable: boolean; strategy: string | null } | null;
export function taggedRun(runs: unknown, requestId: string): string | null;
export const LOOKUP_WINDOW_MS: number;
export const LOOKUP_INTERVAL_MS: number;
export const LOOKUP_LIMIT: number;
