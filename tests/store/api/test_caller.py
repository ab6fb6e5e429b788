"""The caller's credentials on a sidecar's API calls (``store.api.caller``)."""

from __future__ import annotations

import asyncio

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evoscientist_final_answer.store.api.caller import (
    add_caller,
    as_caller,
    credentials_key,
    passed_on,
)


async def echo(request: Request) -> JSONResponse:
    return JSONResponse(dict(request.headers))


def client() -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=Starlette(routes=[Route("/", echo)])),
        base_url="http://api",
        headers={"x-api-key": "the sidecar's own"},
        event_hooks={"request": [add_caller]},
    )


def test_only_what_names_the_caller_is_passed_on() -> None:
    headers = [
        ("Authorization", "Bearer alice"),
        ("X-Api-Key", "k"),
        ("Cookie", "session=1"),
        ("Host", "sidecar:8000"),
        ("Accept", "text/plain"),
        ("If-None-Match", '"abc"'),
        ("Content-Length", "0"),
        ("Connection", "keep-alive"),
    ]
    assert passed_on(headers) == (
        ("authorization", "Bearer alice"),
        ("cookie", "session=1"),
        ("x-api-key", "k"),
    )


async def test_each_request_carries_its_callers_credentials() -> None:
    async with client() as http:

        async def as_(user: str) -> dict[str, str]:
            with as_caller([("Authorization", f"Bearer {user}"), ("X-Api-Key", user)]):
                await asyncio.sleep(0)  # interleave the two callers
                return (await http.get("/")).json()

        alice, bob = await asyncio.gather(as_("alice"), as_("bob"))
        nobody = (await http.get("/")).json()
    assert (alice["authorization"], alice["x-api-key"]) == ("Bearer alice", "alice")
    assert (bob["authorization"], bob["x-api-key"]) == ("Bearer bob", "bob")
    # Outside a caller's request: the client's own headers, no one's credentials.
    assert "authorization" not in nobody and nobody["x-api-key"] == "the sidecar's own"


def test_the_key_of_a_shared_poll_is_the_callers() -> None:
    assert credentials_key() == ()
    with as_caller([("Authorization", "Bearer alice")]):
        assert credentials_key() == (("authorization", "Bearer alice"),)
    assert credentials_key() == ()
