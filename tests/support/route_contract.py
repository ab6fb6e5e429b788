"""The final-answer route's contract as one case list, for any server that serves it.

Each case drives one server (the Python ``langgraph dev`` with the Python route, or the
JavaScript server with ``@evoscientist/final-answer/hono``) through the same steps on
the contract graph (tests/support/contract_graph.py and its twin
tests/jsserver/src/contract.ts), checks what docs/final-answer.md promises, and returns
what it saw with ids and times replaced by labels (``Seen``): the test runs each case on
both servers and asks for the same result.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from langgraph_sdk.client import LangGraphClient

from tests.support.bounds import HELD_WAIT_S, NOT_HELD_S
from tests.support.contract_graph import FAILURE, GRAPH_ID, QUESTION, SLOW, THINK, answer_for

Q = "What is a control group?"
UNKNOWN_ID = "00000000-0000-4000-8000-00000000c0de"
# The answer's metadata names the server it was read on: not part of the contract.
SERVER_FIELDS = ("source",)
TIME_FIELDS = ("completed_at", "updated_at")
ID_FIELDS = ("thread_id", "run_id", "checkpoint_id", "message_id")
# `wait=` answers once the run is over: within this of the server's own join. Each
# route hears of the end as the join does (a join, a change signal), not from a slow
# poll; what is left of the bound is room for a loaded machine.
WAIT_WITHIN_S = 1.5


def visible(answer: str) -> str:
    """The contract graph's answer as the route shows it: the inline reasoning cut."""
    return answer.split("</think>", 1)[-1]


@dataclass
class Route:
    """One server with the route: its API client and an HTTP client of its origin."""

    name: str
    api: LangGraphClient
    http: httpx.AsyncClient
    labels: dict[str, str] = field(default_factory=dict)

    def label(self, value: str, name: str) -> str:
        """Name an id once (``run 1``), so two servers' answers compare."""
        self.labels.setdefault(value, name)
        return value

    async def thread(self) -> str:
        thread_id = (await self.api.threads.create())["thread_id"]
        return self.label(thread_id, f"thread {len(self.labels) + 1}")

    async def start(self, thread_id: str, question: str, **kwargs: Any) -> str:
        run = await self.api.runs.create(
            thread_id,
            GRAPH_ID,
            input={"messages": [{"role": "human", "content": question}]},
            **kwargs,
        )
        return self.label(
            run["run_id"], f"run {sum(v.startswith('run') for v in self.labels.values()) + 1}"
        )

    async def ask(self, thread_id: str, question: str) -> str:
        """A run of ``question``, once the server has ended it."""
        run_id = await self.start(thread_id, question)
        await self.api.runs.join(thread_id, run_id)
        # The SDK's join may return early for a failed run: the run's own status decides.
        for _ in range(100):
            if (await self.api.runs.get(thread_id, run_id))["status"] not in ("pending", "running"):
                break
            await asyncio.sleep(0.05)
        return run_id

    async def until(self, thread_id: str, run_id: str, status: str) -> None:
        """Until the route reads ``status`` for the run (its first checkpoint written)."""
        for _ in range(200):
            response = await self.get(thread_id, run_id=run_id)
            if response.status_code == 200 and response.json()["status"] == status:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{self.name}: run {run_id} never read {status!r}")

    async def get(
        self,
        thread_id: str,
        *,
        headers: dict[str, str] | None = None,
        method: str = "GET",
        **params: Any,
    ) -> httpx.Response:
        return await self.http.request(
            method,
            f"/api/threads/{thread_id}/final-answer",
            params={k: v for k, v in params.items() if v is not None},
            headers=headers,
        )

    def seen(self, response: httpx.Response) -> dict[str, Any]:
        """What the response says, in labels: status code, the contract's headers, body."""
        seen: dict[str, Any] = {"http": response.status_code}
        if response.status_code == 304 or not response.content:
            return seen
        kind = response.headers["content-type"].split(";")[0]
        seen["type"] = kind
        if kind == "application/json":
            body = response.json()
            seen["body"] = (
                self.labelled(body)
                if "error" not in body or "status" in body
                else self.worded(body)
            )
        else:
            seen["body"] = response.text
            seen["headers"] = {
                name: self.labels.get(value, "<time>" if name == "x-answer-completed-at" else value)
                for name, value in response.headers.items()
                if name.startswith("x-answer-")
                and name not in ("x-answer-source",)
                and name != "x-answer-checkpoint-id"
            }
            seen["has_checkpoint_header"] = "x-answer-checkpoint-id" in response.headers
        return seen

    def worded(self, error: dict[str, Any]) -> dict[str, Any]:
        """An error body, the ids its messages quote replaced by their labels."""

        def words(text: str) -> str:
            for value, label in self.labels.items():
                text = text.replace(value, label)
            return text

        return {
            "detail": words(error["detail"]),
            "error": {**error["error"], "message": words(error["error"]["message"])},
        }

    def labelled(self, body: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in body.items() if k not in SERVER_FIELDS}
        for name in TIME_FIELDS:
            if out.get(name) is not None:
                out[name] = "<time>"
        for name in ID_FIELDS:
            value = out.get(name)
            if value is not None:
                out[name] = self.labels.get(value, f"<{name}>")
        if isinstance(out.get("error"), dict) and out["error"].get("code") == "run_failed":
            # The exception's type is the language's (RuntimeError, Error): its text is ours.
            out["error"] = {**out["error"], "message": out["error"]["message"].split(": ", 1)[-1]}
        if out.get("interrupts"):
            out["interrupts"] = [
                {**i, "id": "<id>" if i.get("id") else None} for i in out["interrupts"]
            ]
        return out


