"""``GET /api/models``: the WebUI's contract
``{"entries": [{"name", "model_id", "provider"}], "default": {"name", "provider"}}``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from EvoScientist.langgraph_dev.http import _build_app
from EvoScientist.models import KNOWN_MODELS, chat_model, parse_spec
from EvoScientist.offline_model import MODEL_ID, OfflineChatModel
from evoscientist_final_answer.http.routes import FinalAnswerRoute


@pytest.fixture
async def models_client() -> AsyncIterator[httpx.AsyncClient]:
    app = _build_app()  # the route's default factory: never used by /api/models
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        yield client
    (route,) = [r for r in app.routes if isinstance(r, FinalAnswerRoute)]
    assert route.services.current() is None


async def get_models(client: httpx.AsyncClient) -> dict:
    response = await client.get("/api/models")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def assert_shape(body: dict) -> None:
    assert set(body) == {"entries", "default"}
    assert body["entries"]
    for entry in body["entries"]:
        assert set(entry) == {"name", "model_id", "provider"}
        assert all(isinstance(value, str) and value for value in entry.values())
    assert set(body["default"]) == {"name", "provider"}
    assert {"name": body["default"]["name"], "provider": body["default"]["provider"]} in [
        {"name": e["name"], "provider": e["provider"]} for e in body["entries"]
    ]


async def test_default_is_the_offline_model(
    models_client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVOSCIENTIST_MODEL", raising=False)
    body = await get_models(models_client)
    assert_shape(body)
    assert body["default"] == {"name": "offline", "provider": "offline"}
    assert {"name": "offline", "model_id": MODEL_ID, "provider": "offline"} in body["entries"]
    assert len(body["entries"]) == len(KNOWN_MODELS)


@pytest.mark.parametrize("spec", ["openai:gpt-5", "gpt-5"])
async def test_known_model_selected_by_env(
    models_client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.setenv("EVOSCIENTIST_MODEL", spec)
    body = await get_models(models_client)
    assert_shape(body)
    assert body["default"] == {"name": "gpt-5", "provider": "openai"}
    assert len(body["entries"]) == len(KNOWN_MODELS)  # not listed twice


async def test_ad_hoc_model_is_listed(
    models_client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVOSCIENTIST_MODEL", "ollama:qwen3:8b")
    body = await get_models(models_client)
    assert_shape(body)
    assert body["default"] == {"name": "qwen3:8b", "provider": "ollama"}
    assert body["entries"][-1] == {"name": "qwen3:8b", "model_id": "qwen3:8b", "provider": "ollama"}


@pytest.mark.parametrize("spec", ["nocolon", ":model", "provider:"])
def test_bad_specs_are_rejected(spec: str) -> None:
    with pytest.raises(ValueError, match="EVOSCIENTIST_MODEL"):
        parse_spec(spec)


def test_offline_spec_builds_the_offline_model() -> None:
    assert isinstance(chat_model("offline"), OfflineChatModel)
