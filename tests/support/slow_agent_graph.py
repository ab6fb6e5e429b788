"""The EvoScientist agent with a paced model (``langgraph.json`` → ``graphs``, beside the
project's own): a question holding a pace of ``PACES`` is answered at that many seconds a
token (``SLOW``: about 5 s of answer; ``SLOWER``: 10 s), so that a Stop, a thread switch or
a cut lands while its run still goes on; any other question at the server's own pace. One
page can so ask a slow question, then a quick next one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk

from EvoScientist.agent import build_graph
from EvoScientist.offline_model import OfflineChatModel, question_of

SLOW_GRAPH = "EvoScientistPaced"
SPEC = "tests/support/slow_agent_graph.py:graph"
SLOW = "(slow)"
SLOWER = "(slower)"
PACES = {SLOWER: 0.1, SLOW: 0.05}


class PacedChatModel(OfflineChatModel):
    """The offline model, slower for a question that asks for it."""

    def _paced(self, messages: list[BaseMessage]) -> OfflineChatModel:
        question = question_of(messages)
        for pace, delay in PACES.items():
            if pace in question:
                return self.model_copy(update={"token_delay": delay})
        return self

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        yield from OfflineChatModel._stream(self._paced(messages), messages, *args, **kwargs)

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        async for chunk in OfflineChatModel._astream(
            self._paced(messages), messages, *args, **kwargs
        ):
            yield chunk


graph = build_graph(PacedChatModel())
