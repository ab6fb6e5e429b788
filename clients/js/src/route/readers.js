// Which reader answers a request: where the server mounting the route lends its storage,
// its facts come from there and its answers from a cache checked by a change token;
// elsewhere (another server's API, a client given) every read goes through the API.

import { AnswerCache } from "./answer-cache.js";
import { CachedReader } from "./cached-reader.js";
import { callerKey, clientFor } from "./clients.js";
import { ApiReader } from "./reader.js";
import { StorageFacts } from "./server-storage.js";

// One cache per server's storage (a process may hold more than one server).
const caches = new WeakMap();

function cacheOf(ops) {
  let cache = caches.get(ops);
  if (cache === undefined) {
    cache = new AnswerCache();
    caches.set(ops, cache);
  }
  return cache;
}

/** The reader of `request` (`options`: the route's; `options.storage`: the
 * `ServerStorage` the mounting server lends, if any). */
export function readerFor(request, options = {}) {
  const client = clientFor(request, options);
  const storage = options.apiUrl || options.client ? null : options.storage;
  if (!storage) return new ApiReader(client);
  const reader = new ApiReader(client, new StorageFacts(storage));
  return new CachedReader(reader, storage, cacheOf(storage.ops), callerKey(request));
}
