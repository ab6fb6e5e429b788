// The route's reads where the server lends its storage: the thread's change token first,
// and while it is the one a cached answer was read under, that answer, with no read.

import { AnswerCache } from "./answer-cache.js";
import { changeToken } from "./change-token.js";

export class CachedReader {
  /** `reader`: the full read (an `ApiReader`); `storage`: a `ServerStorage`; `cache`:
   * the `AnswerCache` of that storage's server; `caller`: the caller's key
   * (`clients.js`): one caller is never answered from another's reads. */
  constructor(reader, storage, cache, caller) {
    Object.assign(this, { reader, storage, cache, caller });
  }

  /** `ApiReader.read`'s answer, from the cache while the thread has not changed. */
  async read(threadId, runId, signal) {
    const token = await changeToken(this.storage, threadId);
    const key = AnswerCache.key(this.caller, threadId, runId);
    if (token !== null) {
      const cached = this.cache.get(key, token);
      if (cached !== undefined) return cached;
    }
    const answer = await this.reader.read(threadId, runId, signal);
    if (token !== null) this.cache.set(key, token, answer);
    return answer;
  }

  join(threadId, runId, signal) {
    return this.reader.join(threadId, runId, signal);
  }
}
