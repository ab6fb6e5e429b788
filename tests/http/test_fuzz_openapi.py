"""Schemathesis against the OpenAPI document the app serves (``GET /api/openapi.json``):
every operation fuzzed in-process (httpx ``ASGITransport``, no server), with valid and
invalid input, over a store of real threads. Zero 5xx; every response conforms to the
document (status, content type, headers, body); every error is in the documented shape.

The budget is fixed and derandomized for ``make test``; ``EVOSCIENTIST_FUZZ=long`` runs
a longer random search.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.openapi import OPENAPI_PATH
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader
from tests.support.reliability import assert_error_shape
from tests.support.seeds import AGENT_NAME, open_seeder

BASE_URL = "http://testserver"
FINAL_ANSWER = "/api/threads/{thread_id}/final-answer"
LONG = os.environ.get("EVOSCIENTIST_FUZZ") == "long"
EXAMPLES = {"positive": 2_000 if LONG else 100, "negative": 2_000 if LONG else 100}
# A long-poll on a thread that never completes would hold for ``wait`` seconds: the
# fuzzer's values are kept, scaled into a budget the suite can afford.
MAX_WAIT = 0.05

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


class App:
    """The app over a seeded store, driven from sync hypothesis tests on one event loop."""

    def __init__(self, db_path: Path) -> None:
        self.runner = asyncio.Runner()
        self.service = FinalAnswerService(SqliteAnswerReader(db_path, AGENT_NAME), None)
        transport = httpx.ASGITransport(app=create_app(lambda: self.service))
        self.client = httpx.AsyncClient(transport=transport, base_url=BASE_URL)
        self.thread_ids: list[str] = []
        self.run_ids: list[str] = []

    def seed(self, db_path: Path) -> None:
        async def seed() -> None:
            async with open_seeder(db_path) as seeder:
                for thread in await seeder.every_scenario():
                    if thread.label != "paused":  # a thread that never completes
                        self.thread_ids.append(thread.thread_id)
                        self.run_ids.extend(thread.run_ids)

        self.runner.run(seed())

    def send(self, kwargs: dict[str, Any]) -> httpx.Response:
        return self.runner.run(
            self.client.request(
                kwargs["method"],
                kwargs["url"],
                params=kwargs.get("params"),
                headers=kwargs.get("headers"),
            )
        )

    def close(self) -> None:
        self.runner.run(self.client.aclose())
        self.runner.run(self.service.close())
        self.runner.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    db_path = tmp_path_factory.mktemp("fuzz") / "sessions.db"
    app = App(db_path)
    try:
        app.seed(db_path)
        yield app
    finally:
        app.close()


@pytest.fixture(scope="module")
def schema(app: App) -> Any:
    response = app.send({"method": "GET", "url": f"{BASE_URL}{OPENAPI_PATH}"})
    assert response.status_code == 200
    document = response.json()
    assert set(document["paths"]) == {FINAL_ANSWER}  # the route's own (a host has its own)
    return schemathesis.openapi.from_dict(document)


def run_case(app: App, case: Any, data: st.DataObject) -> httpx.Response:
    if case.path_parameters and data.draw(st.booleans(), label="known thread"):
        case.path_parameters["thread_id"] = data.draw(st.sampled_from(app.thread_ids))
        if case.query and "run_id" in case.query and data.draw(st.booleans(), label="known run"):
            case.query["run_id"] = data.draw(st.sampled_from(app.run_ids))
    if case.query and isinstance(case.query.get("wait"), int | float) and case.query["wait"] > 0:
        case.query["wait"] = min(case.query["wait"], MAX_WAIT)
    kwargs = case.as_transport_kwargs(base_url=BASE_URL)
    response = app.send(kwargs)
    # No ``negative_data_rejection``: the route ignores query parameters it does not
    # know (browsers' cache busters) and reads an empty value as the default, on purpose.
    case.validate_response(response, checks=CHECKS, headers=kwargs.get("headers"))
    assert response.status_code < 500 or response.status_code == 503, response.text
    if response.status_code >= 400:
        assert_error_shape(response)
    return response


def negative_target(app: App, schema: Any) -> Any:
    """The final-answer operation with its path pinned to a real thread, for invalid
    query and header values: schemathesis 4.15 cannot make a path parameter invalid
    (it finds no example at all), and ``/api/models`` has no parameters to spoil.
    The thread id itself is fuzzed by the positive run and by ``test_params``."""
    document = copy.deepcopy(schema.raw_schema)
    operation = document["paths"].pop(FINAL_ANSWER)
    operation["get"]["parameters"] = [
        p for p in operation["get"]["parameters"] if p["name"] != "thread_id"
    ]
    pinned = FINAL_ANSWER.replace("{thread_id}", app.thread_ids[0])
    document["paths"] = {pinned: operation}
    return schemathesis.openapi.from_dict(document)[pinned]["GET"]


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_every_operation_conforms(app: App, schema: Any, mode: str) -> None:
    generation_mode = GenerationMode(mode)
    seen: dict[int, int] = {}

    target = schema if mode == "positive" else negative_target(app, schema)

    @settings(
        max_examples=EXAMPLES[mode],
        deadline=None,
        derandomize=not LONG,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=target.as_strategy(generation_mode=generation_mode), data=st.data())
    def fuzz(case: Any, data: st.DataObject) -> None:
        response = run_case(app, case, data)
        seen[response.status_code] = seen.get(response.status_code, 0) + 1

    fuzz()
    print(f"{mode}: {sum(seen.values())} requests, statuses {dict(sorted(seen.items()))}")
    assert not any(status >= 500 for status in seen), seen
    if mode == "positive":
        assert 200 in seen and 404 in seen, seen
    else:
        assert 422 in seen, seen


@pytest.mark.parametrize("thread_id", ["\n", "a\nb", "\r\n", "x\u2028y", "\x00", "a/b", " x"])
def test_any_id_reaches_validation(app: App, thread_id: str) -> None:
    """Found by this fuzzer: an id holding a newline missed the route (Starlette's
    ``:path`` is ``.*``, and ``.`` stops at a newline), which answered a bare
    ``Not Found`` — what a client reads as "this server has no such route"."""
    response = app.send(
        {"method": "GET", "url": f"{BASE_URL}/api/threads/{quote(thread_id, safe='')}/final-answer"}
    )
    assert response.status_code == 422, response.text
    assert_error_shape(response)
    assert response.json()["error"]["code"] == "invalid_request"
