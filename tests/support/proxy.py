"""A fault-injecting TCP proxy for loopback tests, between a client and a real server.

It forwards bytes both ways and, on the connections a ``Fault`` targets, breaks the
server→client direction after a number of bytes: ``cut`` closes cleanly (FIN), ``reset``
aborts with an RST, ``stall`` keeps the connection open and forwards nothing more. Two
faults break a request before the server sees it: ``drop`` reads it and closes the
connection, never forwarding it; ``late`` closes the connection at once but delivers the
request to the server ``delay`` seconds later (a run made after the client gave up). A
connection is targeted by the first line of its first request (e.g. only run streams),
and only the first ``times`` such connections are, so a client's reconnect can succeed
(``times=None``: every one fails). ``lose-response`` targets requests instead, whichever
of a kept-alive connection's they are: each is let through and its connection cut as the
server begins to answer (a command that took effect unanswered). ``outage`` takes the
network away for a while: every open connection cut, every new one refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
import socket
import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.support.local_http import local_client

STREAM_REQUESTS = ("/runs/stream", "/stream")
REQUEST_LINE = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ HTTP/1\.[01]$")

# The faults every recovery client is put through on one run's stream: name → (kind,
# where), where an int is a byte offset and a float a fraction of the healthy stream.
STREAM_FAULTS: dict[str, tuple[str, float | int]] = {
    "cut-before-response": ("cut", 0),
    "cut-in-headers": ("cut", 120),
    "cut-early": ("cut", 0.2),
    "cut-mid": ("cut", 0.5),
    "cut-late": ("cut", 0.8),
    "cut-after-last-token": ("cut", 0.995),
    "reset-mid": ("reset", 0.5),
    "stall-mid": ("stall", 0.5),
}


def stream_position(where: float | int, total: int) -> int:
    """A ``STREAM_FAULTS`` place as a byte offset in a stream of ``total`` bytes."""
    return int(where * total) if isinstance(where, float) else where


@dataclass(frozen=True)
class Fault:
    kind: str = "none"  # none | cut | reset | stall | drop | late | lose-response
    after_bytes: int = 0
    times: int | None = 1
    match: tuple[str, ...] = STREAM_REQUESTS
    # Where later targeted connections (reconnects) break; default: same place.
    then_after_bytes: int | None = None
    # ``late``: seconds between the client's cut and the request reaching the server.
    delay: float = 0.0

    def budget(self, nth: int) -> int:
        """Bytes let through on the ``nth`` (1-based) targeted connection."""
        if nth > 1 and self.then_after_bytes is not None:
            return self.then_after_bytes
        return self.after_bytes

    def label(self) -> str:
        if self.kind == "none":
            return "no fault"
        every = "every stream" if self.times is None else f"{self.times} stream(s)"
        return f"{self.kind} after {self.after_bytes} B ({every})"


class _Connection:
    """One proxied connection, as its two directions share it: the request it carries
    now (``cut_open`` goes by it), and whether the response to come is to be lost."""

    def __init__(self, proxy: FaultProxy, client: asyncio.StreamWriter) -> None:
        self.proxy = proxy
        self.client = client
        self.lose = False

    def requested(self, chunk: bytes) -> None:
        """``chunk`` went up: if it begins a request (a client sends its next request
        only after the last answer), it is the connection's request now."""
        line = chunk.split(b"\r\n", 1)[0]
        if not REQUEST_LINE.match(line.decode("latin-1")):
            return
        self.proxy._open[self.client] = line + b"\r\n"
        self.lose = self.lose or self.proxy._loses(line.decode("latin-1"))


_CONNECTION: contextvars.ContextVar[_Connection] = contextvars.ContextVar("proxied_connection")


@dataclass
class ProxyStats:
    connections: int = 0
    # Connections the fault targeted, and the ones it actually broke (a budget beyond
    # the end of a response never breaks anything).
    faulted: int = 0
    fired: int = 0
    # Connections closed unread during an ``outage``.
    refused: int = 0
    # Bytes sent to the client so far, one entry per connection, updated as they flow.
    downstream_bytes: list[int] = field(default_factory=list)


