"""Every method but ``GET`` and ``HEAD`` gets the documented JSON 405 with
``Allow: GET, HEAD`` (``docs/final-answer.md``, *Errors*): not only the four the route
once listed, but ``OPTIONS``, ``TRACE``, WebDAV's ``PROPFIND``, any other, where
Starlette answered in plain text with an ``Allow`` of its own. A CORS preflight is still
the host's CORS middleware's to answer.

Behind a real uvicorn: the route in a host app (no middleware, then the host's CORS),
and the complete app."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.support.seeds import Seeder, route
from tests.support.servers import listening

ORIGIN = "http://webui.example"
METHODS = ["OPTIONS", "TRACE", "PROPFIND", "POST", "PUT", "DELETE", "PATCH"]


def assert_documented_405(response: httpx.Response) -> None:
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "GET, HEAD"
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"]["code"] == "method_not_allowed"
    assert body["error"]["retryable"] is False
    assert body["detail"] == body["error"]["message"]


@pytest.mark.parametrize("app_kind", ["host", "complete_app"])
async def test_every_other_method_is_the_documented_405(seeder: Seeder, app_kind: str) -> None:
    thread = await seeder.chat(["forty-two"])
    service = FinalAnswerService(seeder.store.reader(), None)
    if app_kind == "host":
        app = Starlette(routes=[*final_answer_routes(lambda: service)])
    else:
        app = create_app(lambda: service)
    try:
        async with (
            listening(app) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
        ):
            for method in METHODS:
                assert_documented_405(await client.request(method, route(thread.thread_id)))
            assert (await client.get(route(thread.thread_id))).json()["content"] == "forty-two"
    finally:
        await service.close()


async def test_behind_the_hosts_cors_a_preflight_is_its_answer_any_other_options_a_405(
    seeder: Seeder,
) -> None:
    thread = await seeder.chat(["forty-two"])
    service = FinalAnswerService(seeder.store.reader(), None)
    app = Starlette(
        routes=[*final_answer_routes(lambda: service)],
        middleware=[Middleware(CORSMiddleware, allow_origins=[ORIGIN], allow_methods=["GET"])],
    )
    path = route(thread.thread_id)
    try:
        async with (
            listening(app) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
        ):
            preflight = await client.options(
                path, headers={"Origin": ORIGIN, "Access-Control-Request-Method": "GET"}
            )
            not_preflight = await client.options(path, headers={"Origin": ORIGIN})
    finally:
        await service.close()
    assert preflight.status_code == 200 and preflight.text == "OK"
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert "GET" in preflight.headers["access-control-allow-methods"]
    assert_documented_405(not_preflight)
    assert not_preflight.headers["access-control-allow-origin"] == ORIGIN
