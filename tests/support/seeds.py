"""Seed real checkpoint stores by running real compiled langgraph graphs (nothing hand-built
or mocked), on ``sessions.db`` or PostgreSQL (``Store``); the expected answer comes from
the same graph's ``aget_state`` (``expected_answer``), not from a literal only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

import httpx
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import _messages_delta_reducer, add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Overwrite, StateSnapshot, interrupt
from starlette.applications import Starlette
from typing_extensions import TypedDict

from EvoScientist.agent import build_graph
from EvoScientist.offline_model import OfflineChatModel
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import READ_DEADLINE_SECONDS, FinalAnswerService
from evoscientist_final_answer.settings import POSTGRES_SCHEMES
from evoscientist_final_answer.store.base import CheckpointAnswerReader
from evoscientist_final_answer.store.sqlite.reader import SqliteAnswerReader

AGENT_NAME = "EvoScientist"
OTHER_AGENT = "ReviewerAgent"
ROUTE = "/api/threads/{thread_id}/final-answer"

MessagesMode = Literal["add_messages", "delta"]
Reply = AIMessage | str
Backend = Literal["sqlite", "postgres"]
BACKENDS: tuple[Backend, ...] = ("sqlite", "postgres")


# --------------------------------------------------------------------------- stores


@dataclass(frozen=True)
class Store:
    """Where seeded checkpoints live: a ``sessions.db`` file, or a PostgreSQL database
    (what ``EVOSCIENTIST_DATABASE_URI`` points the servers at)."""

    backend: Backend
    location: str  # the file's path, or the database's postgresql:// URI

    @classmethod
    def of(cls, target: Store | Path | str) -> Store:
        if isinstance(target, Store):
            return target
        text = str(target)
        return cls("postgres" if text.startswith(POSTGRES_SCHEMES) else "sqlite", text)

    @property
    def path(self) -> Path:
        """The ``sessions.db`` file (SQLite stores only)."""
        if self.backend != "sqlite":
            raise TypeError(f"a {self.backend} store has no file")
        return Path(self.location)

    @property
    def uri(self) -> str:
        """The database's URI (PostgreSQL stores only)."""
        if self.backend != "postgres":
            raise TypeError(f"a {self.backend} store has no database URI")
        return self.location

    def reader(self, agent_name: str = AGENT_NAME, **options: Any) -> CheckpointAnswerReader:
        """The route's direct reader of this store."""
        if self.backend == "postgres":
            from evoscientist_final_answer.store.postgres.reader import PostgresAnswerReader

            return PostgresAnswerReader(self.uri, agent_name, **options)
        return SqliteAnswerReader(self.path, agent_name, **options)


# --------------------------------------------------------------------------- states


class AddMessagesState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class DeltaState(TypedDict):
    """Messages in a ``DeltaChannel`` that snapshots every other update, so most
    checkpoints hold no messages and the reader must replay writes."""

    messages: Annotated[
        list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=2)
    ]


def state_schema(mode: MessagesMode) -> type:
    return DeltaState if mode == "delta" else AddMessagesState


# --------------------------------------------------------------------------- ids


# Two updates before the first turn: see ``Seeder.chat``.
DELTA_PREAMBLE: tuple[BaseMessage, ...] = (
    SystemMessage("You are EvoScientist, a research assistant."),
    AIMessage("Hello! What would you like to research?"),
)


def uuid_thread_id() -> str:
    """A langgraph-dev style thread id."""
    return str(uuid.uuid4())


def hex8_thread_id() -> str:
    """A TUI style session id."""
    return uuid.uuid4().hex[:8]


def new_run_id() -> str:
    return str(uuid.uuid4())


# --------------------------------------------------------------------------- oracle


def visible_text(message: BaseMessage) -> str:
    """``message.text`` without a leading inline ``<think>…</think>`` block."""
    text = message.text
    stripped = text.lstrip()
    if not stripped.startswith("<think>"):
        return text
    end = stripped.find("</think>")
    return "" if end < 0 else stripped[end + len("</think>") :].lstrip()


