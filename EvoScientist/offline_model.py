"""A deterministic chat model that needs no API key and no network.

It behaves like a real reasoning model as far as the WebUI and the checkpoint can
tell: it first calls a tool, then answers with a reasoning block followed by text,
streamed token by token so a run spans several seconds and several graph steps.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from EvoScientist import settings

MODEL_ID = "evoscientist-offline-1"
TOOL_NAME = "search_notes"

_TOKEN = re.compile(r"\S+\s*|\s+")


def tokenize(text: str) -> list[str]:
    """Word-sized tokens that concatenate back to ``text`` exactly."""
    return _TOKEN.findall(text)


def question_of(messages: Sequence[BaseMessage]) -> str:
    """The latest question asked: the text of the last human message that has some."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and message.text.strip():
            return message.text.strip()
    return ""


def _tool_results_since_question(messages: Sequence[BaseMessage]) -> list[str]:
    results: list[str] = []
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and message.text.strip():
            break
        if isinstance(message, ToolMessage):
            results.append(message.text)
    return list(reversed(results))


def reasoning_for(question: str) -> str:
    return (
        f"The user asks: {question!r}. I searched my notes first; now I combine what "
        "they say into a short, structured answer and keep my reasoning out of it."
    )


def answer_for(question: str, notes: Sequence[str]) -> str:
    """The offline model's answer: a function of the question and the tool's output only."""
    digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:8]
    evidence = " ".join(notes) if notes else "no notes were found"
    return (
        f"## Answer ({digest})\n\n"
        f"You asked: {question}\n\n"
        f"From my notes: {evidence}\n\n"
        "1. State the hypothesis precisely and name what would falsify it.\n"
        "2. Design the smallest experiment that can tell the alternatives apart.\n"
        "3. Run it, record every result, and compare against a baseline.\n"
        "4. Write up what held, what failed, and what to try next.\n\n"
        "Done — this is the complete final answer."
    )


def notes_for(query: str) -> str:
    """What the offline ``search_notes`` tool returns for ``query``."""
    digest = hashlib.sha256(query.encode("utf-8")).hexdigest()[:6]
    return f"note {digest}: prior work on {query!r} suggests starting from a baseline."


class OfflineChatModel(BaseChatModel):
    """Deterministic tool-calling, reasoning, streaming chat model."""

    token_delay: float = Field(default_factory=settings.offline_token_delay)

    @property
    def _llm_type(self) -> str:
        return "evoscientist-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_id": MODEL_ID}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        # The model decides on its own tool call; binding only records the tools.
        return self.bind(tools=[getattr(tool, "name", str(tool)) for tool in tools], **kwargs)

    def _plan(self, messages: Sequence[BaseMessage]) -> list[AIMessageChunk]:
        """The chunks of this step's reply, in streaming order."""
        question = question_of(messages)
        notes = _tool_results_since_question(messages)
        if not notes:
            call_id = (
                "call_" + hashlib.sha256(f"{len(messages)}:{question}".encode()).hexdigest()[:12]
            )
            return [
                AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": TOOL_NAME,
                            "args": json.dumps({"query": question}),
                            "id": call_id,
                            "index": 0,
                        }
                    ],
                )
            ]
        chunks = [
            AIMessageChunk(content=[{"type": "reasoning", "reasoning": token, "index": 0}])
            for token in tokenize(reasoning_for(question))
        ]
        chunks += [
            AIMessageChunk(content=[{"type": "text", "text": token, "index": 1}])
            for token in tokenize(answer_for(question, notes))
        ]
        return chunks

    def _paced(self, messages: Sequence[BaseMessage]) -> Iterator[tuple[AIMessageChunk, float]]:
        """This step's reply, each chunk with the seconds to wait before it."""
        for chunk in self._plan(messages):
            yield chunk, self.token_delay

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Not streamed, a real model still takes its time: so does this one.
        chunks = [generation.message for generation in self._stream(messages, stop, run_manager)]
        return ChatResult(generations=[ChatGeneration(message=_merge(chunks))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = [gen.message async for gen in self._astream(messages, stop, run_manager)]
        return ChatResult(generations=[ChatGeneration(message=_merge(chunks))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk, delay in self._paced(messages):
            if delay:
                time.sleep(delay)
            generation = ChatGenerationChunk(message=chunk)
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=generation)
            yield generation

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk, delay in self._paced(messages):
            if delay:
                await asyncio.sleep(delay)
            generation = ChatGenerationChunk(message=chunk)
            if run_manager:
                await run_manager.on_llm_new_token(chunk.text, chunk=generation)
            yield generation


def _merge(chunks: Sequence[AIMessageChunk]) -> AIMessage:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return AIMessage(
        content=total.content,
        tool_calls=total.tool_calls,
        response_metadata={"model_name": MODEL_ID},
    )
