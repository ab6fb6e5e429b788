"""Hold many long-polls from a process of its own, over raw sockets (no HTTP client),
so that the load generator's cost is not the server's.

``python -m bench.loadgen PORT`` reads one JSON list of request paths on its first
stdin line, opens one connection per path and sends each GET, then prints
``{"held": n}``. A later stdin line ``abort`` closes every connection at once (then
``{"aborted": time}``); otherwise, once every response is in, it prints
``{"results": [...]}``: per request its status, the time (``time.time()``) its response
ended, and the JSON body's ``complete``, ``content`` and ``completed_at``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from typing import Any

CONNECT_BATCH = 100


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def _one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> dict[str, Any]:
    head = await reader.readuntil(b"\r\n\r\n")
    received = time.time()
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        name.strip().lower(): value.strip()
        for name, _, value in (line.partition(":") for line in lines[1:] if line)
    }
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    received = time.time()
    writer.close()
    result: dict[str, Any] = {"status": status, "received": received}
    if status == 200:
        answer = json.loads(body)
        result.update(
            complete=answer["complete"],
            content=answer["content"],
            completed_at=answer["completed_at"],
        )
    return result


async def main(port: int) -> None:
    raise_fd_limit()
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    paths: list[str] = json.loads(await stdin.readline())
    connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    for start in range(0, len(paths), CONNECT_BATCH):
        batch = paths[start : start + CONNECT_BATCH]
        opened = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port) for _ in batch))
        for (_, writer), path in zip(opened, batch, strict=True):
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
            )
        connections.extend(opened)
    await asyncio.gather(*(writer.drain() for _, writer in connections))
    print(json.dumps({"held": len(connections)}), flush=True)

    responses = asyncio.ensure_future(
        asyncio.gather(*(_one(reader, writer) for reader, writer in connections))
    )
    command = asyncio.ensure_future(stdin.readline())
    await asyncio.wait((responses, command), return_when=asyncio.FIRST_COMPLETED)
    if responses.done():
        command.cancel()
        print(json.dumps({"results": responses.result()}), flush=True)
        return
    responses.cancel()
    await asyncio.gather(responses, return_exceptions=True)
    for _, writer in connections:
        writer.transport.abort()  # a tab closed: RST, no goodbye
    print(json.dumps({"aborted": time.time()}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