def expected_message(snapshot: StateSnapshot) -> AIMessage | None:
    """The answering message per the contract, computed from ``aget_state`` values.

    The last AIMessage with visible text after the last HumanMessage with text; none
    while the newest input still waits in ``__start__`` (its turn has not begun).
    """
    if "__start__" in snapshot.next:
        return None
    messages: Sequence[BaseMessage] = (snapshot.values or {}).get("messages", [])
    start = 0
    for index, message in enumerate(messages):
        if isinstance(message, HumanMessage) and message.text.strip():
            start = index + 1
    answers = [m for m in messages[start:] if isinstance(m, AIMessage) and visible_text(m).strip()]
    return answers[-1] if answers else None


def expected_answer(snapshot: StateSnapshot) -> str:
    message = expected_message(snapshot)
    return "" if message is None else visible_text(message)


def checkpoint_id_of(snapshot: StateSnapshot) -> str:
    return snapshot.config["configurable"]["checkpoint_id"]


# --------------------------------------------------------------------------- threads


@dataclass
class SeededThread:
    """A thread written by a real graph: everything a test needs to check an answer."""

    store: Store
    thread_id: str
    graph: CompiledStateGraph
    run_ids: list[str] = field(default_factory=list)
    # ``aget_state`` right after each run, and the graph that made the run, by run id.
    snapshots: dict[str, StateSnapshot] = field(default_factory=dict)
    graphs: dict[str, CompiledStateGraph] = field(default_factory=dict)
    label: str = ""

    @property
    def db_path(self) -> Path:
        return self.store.path

    @property
    def config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread_id}}

    @property
    def last_run_id(self) -> str:
        return self.run_ids[-1]

    async def state(self) -> StateSnapshot:
        """langgraph's own view of the thread now (the writer must still be open)."""
        return await self.graph.aget_state(self.config)

    async def expected(self) -> str:
        return expected_answer(await self.state())

    def graph_at(self, metadata: Mapping[str, Any]) -> CompiledStateGraph:
        """The graph that wrote a checkpoint with this metadata (a thread may be run
        by more than one graph); checkpoints outside any run belong to the first."""
        run_id = metadata.get("run_id")
        if run_id in self.graphs:
            return self.graphs[run_id]
        return next(iter(self.graphs.values()), self.graph)


# --------------------------------------------------------------------------- graphs


