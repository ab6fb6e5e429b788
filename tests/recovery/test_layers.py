"""Each layer's share: the same faults against (a) the bare SDK stream, (b) the SDK with
``stream_resumable=True``, (c) ``stream_with_recovery``, measured against the real
server's checkpoint answer.

Set ``EVOSCIENTIST_LAYER_TABLE=path`` to write the measured table as Markdown (``make
layer-table`` does, into docs/webui-integration.md's table file).
"""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import LangGraphError

from evoscientist_final_answer.recovery import stream_with_recovery
from evoscientist_final_answer.recovery.client import NO_REPLAY_WARNING
from evoscientist_final_answer.recovery.stream_text import StreamText
from tests.support.proxy import Fault, FaultProxy, measure_stream_bytes
from tests.support.servers import DevServer, langgraph_dev

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
STALL = 2.0
# name: (kind, where in the stream as a fraction of its bytes, how many streams are hit)
FAULTS: dict[str, tuple[str, float, int | None]] = {
    "no fault": ("none", 0.0, 1),
    "cut before the response": ("cut", 0.0, 1),
    "cut mid-stream": ("cut", 0.5, 1),
    "cut after the last token": ("cut", 0.995, 1),
    "reset (RST) mid-stream": ("reset", 0.5, 1),
    "stall mid-stream": ("stall", 0.5, 1),
    "cut mid-stream, every reconnect cut before its response": ("cut", 0.5, None),
}
LAYERS = ("bare SDK", "SDK + stream_resumable", "stream_with_recovery")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    root = tmp_path_factory.mktemp("layers")
    with langgraph_dev(
        root / "work",
        root / "data",
        env={"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"},
        args=("--n-jobs-per-worker", str(CONCURRENT_CASES)),
    ) as dev:
        yield dev


def ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


async def sdk_stream(url: str, thread_id: str, question: str, resumable: bool) -> dict[str, Any]:
    """What a UI accumulating the SDK's token stream would end up showing."""
    timeout = httpx.Timeout(connect=5.0, read=STALL, write=30.0, pool=5.0)
    client = get_client(url=url, api_key=None, timeout=timeout)
    text = StreamText()
    error: str | None = None
    try:
        async for part in client.runs.stream(
            thread_id,
            ASSISTANT,
            input=ask(question),
            stream_mode="messages-tuple",
            stream_resumable=resumable,
        ):
            text.feed(part.event, part.data)
    except (httpx.HTTPError, LangGraphError) as exc:
        error = type(exc).__name__
    finally:
        await client.aclose()
    return {"content": text.text, "run_id": text.run_id, "error": error}


async def recovery_client(url: str, thread_id: str, question: str) -> dict[str, Any]:
    result = await stream_with_recovery(
        url, thread_id, ASSISTANT, ask(question), stall_timeout=STALL, max_wait=60
    )
    return {"content": result["content"], "run_id": result["run_id"], "error": None}


async def truth_of(url: str, thread_id: str) -> str:
    async with httpx.AsyncClient(base_url=url, timeout=70) as http:
        body = (
            await http.get(f"/api/threads/{thread_id}/final-answer", params={"wait": 60})
        ).json()
    assert body["complete"], body
    return body["content"]


def verdict(shown: dict[str, Any], truth: str) -> str:
    content = shown["content"]
    suffix = f" ({shown['error']})" if shown["error"] else ""
    if content == truth:
        return "exact" + suffix
    if not content:
        return "nothing shown" + suffix
    if truth.startswith(content):
        return f"truncated: {len(content)}/{len(truth)} chars" + suffix
    return f"wrong: text with a hole, {len(content)}/{len(truth)} chars" + suffix


# Cases measured at once: each has its own proxy and thread, so they do not interact;
# the slow ones (the SDK retrying every cut reconnect for ~20 s) start first.
CONCURRENT_CASES = 9


