// The answers the route has read, one per caller, thread and run asked, each kept with
// the change token it was read under: served again only while the token is the same.

export const MAX_ANSWERS = 1024;

export class AnswerCache {
  #entries = new Map();

  constructor(limit = MAX_ANSWERS) {
    this.limit = limit;
  }

  static key(caller, threadId, runId) {
    return JSON.stringify([caller, threadId, runId ?? null]);
  }

  /** The answer kept under `key` if it was read under `token`, else undefined. */
  get(key, token) {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.token !== token) return undefined;
    this.#entries.delete(key); // re-inserted: the most recently used last
    this.#entries.set(key, entry);
    return entry.answer;
  }

  /** Keep `answer`, read after `token` was taken (a change in between moves the next
   * token, and so is read then). */
  set(key, token, answer) {
    this.#entries.delete(key);
    if (this.#entries.size >= this.limit) this.#entries.delete(this.#entries.keys().next().value);
    this.#entries.set(key, { token, answer: Object.freeze(answer) });
  }

  get size() {
    return this.#entries.size;
  }
}