Case = Callable[[Route], Awaitable[Any]]
CASES: dict[str, Case] = {}


def case(function: Case) -> Case:
    CASES[function.__name__.removeprefix("case_")] = function
    return function


@case
async def case_unknown_thread(route: Route) -> Any:
    seen = [route.seen(await route.get(thread)) for thread in (UNKNOWN_ID, "deadbeef")]
    for one in seen:
        assert one["http"] == 404 and one["body"]["error"]["code"] == "thread_not_found", one
    return seen


@case
async def case_bad_requests(route: Route) -> Any:
    thread = await route.thread()
    queries = [
        {"wait": "abc"},
        {"wait": "61"},
        {"format": "xml"},
        {"include_reasoning": "maybe"},
    ]
    seen = [route.seen(await route.get(thread, **query)) for query in queries]
    seen.append(route.seen(await route.get("a%0Ab")))
    post = await route.get(thread, method="POST")
    seen.append({**route.seen(post), "allow": post.headers.get("allow")})
    twice = await route.http.get(f"/api/threads/{thread}/final-answer?run_id=a&run_id=b")
    seen.append(route.seen(twice))
    codes = [(one["http"], one["body"]["error"]["code"]) for one in seen]
    assert codes == [(422, "invalid_request")] * 5 + [(405, "method_not_allowed")] + [
        (422, "invalid_request")
    ], codes
    return seen


@case
async def case_finished_run(route: Route) -> Any:
    """A finished run: its answer, its inline reasoning cut (and given when asked for)."""
    thread = await route.thread()
    question = f"{Q} {THINK}"
    run = await route.ask(thread, question)
    answer = answer_for(question)
    assert answer.startswith("<think>")
    plain = route.seen(await route.get(thread))
    body = plain["body"]
    assert (body["status"], body["complete"]) == ("success", True), plain
    assert body["content"] == visible(answer), plain
    assert body["run_id"] == route.labels[run] and body["error"] is None and "reasoning" not in body
    reasoning = route.seen(await route.get(thread, include_reasoning="true"))
    assert reasoning["body"]["reasoning"] == f"Weighing: {question}"
    text = route.seen(await route.get(thread, format="text"))
    assert text["body"] == visible(answer)
    assert text["headers"]["x-answer-status"] == "success" and text["has_checkpoint_header"]
    return [plain, reasoning, text]


@case
async def case_run_scoping(route: Route) -> Any:
    thread = await route.thread()
    first = await route.ask(thread, f"{Q} (1)")
    await route.ask(thread, f"{Q} (2)")
    seen = [
        route.seen(await route.get(thread, run_id=first)),
        route.seen(await route.get(thread)),
        route.seen(await route.get(thread, run_id=UNKNOWN_ID)),
    ]
    assert seen[0]["body"]["content"] == visible(answer_for(f"{Q} (1)"))
    assert seen[1]["body"]["content"] == visible(answer_for(f"{Q} (2)"))
    assert (seen[2]["http"], seen[2]["body"]["error"]["code"]) == (404, "run_not_found")
    return seen


