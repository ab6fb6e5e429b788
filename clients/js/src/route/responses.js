// The route's responses, as the Python route writes them: the documented error shape,
// strong ETags per representation, and the plain-text form with its `X-Answer-*` headers.

export const NO_STORE = { "Cache-Control": "no-store" };
const JSON_TYPE = "application/json";
const TEXT_TYPE = "text/plain; charset=utf-8";

/** `{"detail": msg, "error": {code, message, retryable}}`, never a stack trace. */
export function errorResponse(status, code, message, retryable, headers = {}) {
  const body = { detail: message, error: { code, message, retryable } };
  const extra = retryable ? { "Retry-After": "1" } : {};
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": JSON_TYPE, ...NO_STORE, ...extra, ...headers },
  });
}

/** The body the route shows: the answer without `reasoning` unless it was asked for. */
export function answerBody(answer, includeReasoning) {
  if (includeReasoning) return { ...answer, reasoning: answer.reasoning ?? "" };
  const { reasoning: _reasoning, ...body } = answer;
  return body;
}

function sortedJson(value) {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

// The validators of answers that never change (frozen: the route's cached answers), so
// an unchanged poll hashes nothing.
const etags = new WeakMap();

/** A strong validator of everything the body can show (reasoning included), per
 * representation (`json`, `text`, `+reasoning`). */
export async function answerEtag(answer, representation) {
  if (!Object.isFrozen(answer)) return digestEtag(answer, representation);
  let known = etags.get(answer);
  if (known === undefined) etags.set(answer, (known = new Map()));
  if (!known.has(representation)) known.set(representation, digestEtag(answer, representation));
  return known.get(representation);
}

async function digestEtag(answer, representation) {
  const bytes = new TextEncoder().encode(sortedJson(answerBody(answer, true)));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest.slice(0, 12)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `"${hex}-${representation}"`;
}

export function etagMatches(ifNoneMatch, etag) {
  if (!ifNoneMatch) return false;
  const candidates = new Set(ifNoneMatch.split(",").map((tag) => tag.trim().replace(/^W\//, "")));
  return candidates.has("*") || candidates.has(etag);
}

/** `value` as a header value: its UTF-8 percent-encoded outside visible ASCII, and `%`. */
export function headerSafe(value) {
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    out +=
      byte >= 0x21 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function textHeaders(answer) {
  const headers = {
    "X-Answer-Status": answer.status,
    "X-Answer-Complete": answer.complete ? "true" : "false",
    "X-Answer-Source": answer.source,
  };
  for (const [name, value] of [
    ["X-Answer-Run-Id", answer.run_id],
    ["X-Answer-Checkpoint-Id", answer.checkpoint_id],
    ["X-Answer-Completed-At", answer.completed_at],
    ["X-Answer-Error", answer.error && answer.error.code],
  ]) {
    if (value) headers[name] = headerSafe(String(value));
  }
  return headers;
}

/** The answer as the query asked for it: JSON or text, or 304 while `If-None-Match`
 * still matches. A `HEAD` gets the headers alone. */
export async function answerResponse(answer, query, ifNoneMatch, method = "GET") {
  const representation = representationOf(query);
  const etag = await answerEtag(answer, representation);
  if (etagMatches(ifNoneMatch, etag)) {
    return new Response(null, { status: 304, headers: { ...NO_STORE, ETag: etag } });
  }
  const text = query.format === "text";
  const body = text ? answer.content : JSON.stringify(answerBody(answer, query.includeReasoning));
  const headers = {
    "Content-Type": text ? TEXT_TYPE : JSON_TYPE,
    ...NO_STORE,
    ETag: etag,
    ...(text ? textHeaders(answer) : {}),
  };
  return new Response(method === "HEAD" ? null : body, { status: 200, headers });
}

export function representationOf(query) {
  return `${query.format}${query.includeReasoning ? "+reasoning" : ""}`;
}
