"""Every setting the server reads is checked at once, and a bad one is named."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from EvoScientist import settings
from EvoScientist.checkpointer import sessions_checkpointer

BAD_VALUES = [
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "30s"),
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "nan"),
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "0"),
    ("EVOSCIENTIST_RUN_SILENCE_SECONDS", "-5"),
    ("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", "nan"),
    ("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", "inf"),
    ("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", "-0.1"),
    ("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", "20ms"),
    ("EVOSCIENTIST_POSTGRES_POOL_TIMEOUT", "0"),
    ("EVOSCIENTIST_POSTGRES_POOL_TIMEOUT", "inf"),
    ("EVOSCIENTIST_POSTGRES_POOL_TIMEOUT", "30s"),
    ("EVOSCIENTIST_DATABASE_URI", "mysql://db/evo"),
    ("EVOSCIENTIST_LANGGRAPH_URL", "localhost:2024"),
    ("EVOSCIENTIST_LANGGRAPH_URL", "ftp://example.org"),
    ("EVOSCIENTIST_GC_TUNING", "maybe"),
    ("EVOSCIENTIST_MODEL", "no-provider"),
]


@pytest.fixture(autouse=True)
def _defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for variable in settings.SETTINGS:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("EVOSCIENTIST_DATA_DIR", str(tmp_path))


def test_every_setting_of_the_readme_is_checked() -> None:
    """The README's configuration table, but for the CLI's own ``EVOSCIENTIST_URL``."""
    from tests.support.servers import REPO

    table = (REPO / "README.md").read_text().split("| variable | default | meaning |")[1]
    rows = [line for line in table.splitlines()[2:] if line.startswith("| `")]
    documented = {row.split("`")[1] for row in rows} - {"EVOSCIENTIST_URL"}
    assert documented <= set(settings.SETTINGS)


def test_defaults_and_good_values_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    settings.validate()
    monkeypatch.setenv("EVOSCIENTIST_RUN_SILENCE_SECONDS", "inf")
    monkeypatch.setenv("EVOSCIENTIST_OFFLINE_TOKEN_DELAY", "0")
    monkeypatch.setenv("EVOSCIENTIST_GC_TUNING", "off")
    monkeypatch.setenv("EVOSCIENTIST_LANGGRAPH_URL", "http://127.0.0.1:2024")
    monkeypatch.setenv("EVOSCIENTIST_MODEL", "anthropic:claude-sonnet-4-5")
    settings.validate()
    assert settings.run_silence_seconds() == math.inf
    assert settings.gc_tuning() is False


@pytest.mark.parametrize(("variable", "value"), BAD_VALUES)
def test_a_bad_value_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(settings.SettingError, match=variable) as raised:
        settings.validate()
    assert "\n" not in str(raised.value)


async def test_the_checkpointer_refuses_a_bad_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOSCIENTIST_RUN_SILENCE_SECONDS", "nan")
    with pytest.raises(settings.SettingError, match="EVOSCIENTIST_RUN_SILENCE_SECONDS"):
        async with sessions_checkpointer():
            pass
