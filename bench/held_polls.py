"""The bench's handle on ``bench.loadgen``: a process of its own that holds one
raw connection per long-poll (so its cost is not the server's), hands back every
response's arrival time, or aborts them all at once."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


class LoadGen:
    """``bench.loadgen`` in its own process: it holds one connection per path."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def hold(cls, port: int, paths: list[str]) -> LoadGen:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.loadgen",
            str(port),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(paths).encode() + b"\n")
        await process.stdin.drain()
        loadgen = cls(process)
        held = await loadgen._line()
        assert held["held"] == len(paths), held
        return loadgen

    async def _line(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        if not line:
            raise RuntimeError("the load generator died")
        return json.loads(line)

    async def results(self) -> list[dict[str, Any]]:
        results = (await self._line())["results"]
        await self.process.wait()
        return results

    async def abort(self) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(b"abort\n")
        await self.process.stdin.drain()
        aborted = (await self._line())["aborted"]
        await self.process.wait()
        return aborted