def scripted_graph(
    saver: BaseCheckpointSaver,
    replies: Iterable[Reply],
    *,
    mode: MessagesMode = "add_messages",
    **compile_kwargs: Any,
) -> CompiledStateGraph:
    """``START → agent``; each run the agent answers with the next scripted reply."""
    model = GenericFakeChatModel(messages=iter(list(replies)))

    async def agent(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    builder = StateGraph(state_schema(mode))
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    return builder.compile(checkpointer=saver, **compile_kwargs)


def node_graph(
    saver: BaseCheckpointSaver,
    nodes: Sequence[tuple[str, Callable[..., Any]]],
    *,
    mode: MessagesMode = "add_messages",
    **compile_kwargs: Any,
) -> CompiledStateGraph:
    """``START → n1 → n2 → …`` over a messages state."""
    builder = StateGraph(state_schema(mode))
    previous = START
    for name, fn in nodes:
        builder.add_node(name, fn)
        builder.add_edge(previous, name)
        previous = name
    return builder.compile(checkpointer=saver, **compile_kwargs)


def agent_graph(saver: BaseCheckpointSaver, **compile_kwargs: Any) -> CompiledStateGraph:
    """The project's agent (DeltaChannel messages, tool node) with the offline model."""
    return build_graph(OfflineChatModel(token_delay=0), checkpointer=saver, **compile_kwargs)


def answer(content: Any, **kwargs: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A node that answers with one AIMessage of the given content."""

    def node(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(content=content, **kwargs)]}

    return node


def asking(value: Any, answer_prefix: str = "approved: ") -> Callable[..., dict[str, Any]]:
    """A node that pauses the run with a dynamic ``interrupt(value)``."""

    def node(state: dict[str, Any]) -> dict[str, Any]:
        reply = interrupt(value)
        return {"messages": [AIMessage(f"{answer_prefix}{reply}")]}

    return node


def raising(message: str) -> Callable[..., dict[str, Any]]:
    def node(state: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(message)

    return node


def gated(gate: asyncio.Event, content: str) -> Callable[..., Awaitable[dict[str, Any]]]:
    """A node that answers only once ``gate`` is set: a run caught mid-way."""

    async def node(state: dict[str, Any]) -> dict[str, Any]:
        await gate.wait()
        return {"messages": [AIMessage(content)]}

    return node


def model_call_cancelled() -> Callable[..., Awaitable[dict[str, Any]]]:
    """A node whose model call is cancelled under it (the TUI's Ctrl-C handler cancels
    the call's task): the node body raises ``CancelledError``."""

    async def node(state: dict[str, Any]) -> dict[str, Any]:
        call = asyncio.ensure_future(asyncio.Event().wait())  # a model call that hangs
        asyncio.get_running_loop().call_later(0.01, call.cancel)
        await call
        return {"messages": [AIMessage("never")]}

    return node


TIDY_UP_TOOL_CALL_ID = "call-tidy-1"


def failing_turn_graph(
    saver: BaseCheckpointSaver,
    first_answer: str,
    failure: Literal["model", "tool"],
    message: str,
    *,
    mode: MessagesMode = "delta",
) -> CompiledStateGraph:
    """``agent`` ⇄ ``tools`` as the EvoScientist agent is built: the first turn answers
    ``first_answer``; on the second the model raises (``failure="model"``), or calls a
    tool that raises (``"tool"``)."""
    turns = {"n": 0}

    async def agent(state: dict[str, Any]) -> dict[str, Any]:
        turns["n"] += 1
        if turns["n"] == 1:
            return {"messages": [AIMessage(first_answer)]}
        if failure == "model":
            raise RuntimeError(message)
        call = {"name": "search_notes", "args": {"query": "q"}, "id": TIDY_UP_TOOL_CALL_ID}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    def tools(state: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError(message)

    def route(state: dict[str, Any]) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(state_schema(mode))
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


async def tidy_up_after_failure(graph: CompiledStateGraph, thread_id: str) -> None:
    """What the EvoScientist TUI writes after a failed turn, so the next one starts
    cleanly: a tool message closing each dangling tool call (as the ``tools`` node), then
    the pending node cleared (``as_node=END``). No run id: the TUI stamps none."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    snapshot = await graph.aget_state(config)
    answered = {m.tool_call_id for m in snapshot.values["messages"] if isinstance(m, ToolMessage)}
    dangling = [
        call
        for m in snapshot.values["messages"]
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]
    if dangling:
        closing = [
            ToolMessage("Tool call interrupted by an error.", tool_call_id=c["id"], name=c["name"])
            for c in dangling
        ]
        await graph.aupdate_state(config, {"messages": closing}, as_node="tools")
    await graph.aupdate_state(config, None, as_node=END)


SUBGRAPH_DRAFT = "SUBGRAPH DRAFT: never the thread's answer"
SUBGRAPH_QUESTION = "review the draft?"


def subgraph_parent(saver: BaseCheckpointSaver, final: str) -> CompiledStateGraph:
    """``research`` (a subgraph that drafts, then interrupts for review) → ``final``.

    While the subgraph waits, its own checkpoints (``checkpoint_ns`` ≠ ``''``) are the
    newest rows of the thread and hold an AI draft; the root holds none.
    """
    sub = StateGraph(AddMessagesState)
    sub.add_node("draft", answer(SUBGRAPH_DRAFT))
    sub.add_node("review", asking(SUBGRAPH_QUESTION, answer_prefix="reviewed: "))
    sub.add_edge(START, "draft")
    sub.add_edge("draft", "review")
    parent = StateGraph(AddMessagesState)
    parent.add_node("research", sub.compile())
    parent.add_node("final", answer(final))
    parent.add_edge(START, "research")
    parent.add_edge("research", "final")
    return parent.compile(checkpointer=saver)


def join_graph(
    saver: BaseCheckpointSaver, gate: asyncio.Event | None = None, **compile_kwargs: Any
):
    """``START → (left, right) → summary`` with ``add_edge(["left", "right"], "summary")``.

    Once both branches ran, the only trace of the pending ``summary`` in the checkpoint
    is a full ``join:left+right:summary`` barrier (no ``branch:to:summary``).
    """
    builder = StateGraph(AddMessagesState)
    builder.add_node("left", answer("left branch"))
    builder.add_node("right", answer("right branch"))
    summary = gated(gate, "joined summary") if gate is not None else answer("joined summary")
    builder.add_node("summary", summary)
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge(["left", "right"], "summary")
    return builder.compile(checkpointer=saver, **compile_kwargs)


# --------------------------------------------------------------------------- reasoning


@dataclass(frozen=True)
class ReasoningCase:
    """An AI reply carrying reasoning in one provider's format."""

    name: str
    message: AIMessage
    text: str  # the user-visible answer
    reasoning: str  # reasoning text include_reasoning must surface ("" if none readable)
    hidden: str  # a marker that must never appear in ``content``


REASONING_CASES: tuple[ReasoningCase, ...] = (
    ReasoningCase(
        "lc_v1_reasoning",
        AIMessage(
            content=[
                {"type": "reasoning", "reasoning": "LCV1-THOUGHT: weigh the options"},
                {"type": "text", "text": "LC v1 answer."},
            ]
        ),
        "LC v1 answer.",
        "LCV1-THOUGHT: weigh the options",
        "LCV1-THOUGHT",
    ),
    ReasoningCase(
        "anthropic_thinking",
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "ANTH-THOUGHT: check units", "signature": "sig"},
                {"type": "text", "text": "Anthropic answer."},
            ],
            response_metadata={"model_provider": "anthropic"},
        ),
        "Anthropic answer.",
        "ANTH-THOUGHT: check units",
        "ANTH-THOUGHT",
    ),
    ReasoningCase(
        "anthropic_thinking_no_provider",
        AIMessage(
            content=[
                {"type": "thinking", "thinking": "RAWANTH-THOUGHT: recheck", "signature": "s"},
                {"type": "text", "text": "Raw thinking answer."},
            ]
        ),
        "Raw thinking answer.",
        "RAWANTH-THOUGHT: recheck",
        "RAWANTH-THOUGHT",
    ),
    ReasoningCase(
        "anthropic_redacted_thinking",
        AIMessage(
            content=[
                {"type": "redacted_thinking", "data": "REDACTED-BLOB-123"},
                {"type": "text", "text": "Redacted answer."},
            ],
            response_metadata={"model_provider": "anthropic"},
        ),
        "Redacted answer.",
        "",
        "REDACTED-BLOB",
    ),
    ReasoningCase(
        "openai_reasoning_summary",
        AIMessage(
            content=[
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [
                        {"type": "summary_text", "text": "OAI-SUMMARY-1: plan"},
                        {"type": "summary_text", "text": "OAI-SUMMARY-2: verify"},
                    ],
                },
                {"type": "text", "text": "OpenAI answer."},
            ],
            response_metadata={"model_provider": "openai"},
        ),
        "OpenAI answer.",
        "OAI-SUMMARY-1: plan",
        "OAI-SUMMARY",
    ),
    ReasoningCase(
        "inline_think",
        AIMessage(content="<think>THINK-TAG: recall the formula</think>\n\nInline answer."),
        "Inline answer.",
        "THINK-TAG: recall the formula",
        "THINK-TAG",
    ),
    ReasoningCase(
        "deepseek_reasoning_content",
        AIMessage(
            content="DeepSeek answer.",
            additional_kwargs={"reasoning_content": "DS-THOUGHT: derive it"},
        ),
        "DeepSeek answer.",
        "DS-THOUGHT: derive it",
        "DS-THOUGHT",
    ),
    ReasoningCase(
        "offline_reasoning_then_text_blocks",
        AIMessage(
            content=[
                {"type": "reasoning", "reasoning": "OFF-THOUGHT ", "index": 0},
                {"type": "text", "text": "Block one, ", "index": 1},
                {"type": "text", "text": "block two.", "index": 2},
            ]
        ),
        "Block one, block two.",
        "OFF-THOUGHT",
        "OFF-THOUGHT",
    ),
)


