"""A scripted chat model for upstream EvoScientist's real agent (server side only): the
turn's question decides the script, and the answer text is a pure function of it
(``answer_for``), so a test can say what the right answer is without reading the server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
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

MODEL_ID = "scripted-1"
STEPS = 2_000
_TOKEN = re.compile(r"\S+\s*|\s+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def answer_for(question: str, tool_results: Sequence[str] = ()) -> str:
    digest = hashlib.sha256(question.encode()).hexdigest()[:8]
    seen = f" Tool said: {' | '.join(tool_results)}." if tool_results else ""
    points = range(30) if "[long]" in question else ()
    more = "".join(f" Point {n} of {digest}: step {n * 7 % 11}." for n in points)
    return f"Scripted answer {digest} to {question!r}.{seen}{more} Done, final."


def reasoning_for(question: str) -> str:
    return f"Thinking about {question!r} before answering."


def _turn(messages: Sequence[BaseMessage]) -> tuple[str, list[ToolMessage]]:
    """The latest human question and the tool results that followed it."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and message.text.strip():
            return message.text.strip(), list(reversed(results))
        if isinstance(message, ToolMessage):
            results.append(message)
    return "", list(reversed(results))


def _call(name: str, args: dict[str, Any], question: str, step: int = 0) -> AIMessageChunk:
    key = f"{name}:{question}:{step}" if step else f"{name}:{question}"
    call_id = "call_" + hashlib.sha256(key.encode()).hexdigest()[:12]
    return AIMessageChunk(
        content="",
        tool_call_chunks=[{"name": name, "args": json.dumps(args), "id": call_id, "index": 0}],
    )


def plan(messages: Sequence[BaseMessage]) -> list[AIMessageChunk]:
    question, results = _turn(messages)
    if not results and "[tool]" in question:
        todo = {"content": f"answer {question}", "status": "in_progress"}
        return [_call("write_todos", {"todos": [todo]}, question)]
    if "[steps]" in question and len(results) < STEPS:
        todo = {"content": f"step {len(results)} of {question}", "status": "in_progress"}
        return [_call("write_todos", {"todos": [todo]}, question, len(results))]
    if not results and "[hitl]" in question:
        return [_call("execute", {"command": "echo scripted"}, question)]
    reasoning = [
        AIMessageChunk(content=[{"type": "reasoning", "reasoning": t, "index": 0}])
        for t in tokens(reasoning_for(question))
    ]
    text = answer_for(question, [r.text for r in results])
    return reasoning + [
        AIMessageChunk(content=[{"type": "text", "text": t, "index": 1}]) for t in tokens(text)
    ]


def _delay(messages: Sequence[BaseMessage]) -> float:
    slow = "[slow]" in _turn(messages)[0]
    return float(os.environ.get("SCRIPTED_SLOW_DELAY" if slow else "SCRIPTED_DELAY", "0.01"))


class ScriptedChatModel(BaseChatModel):
    """Tool-calling, reasoning, streaming, deterministic. By the turn's question:

    - ``[tool]``: first call ``write_todos`` (deepagents' todo tool, no side effects), then
      answer with the tool's result in the text;
    - ``[hitl]``: call ``execute``, which upstream's HITL config interrupts before it runs;
    - ``[steps]``: call ``write_todos`` again and again (``STEPS`` times), so the run keeps
      writing checkpoints until it is cancelled (a rollback's target), then answer;
    - anything else: answer at once. Every answer streams a reasoning block, then its text,
      token by token (``[slow]`` questions slower, so a proxy can cut mid-answer; ``[long]``
      answers run to some 900 characters, so a cut lands well inside them)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_id": MODEL_ID}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[getattr(t, "name", str(t)) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = [g.message for g in self._stream(messages, stop, run_manager)]
        return ChatResult(generations=[ChatGeneration(message=_merge(chunks))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = [g.message async for g in self._astream(messages, stop, run_manager)]
        return ChatResult(generations=[ChatGeneration(message=_merge(chunks))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        delay = _delay(messages)
        for chunk in plan(messages):
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
        delay = _delay(messages)
        for chunk in plan(messages):
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


def scripted_chat_model(*_args: Any, **_kwargs: Any) -> ScriptedChatModel:
    """Stands in for upstream's ``get_chat_model(model, provider, **kwargs)``."""
    return ScriptedChatModel()
