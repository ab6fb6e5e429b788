"""What a page did, in order, for a browser test's failure message: its requests (and
how each ended), its WebSockets opening and closing, and what it logged. A late answer
then says which read, retry or reconnect it waited on (the page's own clock, seconds
from when the timeline was attached)."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

from playwright.async_api import Page, Request, WebSocket

# The newest lines a failure message carries.
SHOWN_LINES = 120


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


class PageTimeline:
    def __init__(self, page: Page) -> None:
        self.started = time.monotonic()
        self.events: list[str] = []
        page.on("request", lambda r: self._add(f"→ {r.method} {_path(r.url)}"))
        page.on("requestfinished", lambda r: self._ended(r, "done"))
        page.on("requestfailed", lambda r: self._ended(r, f"failed: {r.failure}"))
        page.on("websocket", self._websocket)
        page.on("console", lambda m: self._add(f"console {m.type}: {m.text}"))

    def _add(self, event: str) -> None:
        self.events.append(f"{time.monotonic() - self.started:7.3f} {event}")

    def _ended(self, request: Request, how: str) -> None:
        self._add(f"← {request.method} {_path(request.url)}: {how}")

    def _websocket(self, socket: WebSocket) -> None:
        self._add(f"websocket open {_path(socket.url)}")
        socket.on("close", lambda _: self._add(f"websocket closed {_path(socket.url)}"))

    def __str__(self) -> str:
        return "\n".join(self.events[-SHOWN_LINES:])
