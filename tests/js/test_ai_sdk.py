"""The AI SDK's transport (``@evoscientist/final-answer/ai-sdk``:
``LangGraphChatTransport``) on the project's ``langgraph dev``, in node
(clients/js/test/live/ai-sdk.test.mjs): its chunks read by the AI SDK's own
``readUIMessageStream`` through a cut mid-answer whose every rejoin is cut too, a cut
before the response and a stall; a new transport resuming a run whose consumer went
away; a chat the server does not know; a Stop. Read by each `ai` of
``jstools.AI_VERSIONS`` (the lockfile's, and the major before it), the two side by side.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support import jstools
from tests.support.proxy import Fault, FaultProxy, measure_stream_bytes
from tests.support.servers import DevServer, langgraph_dev, new_thread

pytestmark = pytest.mark.e2e

ASSISTANT = "EvoScientist"
SERVER_ENV = {"EVOSCIENTIST_OFFLINE_TOKEN_DELAY": "0.01"}
# Same shape as the node test's questions, so fractions of this stream fall alike.
BASELINE_QUESTION = "AI SDK cut mid-answer, every rejoin cut 00000000: what should the control be?"
MID = 0.7  # of a healthy stream's bytes: inside the answer's tokens
NODE_TIMEOUT = 180.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    jstools.node()
    root = tmp_path_factory.mktemp("ai-sdk")
    with langgraph_dev(root / "work", root / "data", env=SERVER_ENV) as dev:
        yield dev


async def test_the_transport_in_node(server: DevServer) -> None:
    thread_id = await new_thread(server.url)
    total = await measure_stream_bytes(server.port, thread_id, ASSISTANT, BASELINE_QUESTION)
    envs = {version: jstools.ai_env(version) for version in jstools.AI_VERSIONS}
    runs = [await _node(server, total, version, env) for version, env in envs.items()]
    for version, (code, output, proxies) in zip(envs, runs, strict=True):
        report = {name: vars(proxy.stats) for name, proxy in proxies.items()}
        context = f"ai {version}; baseline {total} B; proxies {json.dumps(report)}\n{output}"
        jstools.check_node_test(code, output, proxies, context)


async def _node(
    server: DevServer, total: int, version: str, env: dict[str, str]
) -> tuple[int, str, dict[str, FaultProxy]]:
    """clients/js/test/live/ai-sdk.test.mjs read with ``ai`` ``version``, through
    proxies of its own."""
    mid = int(MID * total)
    faults = {
        "cut mid-answer, every rejoin cut": Fault("cut", mid, times=None, then_after_bytes=0),
        "cut before the response": Fault("cut", 0),
        "stall mid-answer": Fault("stall", mid),
    }
    proxies = {name: await FaultProxy(server.port, fault).start() for name, fault in faults.items()}
    try:
        code, output = await jstools.run_node_test(
            jstools.PACKAGE / "test" / "live" / "ai-sdk.test.mjs",
            {
                **env,
                "EVOSCI_AI_VERSION": version,
                "EVOSCI_AI_SERVER_URL": server.url,
                "EVOSCI_AI_ASSISTANT": ASSISTANT,
                "EVOSCI_AI_PROXIES": json.dumps({n: p.url for n, p in proxies.items()}),
            },
            NODE_TIMEOUT,
        )
    finally:
        for proxy in proxies.values():
            await proxy.stop()
    return code, f"--- node --test ---\n{output}", proxies
