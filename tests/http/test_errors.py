"""The route's error table (``evoscientist_final_answer/http/errors.py``) and what must
agree with it: every row answered by the route and its body validated against the OpenAPI
document the route serves, the table in docs/final-answer.md, and the JS route's twin."""

from __future__ import annotations

import json
import logging
import re
import subprocess
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from starlette.applications import Starlette
from starlette.testclient import TestClient

from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.answer.run_liveness import RunNotFound
from evoscientist_final_answer.http.errors import ROUTE_ERRORS, error_row
from evoscientist_final_answer.http.loop_services import LoopServices
from evoscientist_final_answer.http.openapi import OPENAPI_PATH
from evoscientist_final_answer.http.routes import FinalAnswerRoute
from evoscientist_final_answer.settings import SettingError
from evoscientist_final_answer.store.errors import (
    CallerUnauthorized,
    CheckpointUnreadable,
    StoreDamaged,
    StoreUnavailable,
    ThreadNotFound,
)
from tests.support import jstools
from tests.support.reliability import assert_error
from tests.support.servers import REPO

PATH = "/api/threads/{thread_id}/final-answer"
THREAD = "t-1"
ROWS = {row.code: row for row in ROUTE_ERRORS}


@dataclass(frozen=True)
class Trigger:
    """How to make the route answer a row: the request, and what the route's reads
    (``raises``) or its settings check (``setting``) raise."""

    method: str = "GET"
    params: dict[str, str] = field(default_factory=dict)
    raises: Exception | None = None
    setting: SettingError | None = None


# One per row: a new row without its trigger fails test_every_row_has_a_trigger.
TRIGGERS = {
    "method_not_allowed": Trigger(method="POST"),
    "invalid_request": Trigger(params={"wait": "soon"}),
    "thread_not_found": Trigger(raises=ThreadNotFound(THREAD)),
    "run_not_found": Trigger(params={"run_id": "r-1"}, raises=RunNotFound("r-1")),
    "unauthorized": Trigger(raises=CallerUnauthorized("the server refused the credentials")),
    "store_damaged": Trigger(raises=StoreDamaged("file is not a database")),
    "checkpoint_unreadable": Trigger(raises=CheckpointUnreadable("no serializer for it")),
    "store_unavailable": Trigger(raises=StoreUnavailable("timed out")),
    "misconfigured": Trigger(setting=SettingError("EVOSCIENTIST_READ_FROM='x': store or api")),
}


class RaisingServer:
    """The server view of a service that reads nothing: the caller's context is empty."""

    def caller_context(self, scope: Any, headers: Any) -> nullcontext[None]:
        return nullcontext()


class RaisingService:
    """A service whose every read raises ``error``: from there on, the route's own path."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.server = RaisingServer()

    async def read(self, *args: Any, **kwargs: Any) -> Any:
        assert self.error is not None
        raise self.error

    wait = read

    async def close(self) -> None:
        pass


def app_for(trigger: Trigger) -> Starlette:
    def validate() -> None:
        if trigger.setting is not None:
            raise trigger.setting

    services = LoopServices(lambda: RaisingService(trigger.raises), validate=validate)
    return Starlette(routes=[FinalAnswerRoute(services)])


async def answer(trigger: Trigger, **extra: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app_for(trigger))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        return await http.request(
            trigger.method,
            PATH.format(thread_id=THREAD),
            params={**trigger.params, **extra},
        )


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """The OpenAPI document as the route serves it."""
    response = TestClient(Starlette(routes=final_answer_routes())).get(OPENAPI_PATH)
    assert response.status_code == 200
    return response.json()


def documented_response(document: dict[str, Any], method: str, status: int) -> dict[str, Any]:
    operation = document["paths"][PATH][method.lower()]
    assert str(status) in operation["responses"], (method, status, list(operation["responses"]))
    return operation["responses"][str(status)]


def assert_documented(document: dict[str, Any], method: str, response: httpx.Response) -> None:
    """The response as the document describes it: its status for the method, its body
    valid against that status's schema, its required and constant headers."""
    spec = documented_response(document, method, response.status_code)
    media = response.headers["content-type"].split(";")[0]
    schema = spec["content"][media]["schema"]
    Draft202012Validator({**schema, "components": document["components"]}).validate(response.json())
    for name, header in spec.get("headers", {}).items():
        value = response.headers.get(name)
        if header.get("required"):
            assert value is not None, (name, response.headers)
        if value is not None and "const" in header["schema"]:
            assert value == header["schema"]["const"], (name, value)


