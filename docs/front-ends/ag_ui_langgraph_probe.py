"""What a browser's dropped connection does to a run that ag-ui-langgraph serves
in-process (docs/front-ends/copilotkit.md, "Python"). Not part of the suite: it needs
ag-ui-langgraph, which the project does not depend on. In a scratch venv:

    python3.11 -m venv /tmp/agui
    /tmp/agui/bin/pip install ag-ui-langgraph==0.0.47 uvicorn httpx
    /tmp/agui/bin/python docs/front-ends/ag_ui_langgraph_probe.py

A two-node graph (a quick node, then an answer streamed over ~3.6 s) on a checkpointer,
served with ``add_langgraph_fastapi_endpoint`` by a real uvicorn; the client reads a fifth
of the answer and closes the connection. It prints whether the answer node finished,
what the checkpoint holds afterwards, which routes could re-read, and what posting the
same conversation again does.
"""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from typing import Annotated, Any

import httpx
import uvicorn
from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

ANSWER = " ".join(f"word{i}" for i in range(60))
TOKEN_SECONDS = 0.03
answer_node = {"started": 0, "finished": 0, "cancelled": 0}


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


async def notes(state: State) -> dict[str, Any]:
    return {"messages": [AIMessage(content="notes: found three sources")]}


async def answer(state: State) -> dict[str, Any]:
    answer_node["started"] += 1
    model = GenericFakeChatModel(messages=iter([AIMessage(content=ANSWER)]))
    whole = None
    try:
        async for chunk in model.astream(state["messages"]):
            whole = chunk if whole is None else whole + chunk
            await asyncio.sleep(TOKEN_SECONDS)
    except asyncio.CancelledError:
        answer_node["cancelled"] += 1
        raise
    answer_node["finished"] += 1
    assert whole is not None
    return {"messages": [AIMessage(content=whole.content, id=whole.id)]}


builder = StateGraph(State)
builder.add_node("notes", notes)
builder.add_node("answer", answer)
builder.add_edge(START, "notes")
builder.add_edge("notes", "answer")
builder.add_edge("answer", END)
graph = builder.compile(checkpointer=InMemorySaver())
app = FastAPI()
add_langgraph_fastapi_endpoint(app, LangGraphAgent(name="probe", graph=graph), "/agent")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def messages_of(state: Any) -> list[tuple[str, int]]:
    return [(type(m).__name__, len(m.content)) for m in state.values.get("messages", [])]


async def main() -> None:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    base = f"http://127.0.0.1:{port}"
    thread_id = str(uuid.uuid4())
    body = {
        "threadId": thread_id,
        "runId": str(uuid.uuid4()),
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "messages": [{"id": str(uuid.uuid4()), "role": "user", "content": "hi"}],
    }
    headers = {"accept": "text/event-stream"}
    text = ""
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", f"{base}/agent", json=body, headers=headers) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event["type"] == "TEXT_MESSAGE_CONTENT":
                    text += event["delta"]
                    if len(text) > len(ANSWER) / 5:
                        break  # the browser goes away mid-answer
    print(f"client: read {len(text)} of {len(ANSWER)} characters, then dropped")
    # Longer than the rest of the answer takes.
    await asyncio.sleep(len(ANSWER.split()) * 2 * TOKEN_SECONDS + 5)
    config = {"configurable": {"thread_id": thread_id}}
    state = await graph.aget_state(config)
    print("answer node:", answer_node)
    print("checkpoint: next", state.next, "messages", messages_of(state))
    history = [c async for c in graph.aget_state_history(config)]
    print(
        "checkpoints:",
        [(c.metadata.get("source"), c.metadata.get("step"), c.next) for c in history],
    )
    async with httpx.AsyncClient(timeout=30) as http:
        for path in (f"/agent/{thread_id}", "/agent/health"):
            print("GET", path, (await http.get(f"{base}{path}")).status_code)
        again = {**body, "runId": str(uuid.uuid4())}
        async with http.stream("POST", f"{base}/agent", json=again, headers=headers) as response:
            types = [
                json.loads(line[5:])["type"]
                async for line in response.aiter_lines()
                if line.startswith("data:")
            ]
    state = await graph.aget_state(config)
    print("posted again: ends", types[-1], "| answer node:", answer_node)
    print("checkpoint: next", state.next, "messages", messages_of(state))
    server.should_exit = True
    await serving


if __name__ == "__main__":
    asyncio.run(main())
