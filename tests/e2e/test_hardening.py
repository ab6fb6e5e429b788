"""Inside a real ``langgraph dev``: other methods get a 405 in the documented shape, and
the route's normal outcomes leave the server's log quiet.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.support.seeds import hex8_thread_id, route
from tests.support.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("hardening")
    with langgraph_dev(root / "work", root / "data") as server:
        yield server


# OPTIONS without a preflight's headers, TRACE and PROPFIND fell through to the
# server's own routes: a bare 404, which a client reads as "route absent".
@pytest.mark.parametrize(
    "method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"]
)
async def test_other_methods_are_405_in_the_documented_shape(
    server: DevServer, method: str
) -> None:
    thread_id = await new_thread(server.url)
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        response = await http.request(method, route(thread_id), json={})
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "GET, HEAD"
    body = response.json()
    assert body["error"]["code"] == "method_not_allowed"
    assert body["error"]["retryable"] is False
    assert body["detail"] == body["error"]["message"]


async def test_normal_outcomes_log_nothing_above_debug(server: DevServer) -> None:
    thread_id = await new_thread(server.url)  # known to the server, no checkpoint yet
    start = len(server.log())
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        for _ in range(3):  # a TUI session's 8-hex id: unknown to the API
            missing = await http.get(route(hex8_thread_id()))
            assert missing.status_code == 404
            assert missing.json()["error"]["code"] == "thread_not_found"
        assert (await http.get(route(thread_id), params={"wait": "soon"})).status_code == 422
        found = await http.get(route(thread_id))
        assert found.status_code == 200
        etag = found.headers["etag"]
        unchanged = await http.get(route(thread_id), headers={"If-None-Match": etag})
        assert unchanged.status_code == 304
        held = await http.get(route(thread_id), params={"wait": "0.5"})
        assert held.status_code == 200
        assert (await http.head(route(thread_id))).status_code == 200
    # A held request whose client leaves (a closed tab) is as normal.
    _, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(f"GET {route(thread_id)}?wait=30 HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    await writer.drain()
    await asyncio.sleep(0.5)
    writer.transport.abort()
    time.sleep(0.5)  # the last lines flushed
    lines = [ANSI.sub("", line) for line in server.log()[start:].splitlines()]
    noisy = [
        line
        for line in lines
        if re.search(r"\[\s*(warning|error|critical)\s*\]", line)
        or "final-answer" in line
        or "HTTP Request:" in line
        or "threads/search" in line
    ]
    assert not noisy, "\n".join(noisy)
