"""The final-answer route for langgraph API servers, and its recovery client. A host app
adopts the route in one line, ``Starlette(routes=[*final_answer_routes(), ...])``;
importing the package builds no app and changes nothing global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evoscientist_final_answer.http.routes import final_answer_routes
    from evoscientist_final_answer.http.startup import SettingsCheck

__all__ = ["SettingsCheck", "final_answer_routes"]


def __getattr__(name: str) -> Any:
    """The route's modules load on first use of its names, so importing the package alone
    loads nothing of the server."""
    if name == "final_answer_routes":
        from evoscientist_final_answer.http.routes import final_answer_routes

        return final_answer_routes
    if name == "SettingsCheck":  # a host's opt-in: refuse to start on a bad setting
        from evoscientist_final_answer.http.startup import SettingsCheck

        return SettingsCheck
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