async def measure_case(
    server: DevServer, name: str, layer: str, stream_bytes: int
) -> dict[str, Any]:
    """One fault against one layer: what it showed, checked against the truth."""
    kind, where, times = FAULTS[name]
    fault = Fault(
        kind=kind,
        after_bytes=int(where * stream_bytes),
        times=times,
        then_after_bytes=0 if times is None else None,
    )
    async with FaultProxy(server.port, fault) as proxy:
        sdk = get_client(url=server.url, api_key=None)
        thread_id = (await sdk.threads.create())["thread_id"]
        await sdk.aclose()
        question = f"{name} / {layer}: which baseline?"
        if layer == "stream_with_recovery":
            shown = await recovery_client(proxy.url, thread_id, question)
        else:
            resumable = layer != "bare SDK"
            shown = await sdk_stream(proxy.url, thread_id, question, resumable)
        truth = await truth_of(server.url, thread_id)
        assert kind == "none" or proxy.stats.fired >= 1, (name, layer)
    return {"verdict": verdict(shown, truth)}


async def measure(server: DevServer, stream_bytes: int) -> dict[str, dict[str, str]]:
    """Every fault against every layer.

    The cases share the process's one warnings state (``warnings.catch_warnings`` is
    not task-local), so the SDK's warnings are kept in here, and the one this table is
    about is checked alone, in ``bare_sdk_warnings``."""
    cases = sorted(
        ((name, layer) for name in FAULTS for layer in LAYERS),
        key=lambda case: FAULTS[case[0]][2] is not None,
    )
    slots = asyncio.Semaphore(CONCURRENT_CASES)

    async def bounded(name: str, layer: str) -> dict[str, Any]:
        async with slots:
            return await measure_case(server, name, layer, stream_bytes)

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        results = await asyncio.gather(*(bounded(name, layer) for name, layer in cases))
    measured = dict(zip(cases, results, strict=True))
    return {name: {layer: measured[name, layer]["verdict"] for layer in LAYERS} for name in FAULTS}


async def bare_sdk_warnings(server: DevServer, stream_bytes: int) -> list[str]:
    """The warnings of one bare SDK stream cut mid-stream, measured alone."""
    fault = Fault(kind="cut", after_bytes=stream_bytes // 2)
    async with FaultProxy(server.port, fault) as proxy:
        sdk = get_client(url=server.url, api_key=None)
        thread_id = (await sdk.threads.create())["thread_id"]
        await sdk.aclose()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await sdk_stream(proxy.url, thread_id, "cut alone: which baseline?", False)
        assert proxy.stats.fired >= 1
    return [str(w.message) for w in caught]


def markdown(table: dict[str, dict[str, str]]) -> str:
    lines = ["| fault | " + " | ".join(LAYERS) + " |", "|---" * (len(LAYERS) + 1) + "|"]
    for name, row in table.items():
        lines.append(f"| {name} | " + " | ".join(row[layer] for layer in LAYERS) + " |")
    return "\n".join(lines) + "\n"


def test_only_the_route_makes_every_fault_exact(server: DevServer) -> None:
    async def run() -> tuple[dict[str, dict[str, str]], list[str]]:
        sdk = get_client(url=server.url, api_key=None)
        thread_id = (await sdk.threads.create())["thread_id"]
        await sdk.aclose()
        stream_bytes = await measure_stream_bytes(server.port, thread_id, ASSISTANT, "baseline")
        return await measure(server, stream_bytes), await bare_sdk_warnings(server, stream_bytes)

    table, bare_warnings = asyncio.run(run())
    if target := os.environ.get("EVOSCIENTIST_LAYER_TABLE"):
        Path(target).write_text(markdown(table))
    print("\n" + markdown(table))

    assert all(row["stream_with_recovery"] == "exact" for row in table.values()), table
    assert table["no fault"]["bare SDK"] == "exact"
    # Without the route, some fault leaves the user with the wrong text.
    assert any(not row["bare SDK"].startswith("exact") for row in table.values()), table
    assert any(not row["SDK + stream_resumable"].startswith("exact") for row in table.values())
    # The bare SDK says it reconnected without replaying what it missed: the gap the
    # route closes.
    assert any(NO_REPLAY_WARNING in message for message in bare_warnings), bare_warnings
