"""The route's path, and one GET straight into an ASGI app (shared by the SQLite and
Postgres columns)."""

from __future__ import annotations

from typing import Any


def route(thread_id: str) -> str:
    return f"/api/threads/{thread_id}/final-answer"


async def call_asgi(app: Any, path: str, query: str = "") -> tuple[int, bytes]:
    """One GET straight into the ASGI app: the route's own cost, no HTTP client's."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"bench")],
        "client": ("127.0.0.1", 1),
        "server": ("bench", 80),
    }
    status, chunks = 0, []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)
