"""The route's ``format=text`` headers carry any value a checkpoint holds.

A writer outside the API (the TUI, a script) may stamp any ``run_id``. Served by a real
uvicorn (whose HTTP parser refuses a header holding CR/LF, so the whole reply was lost),
on both stores; the polls parked on such a thread get their answer too.
"""

from __future__ import annotations

import asyncio
from urllib.parse import unquote

import httpx
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from evoscientist_final_answer.answer.result import FinalAnswer
from evoscientist_final_answer.answer.status import RunStatus
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.openapi import openapi_document
from evoscientist_final_answer.http.responses import header_safe, text_answer
from evoscientist_final_answer.http.routes import FINAL_ANSWER_PATH
from evoscientist_final_answer.http.service import FinalAnswerService
from tests.http.longpoll.test_waiting import reached
from tests.support.seeds import Seeder, answer, gated, node_graph, route
from tests.support.servers import listening

pytestmark = pytest.mark.backends("sqlite", "postgres")

# ASCII, so no step before encoding sees anything to escape in it.
ODD_RUN_ID = "run\r\nX-Injected: yes\x1b\t 100%"
PARKED = 3


@pytest.mark.parametrize(
    "value",
    [
        ODD_RUN_ID,
        "é\U0001f600 and\r\n",
        "plain-uuid-1234",
        "a b",
        "50%",
        "\x7f\x80",
        "a\nb",
        "/?#[]@!$&'()*+,;=\"<>",
    ],
)
def test_header_values_are_visible_ascii_and_reversible(value: str) -> None:
    encoded = header_safe(value)
    assert all(0x21 <= ord(c) <= 0x7E for c in encoded)
    assert unquote(encoded) == value


def test_visible_ascii_other_than_percent_is_kept() -> None:
    visible = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")
    assert header_safe(visible) == visible


async def test_a_run_id_with_cr_lf_is_served_as_text(seeder: Seeder) -> None:
    thread = seeder.thread(node_graph(seeder.saver, [("agent", answer("the answer"))]))
    await seeder.run(thread, {"messages": [HumanMessage("q")]}, run_id=ODD_RUN_ID)
    service = FinalAnswerService(seeder.store.reader(), None)
    try:
        async with (
            listening(create_app(lambda: service)) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
        ):
            response = await http.get(route(thread.thread_id), params={"format": "text"})
            assert response.status_code == 200
            assert response.text == "the answer"
            assert "x-injected" not in response.headers
            assert unquote(response.headers["x-answer-run-id"]) == ODD_RUN_ID
            json_body = (await http.get(route(thread.thread_id))).json()
            assert json_body["run_id"] == ODD_RUN_ID
    finally:
        await service.close()


async def test_parked_text_polls_on_such_a_thread_get_the_answer(seeder: Seeder) -> None:
    gate = asyncio.Event()
    graph = node_graph(
        seeder.saver,
        [("start", lambda s: {"messages": [AIMessage("working")]}), ("one", gated(gate, "done"))],
    )
    thread = seeder.thread(graph)
    run = asyncio.create_task(
        seeder.run(thread, {"messages": [HumanMessage("q")]}, run_id=ODD_RUN_ID)
    )
    service = FinalAnswerService(seeder.store.reader(), None)
    try:
        await reached(thread, ("one",))
        async with (
            listening(create_app(lambda: service)) as port,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http,
        ):
            params = {"format": "text", "wait": 20}
            polls = [
                asyncio.create_task(http.get(route(thread.thread_id), params=params))
                for _ in range(PARKED)
            ]
            await asyncio.sleep(0.3)
            gate.set()
            await run
            for response in await asyncio.gather(*polls):
                assert response.status_code == 200
                assert response.text == "done"
                assert response.headers["x-answer-status"] == "success"
                assert unquote(response.headers["x-answer-run-id"]) == ODD_RUN_ID
    finally:
        gate.set()
        await run
        await service.close()


def test_the_openapi_document_names_every_header_of_a_text_answer() -> None:
    """Every ``X-Answer-*`` header a text answer can carry is documented, the ones that
    carry stored values with their percent-encoding."""
    failed = FinalAnswer(
        thread_id="t",
        status=RunStatus.ERROR,
        content="partial",
        run_id=ODD_RUN_ID,
        checkpoint_id="c",
        updated_at="2026-12-01T00:00:00+00:00",
        error={"code": "tool_failed", "message": "boom"},
    )
    sent = {k.lower() for k in text_answer(failed, '"e"').headers if k.startswith("x-answer")}
    documented = openapi_document()["paths"][FINAL_ANSWER_PATH]["get"]["responses"]["200"]
    headers = {name.lower(): spec for name, spec in documented["headers"].items()}
    assert sent and sent <= headers.keys()
    for name in ("x-answer-run-id", "x-answer-checkpoint-id", "x-answer-error"):
        assert "percent-encoded" in headers[name]["description"]
