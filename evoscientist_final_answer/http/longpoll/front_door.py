"""Inside ``langgraph dev``, the route's GET and HEAD requests skip the server's own
middleware when every piece of it is known to do nothing for them: that stack costs more
than the route itself, on the event loop the server's runs execute on.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from evoscientist_final_answer.http.longpoll.held_response import WAY_OUT, WayOut

logger = logging.getLogger(__name__)

SERVER_MODULE = "langgraph_api.server"
CONFIG_MODULE = "langgraph_api.config"
# The server's global middleware that does nothing for a GET or HEAD of this route
# beyond what the front door does itself (CORS, with the server's own settings):
# private-network headers go on OPTIONS preflights only; the request id feeds the
# server's log context; the store check guards the server's store routes.
TRANSPARENT = frozenset(
    {
        "PrivateNetworkMiddleware",
        "CORSMiddleware",
        "AccessLoggerMiddleware",
        "RequestIdMiddleware",
        "EnsureStoreAccessible",
    }
)
FRONT_DOOR_METHODS = frozenset({"GET", "HEAD"})


class FrontDoor:
    """Answers the route itself, through the server's own CORS middleware with the server's
    own settings (a browser on another origin sees the same headers), and passes everything
    else on untouched. It steps aside (every request takes the usual path) wherever
    skipping could change an answer:

    - outside ``langgraph dev`` (the standalone app has no other middleware);
    - when langgraph's auth runs on custom routes (``http.enable_custom_route_auth``) or
      before custom middleware (``http.middleware_order: auth_first``): the caller's
      identity comes from that middleware;
    - under a ``mount_prefix``, or when the server's global stack holds any middleware not
      in ``TRANSPARENT`` (a JS app's proxy, a newer server's additions).

    The access log does not see these requests; it logs none of their normal outcomes
    anyway (``quiet_logs``), and the route logs its own failures."""

    def __init__(self, app: ASGIApp, route: Route) -> None:
        self.app = app
        self.route = route
        self._decided = False
        self._direct: ASGIApp | None = None
        self._cors: CORSMiddleware | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in FRONT_DOOR_METHODS:
            direct = self._direct_app()
            if direct is not None:
                match, child_scope = self.route.matches(scope)
                if match is Match.FULL:
                    scope.update(child_scope)
                    # Its response may be sent by the poll it waits on (``delivery``),
                    # which only a send that never blocks on another task allows (the
                    # server's own stack hands the response between tasks).
                    scope[WAY_OUT] = WayOut(send, self._cors)
                    try:
                        await direct(scope, receive, send)
                    finally:
                        # The scope belongs to uvicorn's request cycle, and ``send`` is
                        # that cycle's method: left in place, the pair is a reference
                        # cycle that keeps the connection's objects (its transport, its
                        # flow control, its buffers; about 10 KB) until a full collection.
                        del scope[WAY_OUT]
                    return
        await self.app(scope, receive, send)

    def _direct_app(self) -> ASGIApp | None:
        """Decided at the first request: by then the server has built its stack."""
        if not self._decided:
            self._direct = self._build_direct_app()
            self._decided = True
            logger.debug("front door %s", "open" if self._direct is not None else "closed")
        return self._direct

    def _build_direct_app(self) -> ASGIApp | None:
        server = sys.modules.get(SERVER_MODULE)
        config = sys.modules.get(CONFIG_MODULE)
        stack = getattr(server, "global_middleware", None)
        if server is None or config is None or not isinstance(stack, list):
            return None  # not inside langgraph dev
        http_config = getattr(config, "HTTP_CONFIG", None) or {}
        if (
            http_config.get("enable_custom_route_auth")
            or http_config.get("middleware_order") == "auth_first"
            or getattr(config, "MOUNT_PREFIX", None)
        ):
            return None
        cors: dict[str, Any] | None = None
        for middleware in stack:
            name = getattr(middleware.cls, "__name__", "")
            if name not in TRANSPARENT:
                return None
            if middleware.cls is CORSMiddleware:
                cors = dict(middleware.kwargs)
        if cors is None:
            return self.route.handle
        self._cors = CORSMiddleware(self.route.handle, **cors)
        return self._cors
