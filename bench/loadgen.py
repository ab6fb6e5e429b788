"""Hold many long-polls from a process of its own, over raw sockets (no HTTP client), so
that the load generator's cost is not the server's: a bare ``asyncio.Protocol`` per
connection on uvloop, nothing parsed until every response has arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import sys
import time
from typing import Any

import uvloop

CONNECT_BATCH = 100
HEAD_END = b"\r\n\r\n"
# The route's compact JSON for an answer not complete when the wait ran out.
UNFINISHED = b'"complete":false'
REPOLLS = 3


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class HeldRequest(asyncio.Protocol):
    """One GET, on a connection of its own each time it is sent; ``done`` resolves when
    its last response has ended."""

    def __init__(self, request: bytes, done: asyncio.Future[None], port: int) -> None:
        self.request = request
        self.done = done
        self.port = port
        self.repolls = 0
        self.aborted = False
        self.sending: asyncio.Future[None] | None = None  # a repoll's connecting
        self._reset()

    def _reset(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.expected: int | None = None  # head and body, once the head is in
        self.received: float | None = None
        self.transport: Any = None  # uvloop's TCPTransport (not an asyncio.Transport)

    async def connect(self) -> None:
        await asyncio.get_running_loop().create_connection(
            lambda: _Connection(self), "127.0.0.1", self.port
        )

    def connected(self, transport: Any) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.expected is None:
            raw = b"".join(self.chunks)
            end = raw.find(HEAD_END)
            if end < 0:
                return
            self.expected = end + len(HEAD_END) + _content_length(raw[:end])
        if self.size >= self.expected:
            self.finish()

    def finish(self) -> None:
        if self.received is None:
            self.received = time.time()
            if self.transport is not None:
                self.transport.close()
            if self._unfinished() and self.repolls < REPOLLS and not self.aborted:
                self.repolls += 1
                self._reset()
                self.sending = asyncio.ensure_future(self.connect())
                return
        if not self.done.done():
            self.done.set_result(None)

    def _unfinished(self) -> bool:
        head, _, body = b"".join(self.chunks).partition(HEAD_END)
        return head.startswith(b"HTTP/1.1 200") and UNFINISHED in body

    def result(self) -> dict[str, Any]:
        raw = b"".join(self.chunks)
        head, _, body = raw.partition(HEAD_END)
        if not head:
            return {"status": 0, "received": self.received, "repolls": self.repolls}
        status = int(head.split(b"\r\n", 1)[0].split()[1])
        result: dict[str, Any] = {
            "status": status,
            "received": self.received,
            "repolls": self.repolls,
        }
        if status == 200:
            answer = json.loads(body)
            result.update(
                complete=answer["complete"],
                content=answer["content"],
                completed_at=answer["completed_at"],
            )
        return result


class _Connection(asyncio.Protocol):
    """One sending of a ``HeldRequest``: a connection closed after its response (or
    replaced by the next sending) reports nothing more."""

    def __init__(self, request: HeldRequest) -> None:
        self.request = request
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.request.connected(transport)

    def data_received(self, data: bytes) -> None:
        if self.request.transport is self.transport:
            self.request.data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.request.transport is self.transport:
            self.request.finish()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


async def main(port: int) -> None:
    """``python -m bench.loadgen PORT``: reads one JSON list of request paths on its first
    stdin line, opens one connection per path and sends each GET, then prints
    ``{"held": n}``. A later stdin line ``abort`` closes every connection at once (then
    ``{"aborted": time}``); otherwise, once every response is in, it prints
    ``{"results": [...]}``: per request its status, the time (``time.time()``) its response
    ended, and the JSON body's ``complete``, ``content`` and ``completed_at``.

    A poll whose wait ran out (a 200 saying ``"complete":false``) is sent again on a new
    connection, as every recovery client does, up to ``REPOLLS`` times, and the answer a
    waiter ends with is the one measured (``repolls`` counts how often it asked again)."""
    raise_fd_limit()
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    paths: list[str] = json.loads(await stdin.readline())
    held: list[HeldRequest] = []
    for start in range(0, len(paths), CONNECT_BATCH):
        batch = [
            HeldRequest(
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode(),
                loop.create_future(),
                port,
            )
            for path in paths[start : start + CONNECT_BATCH]
        ]
        await asyncio.gather(*(request.connect() for request in batch))
        held.extend(batch)
    print(json.dumps({"held": len(held)}), flush=True)

    responses = asyncio.ensure_future(asyncio.gather(*(request.done for request in held)))
    command = asyncio.ensure_future(stdin.readline())
    await asyncio.wait((responses, command), return_when=asyncio.FIRST_COMPLETED)
    if responses.done():
        command.cancel()
        print(json.dumps({"results": [request.result() for request in held]}), flush=True)
        return
    responses.cancel()
    for request in held:
        request.aborted = True
        if request.transport is not None:
            request.transport.abort()  # a tab closed: RST, no goodbye
    print(json.dumps({"aborted": time.time()}), flush=True)
    with contextlib.suppress(asyncio.CancelledError):
        await responses  # cancelled above: retrieved, so nothing is logged at exit


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
