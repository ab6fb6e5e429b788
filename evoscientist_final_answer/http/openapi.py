"""The OpenAPI 3.1 description of the custom routes, served at ``GET /api/openapi.json``:
written by hand from the contract in ``docs/final-answer.md``, its errors from the route's
error table (``errors.py``), and held to the app by ``tests/http/test_fuzz_openapi.py``.
"""

from __future__ import annotations

from typing import Any

from evoscientist_final_answer.http.errors import ROUTE_ERRORS, MethodNotAllowed, RouteError
from evoscientist_final_answer.http.params import FORMATS, MAX_ID_LENGTH, MAX_WAIT_SECONDS

OPENAPI_PATH = "/api/openapi.json"

_NULLABLE_STRING = {"type": ["string", "null"]}
# ``error.code`` of a 200 body with ``status: "error"`` (docs/final-answer.md).
RUN_ERROR_CODES = ("run_failed", "run_cancelled", "run_lost", "run_stopped")

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["detail", "error"],
    "properties": {
        "detail": {"type": "string"},
        "error": {
            "type": "object",
            "required": ["code", "message", "retryable"],
            "properties": {
                "code": {"type": "string", "enum": [row.code for row in ROUTE_ERRORS]},
                "message": {"type": "string"},
                "retryable": {"type": "boolean"},
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}

FINAL_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "content",
        "completed_at",
        "complete",
        "status",
        "thread_id",
        "run_id",
        "checkpoint_id",
        "message_id",
        "updated_at",
        "source",
        "error",
        "interrupts",
    ],
    "properties": {
        "content": {"type": "string"},
        "completed_at": _NULLABLE_STRING,
        "complete": {"type": "boolean"},
        "status": {
            "type": "string",
            "enum": ["pending", "running", "success", "error", "interrupted"],
        },
        "thread_id": {"type": "string"},
        "run_id": _NULLABLE_STRING,
        "checkpoint_id": _NULLABLE_STRING,
        "message_id": _NULLABLE_STRING,
        "updated_at": _NULLABLE_STRING,
        "source": {"type": "string", "enum": ["checkpointer", "api"]},
        "error": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["code", "message", "retryable"],
                    "properties": {
                        "code": {
                            "type": "string",
                            "enum": list(RUN_ERROR_CODES),
                            "description": (
                                "run_failed: a task raised (its type and message); "
                                "run_cancelled: cancelled through the API, or a task "
                                "cancelled mid-call; run_lost: nothing executes the run "
                                "any more (its server restarted or its writer died); "
                                "run_stopped: the run ended with work left"
                            ),
                        },
                        "message": {"type": "string"},
                        "retryable": {"type": "boolean"},
                    },
                },
            ]
        },
        "interrupts": {
            "type": "array",
            "items": {"type": "object", "required": ["id", "value"]},
        },
        "reasoning": {"type": "string"},
    },
}


def _errors(rows: list[RouteError], **headers: Any) -> dict[str, Any]:
    """The response of one status: the Error body, held to these rows' codes and each
    one's ``retryable``, so a body with another status's code does not validate."""
    described = "\n".join(
        f"- {row.code}{' (retryable)' if row.retryable else ''}: {row.when}" for row in rows
    )
    if any(row.retryable for row in rows):
        headers["Retry-After"] = _text_header("seconds to wait before a retryable error's retry")
    these_rows = [
        {
            "properties": {
                "error": {
                    "properties": {
                        "code": {"const": row.code},
                        "retryable": {"const": row.retryable},
                    }
                }
            }
        }
        for row in rows
    ]
    return {
        "description": described,
        "headers": {
            "Cache-Control": {"schema": {"type": "string", "const": "no-store"}},
            **headers,
        },
        "content": {
            "application/json": {
                "schema": {"allOf": [{"$ref": "#/components/schemas/Error"}, {"oneOf": these_rows}]}
            }
        },
    }


def _error_responses(rows: list[RouteError]) -> dict[str, Any]:
    """One response per status of ``rows``, in the table's order."""
    statuses = dict.fromkeys(row.status for row in rows)
    return {
        str(status): _errors([row for row in rows if row.status == status]) for status in statuses
    }