def test_every_row_has_a_trigger() -> None:
    assert set(TRIGGERS) == set(ROWS)


def test_every_row_is_reachable() -> None:
    """Codes are unique, and no row's exception is answered by an earlier row (the first
    match answers: a subclass must come before its base)."""
    assert len(ROWS) == len(ROUTE_ERRORS)
    for row in ROUTE_ERRORS:
        assert error_row(row.exception("x")) is row, row.code


@pytest.mark.parametrize("code", list(ROWS))
async def test_the_route_answers_each_row_as_the_document_says(
    code: str, document: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Each row, answered for real by the route (only what it reads is stubbed), has the
    row's status, code and retryable flag, the documented shape, a body the served
    document validates (401 ``unauthorized`` included), and the row's log line."""
    row, trigger = ROWS[code], TRIGGERS[code]
    caplog.set_level(logging.DEBUG, logger="evoscientist_final_answer.http.routes")
    response = await answer(trigger)
    assert_error(response, row.status, row.code, retryable=row.retryable)
    assert_documented(document, trigger.method, response)
    logged = [r for r in caplog.records if r.name == "evoscientist_final_answer.http.routes"]
    assert [r.levelno for r in logged] == ([row.log_level] if row.log_level else [])
    if row.log_level:
        assert THREAD in logged[0].getMessage()


@pytest.mark.parametrize("code", [code for code, t in TRIGGERS.items() if t.raises])
async def test_a_long_poll_answers_each_row_alike(code: str, document: dict[str, Any]) -> None:
    row = ROWS[code]
    response = await answer(TRIGGERS[code], wait="1")
    assert_error(response, row.status, row.code, retryable=row.retryable)
    assert_documented(document, "GET", response)


def test_a_body_of_another_status_or_flag_does_not_validate(document: dict[str, Any]) -> None:
    """Each status's schema holds its own codes and their flags: the document would catch
    a row answered with the wrong status or retryable."""

    def valid(status: int, code: str, retryable: bool) -> bool:
        schema = documented_response(document, "GET", status)["content"]["application/json"]
        body = {"detail": "m", "error": {"code": code, "message": "m", "retryable": retryable}}
        validator = Draft202012Validator({**schema["schema"], "components": document["components"]})
        return validator.is_valid(body)

    assert valid(401, "unauthorized", False)
    assert not valid(503, "unauthorized", False)
    assert not valid(404, "store_unavailable", True)
    assert not valid(503, "store_unavailable", False)


def test_the_document_lists_every_code(document: dict[str, Any]) -> None:
    error = document["components"]["schemas"]["Error"]["properties"]["error"]
    assert error["properties"]["code"]["enum"] == [row.code for row in ROUTE_ERRORS]


def documented_table() -> dict[str, tuple[int, bool]]:
    """docs/final-answer.md's error table: code → (status, retryable)."""
    text = (REPO / "docs" / "final-answer.md").read_text()
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d{3}) \| `(\w+)` \| (true|false) \|", section, re.MULTILINE)
    assert rows, "no error table under '## Errors'"
    table = {code: (int(status), retryable == "true") for status, code, retryable in rows}
    assert len(table) == len(rows), "a code twice in the docs' table"
    return table


def python_table() -> dict[str, tuple[int, bool]]:
    return {row.code: (row.status, row.retryable) for row in ROUTE_ERRORS}


def test_the_docs_table_is_the_error_table() -> None:
    assert documented_table() == python_table()


JS_TABLE = """
const { ROUTE_ERRORS } = await import(process.argv[1]);
const rows = ROUTE_ERRORS.map(({ code, status, retryable }) => [code, status, retryable]);
console.log(JSON.stringify(rows));
"""


def test_the_js_table_is_the_python_table() -> None:
    """clients/js/src/route/errors.js, row for row in the same order: same codes,
    statuses and retryable flags."""
    node = jstools.node()
    module = (REPO / "clients" / "js" / "src" / "route" / "errors.js").as_uri()
    result = subprocess.run(
        [node, "--input-type=module", "-e", JS_TABLE, module],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    js_rows = [tuple(row) for row in json.loads(result.stdout)]
    assert js_rows == [(row.code, row.status, row.retryable) for row in ROUTE_ERRORS]
