"""Refuse to start on a setting that cannot be used, with one line naming it, instead of
answering every route request with a 500 while ``/ok`` stays 200.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evoscientist_final_answer import settings


class SettingsCheck:
    """Middleware, so that it sees the ASGI ``lifespan`` start-up first, standalone and inside
    ``langgraph dev`` alike (which puts an app's own middleware outermost, in front of its
    own start-up). A failed start-up is reported the ASGI way, ``lifespan.startup.failed``
    with the message: uvicorn logs that one line and exits non-zero. Raising instead would
    have Starlette send the whole traceback as the message."""

    def __init__(self, app: ASGIApp, validate: Callable[[], None] | None = None) -> None:
        self.app = app
        self.validate = validate or settings.validate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        first = await receive()
        if first["type"] == "lifespan.startup":
            try:
                self.validate()
            except settings.SettingError as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
        replayed = False

        async def receive_again() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return first
            return await receive()

        await self.app(scope, receive_again, send)
