"""The route's responses: the documented error shape, ETags and the plain-text form."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

from starlette.responses import JSONResponse, PlainTextResponse, Response

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.http.params import FinalAnswerQuery
from evoscientist_final_answer.store.lru import LruCache

NO_STORE = {"Cache-Control": "no-store"}


def render_json(content: Any) -> bytes:
    """JSON that never fails on a value langgraph stored (interrupt payloads may be anything)."""
    return json.dumps(content, ensure_ascii=False, separators=(",", ":"), default=str).encode(
        "utf-8"
    )


class SafeJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return render_json(content)


def error_response(status_code: int, code: str, message: str, *, retryable: bool) -> Response:
    """``{"detail": msg, "error": {code, message, retryable}}`` — never a traceback."""
    body = {"detail": message, "error": {"code": code, "message": message, "retryable": retryable}}
    headers = dict(NO_STORE)
    if retryable:
        headers["Retry-After"] = "1"
    return SafeJSONResponse(body, status_code=status_code, headers=headers)


# Digests of recent answers. A commit wakes every long-poll of the thread with the same
# answer object; each would otherwise serialise and hash it again.
_digests: LruCache[int, tuple[FinalAnswer, str]] = LruCache(256)


def answer_etag(answer: FinalAnswer, representation: str) -> str:
    """A strong validator of everything the body can show, per representation."""
    known = _digests.get(id(answer))
    if known is not None and known[0] is answer:  # the entry holds it: the id is its own
        digest = known[1]
    else:
        payload = json.dumps(
            answer.to_json(include_reasoning=True), sort_keys=True, default=str, ensure_ascii=False
        )
        digest = hashlib.blake2b(payload.encode("utf-8"), digest_size=12).hexdigest()
        _digests.put(id(answer), (answer, digest))
    return f'"{digest}-{representation}"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    candidates = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in candidates or etag in candidates


# Visible ASCII (0x21-0x7E) but ``%``: what a header value keeps as it is. Every other
# byte of the value's UTF-8 (space, CR, LF, any control, anything not ASCII) and ``%``
# itself travels percent-encoded, so any value is a valid header and ``unquote`` gives
# it back exactly (a server refuses a header holding CR/LF, and the reply is lost).
HEADER_KEEPS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


def header_safe(value: str) -> str:
    """``value`` as a header value: percent-encoded outside visible ASCII (``%`` too)."""
    return quote(value, safe=HEADER_KEEPS)


def answer_headers(answer: FinalAnswer, etag: str) -> dict[str, str]:
    return {**NO_STORE, "ETag": etag}


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers={**NO_STORE, "ETag": etag})


# Bodies of recent answers: every long-poll a commit wakes sends the same one.
_bodies: LruCache[tuple[int, bool], tuple[FinalAnswer, bytes]] = LruCache(256)


def json_answer(answer: FinalAnswer, etag: str, *, include_reasoning: bool) -> Response:
    key = (id(answer), include_reasoning)
    known = _bodies.get(key)
    if known is not None and known[0] is answer:
        body = known[1]
    else:
        body = render_json(answer.to_json(include_reasoning=include_reasoning))
        _bodies.put(key, (answer, body))
    return Response(body, media_type="application/json", headers=answer_headers(answer, etag))


def text_answer(answer: FinalAnswer, etag: str) -> Response:
    """``content`` as the body; what JSON would say about it, in headers (for ``curl``)."""
    headers = answer_headers(answer, etag)
    headers.update(
        {
            "X-Answer-Status": answer.status.value,
            "X-Answer-Complete": "true" if answer.complete else "false",
            "X-Answer-Source": answer.source,
        }
    )
    for name, value in (
        ("X-Answer-Run-Id", answer.run_id),
        ("X-Answer-Checkpoint-Id", answer.checkpoint_id),
        ("X-Answer-Completed-At", answer.completed_at),
        ("X-Answer-Error", answer.error and answer.error["code"]),
    ):
        if value:
            headers[name] = header_safe(value)
    return PlainTextResponse(answer.content, headers=headers)


def answer_response(
    answer: FinalAnswer, query: FinalAnswerQuery, representation: str, if_none_match: str | None
) -> Response:
    """The answer as ``query`` asked for it: JSON or text, or 304 when the client's ETag
    still matches."""
    etag = answer_etag(answer, representation)
    if etag_matches(if_none_match, etag):
        return not_modified(etag)
    if query.format == "text":
        return text_answer(answer, etag)
    return json_answer(answer, etag, include_reasoning=query.include_reasoning)
