"""The EvoScientist agent with a paced model (``langgraph.json`` → ``graphs``, beside the
project's own): the answer to a question holding a pace of ``PACES`` streams at that many
seconds a token (``SLOW``: about 5 s of answer; ``SLOWER``: 10 s), so that a Stop, a
thread switch or a cut lands while its run still goes on; its tool call and reasoning, and
any other question, at the server's own pace. One page can so ask a slow question, then a
quick next one."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from langchain_core.messages import AIMessageChunk, BaseMessage

from EvoScientist.agent import build_graph
from EvoScientist.offline_model import OfflineChatModel, question_of

SLOW_GRAPH = "EvoScientistPaced"
SPEC = "tests/support/slow_agent_graph.py:graph"
SLOW = "(slow)"
SLOWER = "(slower)"
PACES = {SLOWER: 0.1, SLOW: 0.05}


def _answers(chunk: AIMessageChunk) -> bool:
    return isinstance(chunk.content, list) and any(
        isinstance(block, dict) and block.get("type") == "text" for block in chunk.content
    )


class PacedChatModel(OfflineChatModel):
    """The offline model, its answer slower for a question that asks for it."""

    def _paced(self, messages: Sequence[BaseMessage]) -> Iterator[tuple[AIMessageChunk, float]]:
        question = question_of(messages)
        pace = next((delay for mark, delay in PACES.items() if mark in question), None)
        for chunk, delay in super()._paced(messages):
            yield chunk, pace if pace is not None and _answers(chunk) else delay


graph = build_graph(PacedChatModel())