@case
async def case_etag(route: Route) -> Any:
    thread = await route.thread()
    await route.ask(thread, Q)
    first = await route.get(thread)
    etag = first.headers["etag"]
    same = await route.get(thread, headers={"If-None-Match": etag})
    text = await route.get(thread, format="text", headers={"If-None-Match": etag})
    assert (same.status_code, same.headers["etag"]) == (304, etag)
    assert text.status_code == 200 and text.headers["etag"] != etag
    await route.ask(thread, f"{Q} again")
    changed = await route.get(thread, headers={"If-None-Match": etag})
    assert changed.status_code == 200
    return [route.seen(same), route.seen(text)["http"], route.seen(changed)]


@case
async def case_failed_run(route: Route) -> Any:
    thread = await route.thread()
    await route.ask(thread, f"{Q} [fail]")
    seen = route.seen(await route.get(thread))
    body = seen["body"]
    assert (body["status"], body["complete"]) == ("error", True), (route.name, seen)
    assert body["error"]["code"] == "run_failed", (route.name, seen)
    assert body["error"]["message"] == FAILURE and body["content"] == "", (route.name, seen)
    return seen


@case
async def case_interrupted_run(route: Route) -> Any:
    thread = await route.thread()
    await route.ask(thread, f"{Q} [interrupt]")
    seen = route.seen(await route.get(thread))
    body = seen["body"]
    assert (body["status"], body["complete"]) == ("interrupted", True)
    assert [i["value"] for i in body["interrupts"]] == [QUESTION]
    return seen


@case
async def case_queued_then_cancelled(route: Route) -> Any:
    """A run queued behind a slow one is the latest turn, pending; both cancelled, each
    reads as cancelled."""
    thread = await route.thread()
    slow = await route.start(thread, f"{Q} {SLOW}")
    await route.until(thread, slow, "running")
    queued = await route.start(thread, f"{Q} (queued)", multitask_strategy="enqueue")
    seen = [
        route.seen(await route.get(thread, run_id=queued)),
        route.seen(await route.get(thread)),
    ]
    waiting, latest = (one["body"] for one in seen)
    assert (waiting["status"], waiting["run_id"]) == ("pending", route.labels[queued]), seen
    assert waiting["content"] == "" and waiting["checkpoint_id"] is None, seen
    # The latest turn is the slow run's until it ends: the queued one has not started.
    assert (latest["status"], latest["run_id"]) == ("running", route.labels[slow]), seen
    await route.api.runs.cancel(thread, queued, wait=True)
    await route.api.runs.cancel(thread, slow, wait=True)
    cancelled = route.seen(await route.get(thread, run_id=slow))
    assert cancelled["body"]["status"] == "error", cancelled
    assert cancelled["body"]["error"]["code"] == "run_cancelled", cancelled
    seen.append(cancelled)
    return seen


@case
async def case_cancelled_before_it_began(route: Route) -> Any:
    """A thread whose only run was cancelled before its first checkpoint (scheduled for
    later, cancelled first) reads that run's end at once, ``wait=`` too."""
    thread = await route.thread()
    run = await route.start(thread, f"{Q} (never began)", after_seconds=600)
    await route.api.runs.cancel(thread, run, wait=True)
    seen = []
    held = str(HELD_WAIT_S)
    for params in ({}, {"run_id": run}, {"wait": held}, {"run_id": run, "wait": held}):
        started = time.monotonic()
        one = route.seen(await route.get(thread, **params))
        assert time.monotonic() - started < NOT_HELD_S, f"{route.name}: {params} held"
        body = one["body"]
        assert (body["status"], body["complete"], body["content"]) == ("error", True, ""), (
            route.name,
            one,
        )
        assert body["error"]["code"] == "run_cancelled", (route.name, one)
        assert (body["run_id"], body["checkpoint_id"]) == (route.labels[run], None), one
        seen.append(one)
    return seen


@case
async def case_wait_returns_at_the_run_end(route: Route) -> Any:
    thread = await route.thread()
    run = await route.start(thread, f"{Q} {SLOW}")

    async def joined() -> float:
        await route.api.runs.join(thread, run)
        return time.monotonic()

    async def answered() -> tuple[float, httpx.Response]:
        response = await route.get(thread, run_id=run, wait="30")
        return time.monotonic(), response

    (join_at, (answer_at, response)) = await asyncio.gather(joined(), answered())
    seen = route.seen(response)
    assert (seen["body"]["status"], seen["body"]["complete"]) == ("success", True), (
        route.name,
        seen,
    )
    late = answer_at - join_at
    assert late < WAIT_WITHIN_S, f"{route.name}: wait= answered {late:.2f} s after the run's end"
    held = route.seen(await route.get(thread, run_id=run, wait="0.5"))
    return [seen, held]


def fresh_id() -> str:
    return str(uuid.uuid4())