class FaultProxy:
    def __init__(self, upstream_port: int, fault: Fault, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.fault = fault
        self.stats = ProxyStats()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        # Each open connection's client side, by the first line of its first request.
        self._open: dict[asyncio.StreamWriter, bytes] = {}
        self._down_until = 0.0
        # ``answer_late``: request-line markers → seconds their answers are held back.
        self._late: dict[str, float] = {}
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    def arm(self, fault: Fault) -> None:
        """From now on, ``fault``, its connections counted anew: one page's turns each
        broken their own way (or not at all)."""
        self.fault = fault
        self.stats.faulted = 0
        self.stats.fired = 0

    def outage(self, seconds: float) -> None:
        """For ``seconds`` from now the network is gone (a Wi-Fi change, a laptop lid, a
        proxy restart): every open connection is cut now, and every new one is closed
        before a byte of its request is read."""
        self._down_until = asyncio.get_running_loop().time() + seconds
        self.stats.fired += len(self._open)
        for writer in list(self._writers):
            writer.close()

    def answer_late(self, seconds: float, *markers: str) -> None:
        """From now on each connection whose first request line names one of ``markers``
        (a CORS preflight aside) reaches the server ``seconds`` late, so its answer comes
        that late: a slow read, as a loaded server or network makes it (on the browser
        tests' proxies every request has a connection of its own). ``answer_late(0)`` ends
        it."""
        self._late = {marker: seconds for marker in markers} if seconds > 0 else {}

    def cut_open(self) -> int:
        """Break now (FIN) every open connection whose latest request line the fault's
        ``match`` names: a stream that opened before its turn (an event stream kept for
        the thread), cut where the page stands. Returns how many were."""
        cut = 0
        for writer, first_line in list(self._open.items()):
            if any(marker in first_line.decode("latin-1") for marker in self.fault.match):
                writer.close()
                cut += 1
        self.stats.fired += cut
        return cut

    async def __aenter__(self) -> FaultProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _targets(self, first_line: bytes) -> bool:
        if self.fault.kind in ("none", "lose-response"):
            return False
        if self.fault.times is not None and self.stats.faulted >= self.fault.times:
            return False
        line = first_line.decode("latin-1")
        return any(marker in line for marker in self.fault.match)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        if asyncio.get_running_loop().time() < self._down_until:
            self.stats.refused += 1
            writer.close()
            self._tasks.discard(task)
            return
        self._writers.add(writer)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        except asyncio.CancelledError:
            # A handler task ends here when the proxy stops; asyncio's server callback
            # would log a cancelled handler as an error.
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stats.connections += 1
        first_line = await reader.readline()
        if not first_line:
            return
        self._open[writer] = first_line
        try:
            await self._forward(first_line, reader, writer)
        finally:
            self._open.pop(writer, None)

    async def _forward(
        self, first_line: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        budget: int | None = None
        if self._targets(first_line):
            self.stats.faulted += 1
            if self.fault.kind in ("drop", "late"):
                await self._intercept(first_line, reader, writer)
                return
            budget = self.fault.budget(self.stats.faulted)
        line = first_line.decode("latin-1")
        if not line.startswith("OPTIONS "):
            late = max((s for m, s in self._late.items() if m in line), default=0.0)
            if late:
                await asyncio.sleep(late)
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        self._writers.add(up_writer)
        # The pipe task and the downstream loop share this connection's state.
        connection = _Connection(self, writer)
        _CONNECTION.set(connection)
        connection.requested(first_line)
        up_writer.write(first_line)
        upstream = asyncio.create_task(self._pipe(reader, up_writer))
        slot = len(self.stats.downstream_bytes)
        self.stats.downstream_bytes.append(0)
        try:
            await self._downstream(up_reader, writer, budget, slot)
        finally:
            upstream.cancel()
            await asyncio.gather(upstream, return_exceptions=True)
            self._writers.discard(up_writer)
            up_writer.close()

    async def _intercept(
        self, first_line: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """``drop`` or ``late``: the whole request read, the client cut before any answer."""
        head = first_line + await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        request = head + await reader.readexactly(length)
        self.stats.fired += 1
        writer.close()
        if self.fault.kind == "drop":
            return
        await asyncio.sleep(self.fault.delay)
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        self._writers.add(up_writer)
        try:
            up_writer.write(request)
            await up_writer.drain()
            # Read the answer to its end, as a client that stays would: the run streams on.
            while await up_reader.read(65536):
                pass
        finally:
            self._writers.discard(up_writer)
            up_writer.close()

    def _loses(self, line: str) -> bool:
        """``lose-response``: whether the request ``line`` begins has its response lost."""
        if self.fault.kind != "lose-response" or not any(m in line for m in self.fault.match):
            return False
        if self.fault.times is not None and self.stats.faulted >= self.fault.times:
            return False
        self.stats.faulted += 1
        return True

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _CONNECTION.get(None)
        while chunk := await reader.read(65536):
            if connection is not None:
                connection.requested(chunk)
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    async def _downstream(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        budget: int | None,
        slot: int,
    ) -> int:
        connection = _CONNECTION.get(None)
        sent = 0
        if budget == 0:
            # "Before the response": only once the server has the whole request and has
            # begun to answer, so the run exists server-side while the client sees nothing.
            await reader.read(1)
        while True:
            if budget is not None and sent >= budget:
                await self._break(writer)
                return sent
            want = 65536 if budget is None else min(65536, budget - sent)
            chunk = await reader.read(want)
            if not chunk:
                return sent
            if connection is not None and connection.lose:
                await self._break(writer)
                return sent
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
            self.stats.downstream_bytes[slot] = sent

    async def _break(self, writer: asyncio.StreamWriter) -> None:
        self.stats.fired += 1
        kind = self.fault.kind
        if kind in ("cut", "lose-response"):
            writer.close()
        elif kind == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif kind == "stall":
            # Hold the connection open and silent until the client gives up.
            await asyncio.Event().wait()


async def measure_stream_bytes(
    upstream_port: int,
    thread_id: str,
    assistant_id: str,
    question: str,
    stream: Mapping[str, Any] | None = None,
) -> int:
    """How many bytes one healthy run stream sends, to place faults within it.

    One request on a connection of its own, shaped like the clients' own: a client that
    reuses the stream's keep-alive connection (the Python SDK asks for the run's status
    on it after a clean close) would add that answer's bytes to the count. ``stream``:
    the request's fields besides its input, as the client measured for sends them
    (default: the Python recovery client's).
    """
    if stream is None:
        stream = {
            "stream_mode": "messages-tuple",
            "stream_resumable": True,
            "metadata": {"recovery_request_id": str(uuid.uuid4())},
        }
    body = {
        "assistant_id": assistant_id,
        "input": {"messages": [{"role": "user", "content": question}]},
        **stream,
    }
    async with FaultProxy(upstream_port, Fault()) as proxy:
        async with (
            local_client(proxy.url, timeout=60) as http,
            http.stream("POST", f"/threads/{thread_id}/runs/stream", json=body) as response,
        ):
            response.raise_for_status()
            async for _ in response.aiter_bytes():
                pass
        return max(proxy.stats.downstream_bytes)