# Every method but GET and HEAD is refused (405); GET answers every other row.
_REFUSED = [row for row in ROUTE_ERRORS if row.exception is MethodNotAllowed]
_READ_ERRORS = [row for row in ROUTE_ERRORS if row.exception is not MethodNotAllowed]


# The value as stored, percent-encoded outside visible ASCII (and ``%`` itself), since a
# header carries no other bytes: a client decodes it with ``decodeURIComponent`` or
# ``urllib.parse.unquote``.
PERCENT_ENCODED = " (percent-encoded outside visible ASCII, and % itself)"


def _text_header(description: str) -> dict[str, Any]:
    return {"description": description, "schema": {"type": "string"}}


FINAL_ANSWER_OPERATION: dict[str, Any] = {
    "operationId": "getFinalAnswer",
    "summary": "The authoritative final answer of a thread's latest turn",
    "description": (
        "Read from the thread's newest checkpoint (or through the langgraph API). "
        "Never writes to the store. See docs/final-answer.md."
    ),
    "parameters": [
        {
            "name": "thread_id",
            "in": "path",
            "required": True,
            "description": f"1-{MAX_ID_LENGTH} printable characters without '/'",
            "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH},
        },
        {
            "name": "run_id",
            "in": "query",
            "required": False,
            "description": "the answer of that run (none written yet: status pending)",
            "schema": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH},
        },
        {
            "name": "wait",
            "in": "query",
            "required": False,
            "description": "long-poll: hold until complete (or changed) or this many seconds",
            "schema": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_SECONDS},
        },
        {
            "name": "include_reasoning",
            "in": "query",
            "required": False,
            "schema": {"type": "boolean"},
        },
        {
            "name": "format",
            "in": "query",
            "required": False,
            "schema": {"type": "string", "enum": list(FORMATS)},
        },
        {
            "name": "If-None-Match",
            "in": "header",
            "required": False,
            "description": "an ETag of an earlier answer: 304 while it still matches",
            "schema": {"type": "string"},
        },
    ],
    "responses": {
        "200": {
            "description": "the answer (JSON, or with format=text the content as plain text)",
            "headers": {
                "ETag": {"required": True, "schema": {"type": "string"}},
                "Cache-Control": {"schema": {"type": "string", "const": "no-store"}},
                "X-Answer-Status": _text_header("format=text: the status"),
                "X-Answer-Complete": _text_header("format=text: true or false"),
                "X-Answer-Source": _text_header("format=text: checkpointer or api"),
                **{
                    name: _text_header(f"format=text, when set: {what}{PERCENT_ENCODED}")
                    for name, what in (
                        ("X-Answer-Run-Id", "the run_id"),
                        ("X-Answer-Checkpoint-Id", "the checkpoint_id"),
                        ("X-Answer-Completed-At", "completed_at"),
                        ("X-Answer-Error", "error.code"),
                    )
                },
            },
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/FinalAnswer"}},
                "text/plain": {"schema": {"type": "string"}},
            },
        },
        "304": {
            "description": "If-None-Match matched: the answer has not changed",
            "headers": {"ETag": {"required": True, "schema": {"type": "string"}}},
        },
        **_error_responses(_READ_ERRORS),
    },
}

# Every other method on the route: inside langgraph dev a bare 404 would say "route
# absent" to a client (F2a), so each is refused in the documented shape.
REFUSED_OPERATION: dict[str, Any] = {
    "summary": "Not allowed: the route is read-only",
    "responses": {
        "405": _errors(
            _REFUSED,
            Allow={"required": True, "schema": {"type": "string", "const": "GET, HEAD"}},
        )
    },
}


def openapi_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "EvoScientist final-answer route",
            "version": "1.0.0",
            "description": "GET /api/threads/{thread_id}/final-answer, mounted beside the "
            "langgraph API (final_answer_routes() in langgraph.json's http.app).",
        },
        "paths": {
            "/api/threads/{thread_id}/final-answer": {
                "get": FINAL_ANSWER_OPERATION,
                **{
                    method: {**REFUSED_OPERATION, "operationId": f"{method}FinalAnswer"}
                    for method in ("post", "put", "delete", "patch")
                },
            },
        },
        "components": {
            "schemas": {
                "FinalAnswer": FINAL_ANSWER_SCHEMA,
                "Error": ERROR_SCHEMA,
            }
        },
    }
