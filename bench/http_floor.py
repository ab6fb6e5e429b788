"""The route over HTTP against the server's own trivial routes, in one ``langgraph dev``.

Sequential requests on one keep-alive connection, interleaved in the same rounds:
``GET /ok`` (langgraph-api's health check: the server's floor for any request),
``GET /api/models`` (a trivial route of this app, through the same mount), the final
answer of an unchanged small thread (answer cached per head, as in real polling) and
``GET /threads/{id}/state``.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from bench import seed
from bench.timing import Sample, interleaved
from tests.support.servers import langgraph_dev

OK = "GET /ok"
MODELS = "GET /api/models"
ANSWER = "GET /api/threads/{id}/final-answer (unchanged)"
STATE = "GET /threads/{id}/state"
SIZE = 20


async def http_floor(work: Path, rounds: int = 200) -> dict[str, float]:
    """Medians per route, one small thread, one server."""
    with langgraph_dev(
        work / "http-floor",
        work / "http-floor-data",
        extra_graphs={"bench": "bench/graphs.py:make_bench_graph"},
    ) as server:
        thread_id = await seed.thread_via_server(server.url, "plain", SIZE)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:

            def get(path: str) -> Sample:
                async def sample() -> None:
                    (await http.get(path)).raise_for_status()

                return sample

            return await interleaved(
                {
                    OK: get("/ok"),
                    MODELS: get("/api/models"),
                    ANSWER: get(f"/api/threads/{thread_id}/final-answer"),
                    STATE: get(f"/threads/{thread_id}/state"),
                },
                rounds,
                warmup=20,
            )