# --------------------------------------------------------------------------- seeder


class Seeder:
    """Runs real graphs on one checkpointer (``AsyncSqliteSaver`` or
    ``AsyncPostgresSaver``) and records what it wrote."""

    def __init__(self, store: Store | Path | str, saver: BaseCheckpointSaver) -> None:
        self.store = Store.of(store)
        self.saver = saver
        self.threads: list[SeededThread] = []

    @property
    def db_path(self) -> Path:
        """The ``sessions.db`` file (SQLite stores only)."""
        return self.store.path

    # -- running

    def run_config(
        self, thread_id: str, run_id: str, agent_name: str | None = None
    ) -> RunnableConfig:
        metadata: dict[str, Any] = {"run_id": run_id}
        if agent_name is not None:
            metadata["agent_name"] = agent_name
        return {"configurable": {"thread_id": thread_id}, "metadata": metadata}

    async def run(
        self,
        thread: SeededThread,
        graph_input: Any,
        *,
        graph: CompiledStateGraph | None = None,
        run_id: str | None = None,
        agent_name: str | None = None,
        expect_error: bool = False,
        durability: Literal["sync", "async", "exit"] | None = None,
    ) -> str:
        """One run of ``graph`` (default: the thread's) tagged with ``run_id``.

        ``durability="sync"`` writes each checkpoint before the next step starts (the
        default, ``"async"``, may serialise a channel a step late).
        """
        graph = graph or thread.graph
        run_id = run_id or new_run_id()
        config = self.run_config(thread.thread_id, run_id, agent_name)
        try:
            await graph.ainvoke(graph_input, config, durability=durability)
        except Exception:
            if not expect_error:
                raise
        else:
            if expect_error:
                raise AssertionError("the run was expected to raise")
        thread.graph = graph
        thread.run_ids.append(run_id)
        thread.graphs[run_id] = graph
        thread.snapshots[run_id] = await graph.aget_state(thread.config)
        return run_id

    def thread(
        self, graph: CompiledStateGraph, thread_id: str | None = None, label: str = ""
    ) -> SeededThread:
        thread = SeededThread(self.store, thread_id or uuid_thread_id(), graph, label=label)
        self.threads.append(thread)
        return thread

    # -- scenarios

    async def chat(
        self,
        replies: Sequence[Reply],
        *,
        questions: Sequence[str] | None = None,
        mode: MessagesMode = "add_messages",
        thread_id: str | None = None,
        agent_name: str | None = None,
        preamble: Sequence[BaseMessage] = (),
    ) -> SeededThread:
        """One completed turn per reply: human question, scripted AI answer.

        ``preamble`` messages are written first, one ``aupdate_state`` each. Two of them
        shift a ``DeltaChannel``'s snapshots (every other update) off the checkpoints
        that end each turn, so those must be rebuilt from writes.
        """
        questions = questions or [f"question {i + 1}" for i in range(len(replies))]
        thread = self.thread(scripted_graph(self.saver, replies, mode=mode), thread_id, "chat")
        for message in preamble:
            await thread.graph.aupdate_state(
                thread.config, {"messages": [message]}, as_node="agent"
            )
        for question in questions:
            await self.run(thread, {"messages": [HumanMessage(question)]}, agent_name=agent_name)
        return thread

    async def agent(
        self,
        questions: Sequence[str] = ("How do I test a hypothesis?",),
        *,
        thread_id: str | None = None,
        agent_name: str | None = None,
    ) -> SeededThread:
        """The project's agent, one full tool-calling turn per question."""
        thread = self.thread(agent_graph(self.saver), thread_id, "agent")
        for question in questions:
            await self.run(thread, {"messages": [HumanMessage(question)]}, agent_name=agent_name)
        return thread

    async def agent_stopped_before_answer(self, *, thread_id: str | None = None) -> SeededThread:
        """A completed agent turn, then a second question whose run stops before the
        agent answers (``interrupt_before=["agent"]``): the new turn has no answer yet."""
        thread = await self.agent(("First question?",), thread_id=thread_id)
        paused = agent_graph(self.saver, interrupt_before=["agent"])
        await self.run(thread, {"messages": [HumanMessage("Second question?")]}, graph=paused)
        thread.label = "agent stopped before answer"
        return thread

    async def input_not_yet_applied(self, *, thread_id: str | None = None) -> SeededThread:
        """A completed turn, then a run cut right after its input checkpoint: the new
        question still waits in ``__start__`` (``next == ("__start__",)``)."""
        thread = await self.chat(
            ["first answer", "second answer"], questions=["first"], thread_id=thread_id
        )
        run_id = new_run_id()
        config = self.run_config(thread.thread_id, run_id)
        stream = thread.graph.astream(
            {"messages": [HumanMessage("second")]}, config, stream_mode="checkpoints"
        )
        async for event in stream:
            assert event["next"] == ["__start__"], event["next"]
            break
        await stream.aclose()
        thread.label = "input not yet applied"
        thread.run_ids.append(run_id)
        thread.graphs[run_id] = thread.graph
        thread.snapshots[run_id] = await thread.graph.aget_state(thread.config)
        return thread

    async def interrupted(self, value: Any, *, thread_id: str | None = None) -> SeededThread:
        """A run that answered once, then paused on a dynamic ``interrupt(value)``."""
        graph = node_graph(
            self.saver, [("draft", answer("draft before approval")), ("approve", asking(value))]
        )
        thread = self.thread(graph, thread_id, "interrupted")
        await self.run(thread, {"messages": [HumanMessage("please approve")]})
        return thread

    async def failed(self, message: str, *, thread_id: str | None = None) -> SeededThread:
        """A run whose second node raises after the first answered."""
        graph = node_graph(
            self.saver,
            [("draft", answer("partial answer before the failure")), ("boom", raising(message))],
        )
        thread = self.thread(graph, thread_id, "failed")
        await self.run(thread, {"messages": [HumanMessage("do it")]}, expect_error=True)
        return thread

    async def failed_then_tidied_up(
        self,
        message: str,
        *,
        failure: Literal["model", "tool"] = "tool",
        mode: MessagesMode = "delta",
        thread_id: str | None = None,
    ) -> SeededThread:
        """A completed turn, then a turn whose model or tool raises, then the writer's
        tidy-up checkpoints (``tidy_up_after_failure``): the newest checkpoint looks
        finished, the turn failed."""
        graph = failing_turn_graph(
            self.saver, "the first turn's answer", failure, message, mode=mode
        )
        thread = self.thread(graph, thread_id or hex8_thread_id(), f"failed ({failure}), tidied")
        await self.run(thread, {"messages": [HumanMessage("first question")]})
        await self.run(thread, {"messages": [HumanMessage("second question")]}, expect_error=True)
        await tidy_up_after_failure(graph, thread.thread_id)
        return thread

    async def cancelled_mid_model_call(
        self, *, written: bool, thread_id: str | None = None
    ) -> SeededThread:
        """A run that answered a draft, then was cancelled during its model call: with
        ``written`` the call's task is cancelled and the node raises (langgraph writes
        the task's error); without, the whole run's task is cancelled (the TUI's run
        task, or its process, stopped) and nothing about the node is written."""
        label = "cancelled mid-call" + (", written" if written else ", nothing written")
        if written:
            graph = node_graph(
                self.saver,
                [("draft", answer("draft before the cut")), ("model", model_call_cancelled())],
            )
            thread = self.thread(graph, thread_id, label)
            await self.run(thread, {"messages": [HumanMessage("go")]}, expect_error=True)
            return thread
        gate = asyncio.Event()
        graph = node_graph(
            self.saver, [("draft", answer("draft before the cut")), ("model", gated(gate, "never"))]
        )
        thread = self.thread(graph, thread_id, label)
        run = asyncio.ensure_future(self.run(thread, {"messages": [HumanMessage("go")]}))
        while (await graph.aget_state(thread.config)).next != ("model",):
            await asyncio.sleep(0.005)
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
        return thread

    async def sibling_failed(self, message: str) -> SeededThread:
        """Two parallel nodes; one raises, so langgraph cancels the other, which writes
        a ``CancelledError`` of its own beside the real failure."""
        builder = StateGraph(AddMessagesState)

        async def slow(state: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(3600)
            return {"messages": [AIMessage("never")]}

        async def boom(state: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(0.01)
            raise RuntimeError(message)

        builder.add_node("slow", slow)
        builder.add_node("boom", boom)
        builder.add_edge(START, "slow")
        builder.add_edge(START, "boom")
        thread = self.thread(builder.compile(checkpointer=self.saver), label="sibling failed")
        await self.run(thread, {"messages": [HumanMessage("go")]}, expect_error=True)
        return thread

    async def paused_before(
        self, node: str = "agent", *, thread_id: str | None = None
    ) -> SeededThread:
        """A scripted chat run stopped before ``node`` (``interrupt_before``)."""
        graph = scripted_graph(self.saver, ["never written"], interrupt_before=[node])
        thread = self.thread(graph, thread_id, "paused")
        await self.run(thread, {"messages": [HumanMessage("are you there?")]})
        return thread

    async def subgraph_waiting(self, final: str = "PARENT FINAL ANSWER") -> SeededThread:
        thread = self.thread(subgraph_parent(self.saver, final), label="subgraph")
        await self.run(thread, {"messages": [HumanMessage("research this")]})
        return thread

    async def delta_compacted(
        self,
        turns: int = 6,
        *,
        how: Literal["remove", "overwrite"] = "remove",
        thread_id: str | None = None,
    ) -> SeededThread:
        """Many DeltaChannel turns (snapshots every other update), then a run whose node
        compacts history and answers: with one ``RemoveMessage`` per old message, or
        with ``Overwrite`` (the DeltaChannel's reset; its reducer has no
        ``REMOVE_ALL_MESSAGES``)."""
        thread = await self.chat(
            [f"delta answer {i + 1}" for i in range(turns)],
            mode="delta",
            thread_id=thread_id,
            preamble=DELTA_PREAMBLE,
        )

        def compact(state: dict[str, Any]) -> dict[str, Any]:
            *old, question = state["messages"]
            assert isinstance(question, HumanMessage)
            reply = AIMessage(f"compacted answer ({how})")
            if how == "overwrite":
                return {"messages": Overwrite([question, reply])}
            return {"messages": [*(RemoveMessage(id=m.id) for m in old), reply]}

        graph = node_graph(self.saver, [("compact", compact)], mode="delta")
        await self.run(thread, {"messages": [HumanMessage("summarise everything")]}, graph=graph)
        thread.label = f"delta compacted ({how})"
        return thread

    async def every_scenario(self) -> list[SeededThread]:
        """A multi-thread store: one thread per kind of run the route must read."""
        return [
            await self.agent(("How do I test a hypothesis?", "And how do I report it?")),
            await self.chat([case.message for case in REASONING_CASES], thread_id=hex8_thread_id()),
            await self.paused_before(),
            await self.interrupted({"question": "approve?"}),
            await self.failed("kaboom"),
            await self.subgraph_waiting(),
            await self.delta_compacted(),
            await self.agent_stopped_before_answer(),
        ]


@asynccontextmanager
async def open_seeder(target: Store | Path | str) -> AsyncIterator[Seeder]:
    """A writer on ``target``, tables set up, closed on exit: a ``sessions.db`` path
    (created, WAL mode) or a ``postgresql://`` URI (an existing database), as the
    servers' checkpointer factory writes them. Reusable by any test module::

        async with open_seeder(db_path) as seeder:
            thread = await seeder.chat([AIMessage("hi")])
            snapshot = await thread.state()"""
    store = Store.of(target)
    if store.backend == "postgres":
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(store.uri) as saver:
            await saver.setup()
            yield Seeder(store, saver)
        return
    store.path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(store.path)) as saver:
        await saver.setup()
        yield Seeder(store, saver)


# --------------------------------------------------------------------------- API shape


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump") and callable(value.model_dump):
        return value.model_dump()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    if hasattr(value, "value") and hasattr(value, "id"):  # langgraph Interrupt
        return {"id": value.id, "value": value.value}
    if isinstance(value, BaseException):
        return repr(value)
    return str(value)


def _checkpoint(config: RunnableConfig | None) -> dict[str, Any] | None:
    if not config or not config.get("configurable", {}).get("checkpoint_id"):
        return None
    configurable = config["configurable"]
    return {
        "thread_id": configurable["thread_id"],
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "checkpoint_id": configurable["checkpoint_id"],
    }


def thread_state_json(snapshot: StateSnapshot) -> dict[str, Any]:
    """``snapshot`` as ``GET /threads/{id}/state`` returns it (langgraph-api's
    ``state_snapshot_to_thread_state``), through JSON: messages via ``model_dump()``."""
    state = {
        "values": snapshot.values,
        "next": list(snapshot.next),
        "tasks": [
            {
                "id": task.id,
                "name": task.name,
                "path": list(task.path),
                "error": task.error,
                "interrupts": [{"id": i.id, "value": i.value} for i in task.interrupts],
                "checkpoint": None,
                "state": None,
                "result": task.result,
            }
            for task in snapshot.tasks
        ],
        "metadata": snapshot.metadata,
        "created_at": snapshot.created_at,
        "checkpoint": _checkpoint(snapshot.config),
        "parent_checkpoint": _checkpoint(snapshot.parent_config),
        "interrupts": [{"id": i.id, "value": i.value} for i in snapshot.interrupts],
    }
    return json.loads(json.dumps(state, default=_jsonable))


@asynccontextmanager
async def serving(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """In-process HTTP to ``app`` as a server runs it: lifespan (start-up, then
    shutdown) around the requests."""
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client,
    ):
        yield client


@asynccontextmanager
async def answer_client(
    target: Store | Path | str,
    agent_name: str = AGENT_NAME,
    *,
    read_deadline: float = READ_DEADLINE_SECONDS,
    **reader_options: Any,
) -> AsyncIterator[httpx.AsyncClient]:
    """In-process HTTP to ``create_app`` whose service reads ``target`` (a
    ``sessions.db`` path, a ``postgresql://`` URI or a ``Store``) directly, with no API
    fallback; the service (its aiosqlite thread, its connection pool) is closed on exit."""
    reader = Store.of(target).reader(agent_name, **reader_options)
    service = FinalAnswerService(reader, None, read_deadline=read_deadline)
    app = create_app(lambda: service)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client
    finally:
        await service.close()


def route(thread_id: str) -> str:
    """The route's path for ``thread_id`` (percent-encoded as a browser would)."""
    return ROUTE.format(thread_id=quote(thread_id, safe=""))


def resume(value: Any) -> Command:
    return Command(resume=value)
