"""The front door (``langgraph_dev/front_door.py``): inside ``langgraph dev`` the
route's GET and HEAD skip the server's own middleware only when all of it is known to
do nothing for them, and answer with the server's own CORS settings.

The server's module is stood in for by a namespace holding what ``langgraph_api.server``
and ``langgraph_api.config`` hold (importing the real ones starts a server); the
middleware in it are the real classes. End to end, inside a real ``langgraph dev``,
the browser test (``test_browser_recovery.py``) reads the route cross-origin.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest
from langgraph_api.middleware.private_network import PrivateNetworkMiddleware
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware

from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.longpoll.held_response import WayOut
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_waiting import parked_waiters, three_step_run, until
from tests.support.seeds import Seeder, route
from tests.support.servers import listening

pytestmark = pytest.mark.backends("sqlite")

ORIGIN = "http://webui.example"
REQUESTS = 20
SERVER_CORS = {
    "allow_origins": ["*"],
    "allow_methods": ["*"],
    "allow_headers": ["*"],
    "expose_headers": ["location", "content-location"],
}


def transparent_stack() -> list[Middleware]:
    return [Middleware(PrivateNetworkMiddleware), Middleware(CORSMiddleware, **SERVER_CORS)]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    """Stand-ins for the server's modules, as the front door reads them."""
    server = SimpleNamespace(global_middleware=transparent_stack())
    config = SimpleNamespace(HTTP_CONFIG={"app": "evoscientist_final_answer.http.app:app"})
    config.MOUNT_PREFIX = None
    monkeypatch.setitem(sys.modules, "langgraph_api.server", server)
    monkeypatch.setitem(sys.modules, "langgraph_api.config", config)
    server.config = config
    yield server


async def get(seeder: Seeder, **headers: str) -> httpx.Response:
    thread = await seeder.chat(["forty-two"])
    service = FinalAnswerService(seeder.store.reader(), None)
    app = create_app(lambda: service)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client:
            return await client.get(route(thread.thread_id), headers=headers)
    finally:
        await service.close()


async def test_open_door_answers_with_the_servers_cors_headers(
    seeder: Seeder, server: SimpleNamespace
) -> None:
    # The app under test holds only its own middleware: CORS headers can only come
    # from the front door, with the server's settings.
    response = await get(seeder, Origin=ORIGIN)
    assert response.status_code == 200 and response.json()["content"] == "forty-two"
    assert response.headers["access-control-allow-origin"] == "*"
    exposed = response.headers["access-control-expose-headers"].lower()
    assert "content-location" in exposed and "location" in exposed


@pytest.mark.parametrize(
    "closing",
    ["unknown middleware", "auth on custom routes", "auth first", "mount prefix"],
)
async def test_the_door_closes_where_skipping_could_change_an_answer(
    seeder: Seeder, server: SimpleNamespace, closing: str
) -> None:
    if closing == "unknown middleware":
        server.global_middleware.append(Middleware(GZipMiddleware))
    elif closing == "auth on custom routes":
        server.config.HTTP_CONFIG["enable_custom_route_auth"] = True
    elif closing == "auth first":
        server.config.HTTP_CONFIG["middleware_order"] = "auth_first"
    else:
        server.config.MOUNT_PREFIX = "/api/v1"
    # Closed, the request takes the usual path: here (no server stack applied) that
    # means no CORS headers at all; in the server its own middleware adds them.
    response = await get(seeder, Origin=ORIGIN)
    assert response.status_code == 200 and response.json()["content"] == "forty-two"
    assert "access-control-allow-origin" not in response.headers


async def test_outside_the_server_the_door_stays_closed(seeder: Seeder) -> None:
    assert "langgraph_api.server" not in sys.modules
    response = await get(seeder, Origin=ORIGIN)
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


async def test_a_poll_answering_many_requests_gives_each_origin_its_own_cors_headers(
    seeder: Seeder, server: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poll answers its parked requests with messages made once per representation
    and origin (``http.py``'s ``respond``): a request from another origin, or from none,
    still gets the headers the server's CORS middleware gives it."""
    allowed = {**SERVER_CORS, "allow_origins": [ORIGIN]}  # mirrored back, not "*"
    server.global_middleware[1] = Middleware(CORSMiddleware, **allowed)
    made: list[object] = []
    with_cors = WayOut.with_cors

    def counted(self: WayOut, scope: object, send: object) -> object:
        made.append(scope)
        return with_cors(self, scope, send)  # type: ignore[arg-type]

    monkeypatch.setattr(WayOut, "with_cors", counted)
    service = FinalAnswerService(seeder.store.reader(), None)
    app = create_app(lambda: service)
    origins = [ORIGIN, "http://elsewhere.example", None, ORIGIN, None]
    try:
        async with (
            three_step_run(seeder) as run,
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://testserver"
            ) as client,
        ):
            requests = [
                asyncio.create_task(
                    client.get(
                        f"{route(run.thread.thread_id)}?wait=20",
                        headers={"Origin": origin} if origin else {},
                    )
                )
                for origin in origins
            ]
            await until(lambda: parked_waiters(service) == 5)
            await run.finish()
            responses = await asyncio.wait_for(asyncio.gather(*requests), 10)
    finally:
        await service.close()
    assert len(made) == 3  # one per origin: the poll answered all five
    for origin, response in zip(origins, responses, strict=True):
        assert response.status_code == 200 and response.json()["content"] == "the final answer"
        expected = ORIGIN if origin == ORIGIN else None
        assert response.headers.get("access-control-allow-origin") == expected
        assert response.headers["vary"] == "Origin"


async def test_a_finished_request_leaves_nothing_for_the_collector(
    seeder: Seeder, server: SimpleNamespace
) -> None:
    """Behind a real uvicorn: once a front-door request has been answered, its
    connection's objects go with it by reference counting. The ``WayOut`` left in
    the scope of uvicorn's request cycle closed a reference cycle through that cycle's
    own ``send``: every finished request's transport, flow control and buffers stayed
    until a full collection (a flood of 5,000 held polls left 100,000 objects)."""
    thread = await seeder.chat(["forty-two"])
    service = FinalAnswerService(seeder.store.reader(), None)
    gc.collect()
    gc.disable()
    try:
        async with listening(create_app(lambda: service)) as port:
            limits = httpx.Limits(max_keepalive_connections=0)
            async with httpx.AsyncClient(limits=limits) as client:
                for _ in range(REQUESTS):
                    url = f"http://127.0.0.1:{port}{route(thread.thread_id)}"
                    assert (await client.get(url)).json()["content"] == "forty-two"
            left = sum(isinstance(o, WayOut) for o in gc.get_objects())
    finally:
        gc.enable()
        await service.close()
    assert left == 0, f"{left} finished requests still held by a reference cycle"
