"""A real langgraph auth handler for the tests (``langgraph.json`` → ``auth.path``).

``X-Api-Key`` names the user, as the WebUI sends it; no key, or an unknown one, is a
401. No resource handlers: every authenticated user may use every thread through the
built-in API, so the final-answer route's own ownership check is what the tests see.
"""

from __future__ import annotations

from langgraph_sdk import Auth

API_KEYS = {"key-alice": "alice", "key-bob": "bob"}

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> Auth.types.MinimalUserDict:
    key = headers.get(b"x-api-key", b"").decode()
    user = API_KEYS.get(key)
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="missing or unknown API key")
    return {"identity": user, "display_name": user.title()}
