"""The contract graph (``langgraph.json`` → ``graphs`` → ``contract``), the same in both
languages (tests/jsserver/src/contract.ts for the JavaScript server), so the route's
JSON can be compared across the two servers apart from ids and timestamps. No
checkpointer: ``langgraph dev`` gives the graph its own.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Annotated, Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    message_chunk_to_message,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from typing_extensions import TypedDict

GRAPH_ID = "contract"
SPEC = "tests/support/contract_graph.py:graph"
FAIL = "[fail]"
INTERRUPT = "[interrupt]"
SLOW = "[slow]"
THINK = "[think]"
FAILURE = "the search backend is down"
FAIL_AFTER = 3
QUESTION = {"question": "approve?"}
DELAY = 0.01
SLOW_DELAY = 0.1

_TOKEN = re.compile(r"\s*\S+\s*")  # the same expression as contract.ts's


def answer_for(q: str) -> str:
    """The contract graph's whole answer to ``q`` (with ``[think]`` in ``q``, its
    reasoning inline first, as some models write it)."""
    reasoning = f"<think>Weighing: {q}</think>" if THINK in q else ""
    return (
        f'{reasoning}Answer to "{q}": a control group receives no '
        "treatment, so any difference is the treatment's effect."
    )


def tokenize(text: str) -> list[str]:
    """Word-sized tokens, each with the whitespace after it: they join back to ``text``."""
    return _TOKEN.findall(text)


def question_of(messages: Sequence[BaseMessage]) -> str:
    """The text of the latest human message."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return ""


class ContractChatModel(BaseChatModel):
    """A fake chat model: the contract's answer to the latest question, streamed token by
    token (no network, no key), so a ``messages`` stream shows chunks. By the latest human
    message ``q``:

    - ``[fail]``: the first ``FAIL_AFTER`` tokens, then ``RuntimeError(FAILURE)``, so the
      node and the run fail;
    - ``[interrupt]``: the node calls ``interrupt(QUESTION)`` first; resumed, it answers;
    - ``[think]``: the answer opens with its reasoning inline (``<think>…</think>``);
    - otherwise ``answer_for(q)``, in word-sized tokens, ``SLOW_DELAY`` s apart when ``q``
      holds ``[slow]``, else ``DELAY`` s.

    The AI message's id is the framework's (``lc_run--…`` here, ``run-…`` in JS)."""

    @property
    def _llm_type(self) -> str:
        return "contract-fake"

    def _plan(self, messages: Sequence[BaseMessage]) -> tuple[list[str], float, bool]:
        q = question_of(messages)
        tokens = tokenize(answer_for(q))
        delay = SLOW_DELAY if SLOW in q else DELAY
        if FAIL in q:
            return tokens[:FAIL_AFTER], delay, True
        return tokens, delay, False

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        tokens, delay, fails = self._plan(messages)
        for token in tokens:
            time.sleep(delay)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
        if fails:
            raise RuntimeError(FAILURE)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        tokens, delay, fails = self._plan(messages)
        for token in tokens:
            await asyncio.sleep(delay)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager:
                await run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
        if fails:
            raise RuntimeError(FAILURE)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _result([gen.message for gen in self._stream(messages, stop, run_manager)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = [gen.message async for gen in self._astream(messages, stop, run_manager)]
        return _result(chunks)


def _result(chunks: Sequence[BaseMessage]) -> ChatResult:
    """Not streamed: the same tokens joined (the framework gives the message its id)."""
    total = AIMessageChunk(content="")
    for chunk in chunks:
        total = total + chunk  # type: ignore[assignment]
    return ChatResult(generations=[ChatGeneration(message=message_chunk_to_message(total))])


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


model = ContractChatModel()


async def agent(state: State, config: RunnableConfig) -> dict[str, Any]:
    if INTERRUPT in question_of(state["messages"]):
        interrupt(QUESTION)
    return {"messages": [await model.ainvoke(state["messages"], config)]}


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
builder.add_edge("agent", END)
graph = builder.compile()
