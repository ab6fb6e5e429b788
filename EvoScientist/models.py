"""The model registry behind ``GET /api/models`` and the agent's model factory."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from EvoScientist import settings
from EvoScientist.offline_model import MODEL_ID as OFFLINE_MODEL_ID
from EvoScientist.offline_model import OfflineChatModel


@dataclass(frozen=True)
class ModelEntry:
    name: str
    model_id: str
    provider: str

    @property
    def spec(self) -> str:
        """The ``EVOSCIENTIST_MODEL`` value that selects this entry."""
        return self.name if self.provider == "offline" else f"{self.provider}:{self.model_id}"


KNOWN_MODELS: tuple[ModelEntry, ...] = (
    ModelEntry(name="offline", model_id=OFFLINE_MODEL_ID, provider="offline"),
    ModelEntry(name="claude-sonnet-4-5", model_id="claude-sonnet-4-5", provider="anthropic"),
    ModelEntry(name="gpt-5", model_id="gpt-5", provider="openai"),
    ModelEntry(name="deepseek-reasoner", model_id="deepseek-reasoner", provider="deepseek"),
)


def parse_spec(spec: str) -> ModelEntry:
    """``offline`` or ``provider:model`` → a registry entry (known or ad hoc)."""
    for entry in KNOWN_MODELS:
        if spec in (entry.name, entry.spec):
            return entry
    provider, sep, model_id = spec.partition(":")
    if not sep or not provider or not model_id:
        raise ValueError(f"EVOSCIENTIST_MODEL must be 'offline' or 'provider:model', got {spec!r}")
    return ModelEntry(name=model_id, model_id=model_id, provider=provider)


def models_payload() -> dict[str, Any]:
    """The WebUI's contract: ``{"entries": [...], "default": {"name", "provider"}}``."""
    default = parse_spec(settings.model_name())
    entries = list(KNOWN_MODELS)
    if default not in entries:
        entries.append(default)
    return {
        "entries": [asdict(entry) for entry in entries],
        "default": {"name": default.name, "provider": default.provider},
    }


def chat_model(spec: str | None = None) -> BaseChatModel:
    entry = parse_spec(spec or settings.model_name())
    if entry.provider == "offline":
        return OfflineChatModel()
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(
            f"model {entry.spec!r} needs the 'langchain' package and its provider package"
        ) from exc
    return init_chat_model(entry.spec)
