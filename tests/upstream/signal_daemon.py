"""signal-cli's daemon as upstream's Signal channel talks to it: JSON-RPC over TCP, one
JSON object a line. It delivers a message from a contact as a ``receive`` notification
and answers the channel's calls, keeping every ``send``: what ``EvoSci serve`` replied.
So upstream's real channel, in its real ``serve``, runs with no phone and no network.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

CONTACT = "+15550000001"


@dataclass
class SignalDaemon:
    account: str = "+15550000000"
    sent: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _clients: list[asyncio.StreamWriter] = field(default_factory=list)
    _new_send: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def __aenter__(self) -> SignalDaemon:
        self._server = await asyncio.start_server(self._serve, "localhost", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._clients:
            writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def connected(self, timeout: float, process: asyncio.subprocess.Process) -> None:
        """Until the channel holds its RPC connection: one that stays open (the channel
        probes with a connection it closes at once first)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        held_since: float | None = None
        while held_since is None or loop.time() - held_since < 1.0:
            assert process.returncode is None, "serve exited before its channel connected"
            assert loop.time() < deadline, f"no channel connected within {timeout} s"
            held_since = (held_since or loop.time()) if self._clients else None
            await asyncio.sleep(0.1)

    async def say(self, text: str, sender: str = CONTACT) -> None:
        """A message from ``sender`` to the account, as the daemon announces one."""
        stamp = int(time.time() * 1000)
        envelope = {
            "source": sender,
            "sourceNumber": sender,
            "sourceName": "Tester",
            "timestamp": stamp,
            "dataMessage": {"timestamp": stamp, "message": text},
        }
        line = json.dumps({"jsonrpc": "2.0", "method": "receive", "params": {"envelope": envelope}})
        for writer in self._clients:
            writer.write(line.encode() + b"\n")
            await writer.drain()

    def texts(self, recipient: str = CONTACT) -> list[str]:
        return [
            call.get("message", "")
            for call in self.sent
            if recipient in (call.get("recipient") or [])
        ]

    async def replied(self, predicate: Any, timeout: float) -> list[str]:
        """The texts sent to the contact once ``predicate(texts)`` holds."""
        async with self._new_send:
            await asyncio.wait_for(
                self._new_send.wait_for(lambda: predicate(self.texts())), timeout
            )
        return self.texts()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._clients.append(writer)
        try:
            while line := await reader.readline():
                try:
                    call = json.loads(line)
                except ValueError:
                    continue
                if call.get("method") == "send":
                    async with self._new_send:
                        self.sent.append(call.get("params") or {})
                        self._new_send.notify_all()
                if "id" in call:
                    result = {"timestamp": int(time.time() * 1000)}
                    reply = {"jsonrpc": "2.0", "id": call["id"], "result": result}
                    writer.write(json.dumps(reply).encode() + b"\n")
                    await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._clients.remove(writer)
