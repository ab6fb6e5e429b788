"""The upstream environment (``make upstream-env``): evoscientist 0.3.8 from the package
index, with this repository's distribution installed beside it, and the release's wheel
file kept in ``wheel/``.

Tests that need it skip with the reason when it was not built (no network on a
developer's machine, say), except under CI (``CI=true``), where they fail: ``make test``
builds it first, and fails there if it cannot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("EVOSCIENTIST_UPSTREAM_VENV", REPO / ".venv-upstream"))
# Written by the Makefile once both distributions are installed and ``pip check`` passed.
STAMP_NAME = ".installed"
# upstream's RECORD as it was before our distribution went in (the Makefile copies it).
RECORD_BEFORE_NAME = "evoscientist-RECORD.before"
UPSTREAM_VERSION = "0.3.8"


@dataclass(frozen=True)
class UpstreamEnv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def langgraph(self) -> Path:
        return self.root / "bin" / "langgraph"

    @property
    def site_packages(self) -> Path:
        return next((self.root / "lib").glob("python3*/site-packages"))

    @property
    def package(self) -> Path:
        """upstream's installed ``EvoScientist`` package."""
        return self.site_packages / "EvoScientist"

    @property
    def record_before(self) -> Path:
        return self.root / RECORD_BEFORE_NAME

    @property
    def wheel(self) -> Path:
        """upstream's wheel file, as the package index serves it (the Makefile keeps it)."""
        found = sorted((self.root / "wheel").glob(f"evoscientist-{UPSTREAM_VERSION}-*.whl"))
        if not found:
            _missing(f"{self.root} keeps no evoscientist {UPSTREAM_VERSION} wheel")
        return found[0]

    def dist_info(self, name: str) -> Path:
        """The ``.dist-info`` folder of the installed distribution ``name`` (normalised)."""
        wanted = name.lower().replace("-", "_")
        for path in self.site_packages.glob("*.dist-info"):
            if path.name.removesuffix(".dist-info").rsplit("-", 1)[0].lower() == wanted:
                return path
        raise FileNotFoundError(f"{name} is not installed in {self.root}")


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (make test builds it: make upstream-env)", pytrace=False)
    pytest.skip(f"{reason}: run `make upstream-env`")


def require_upstream_env() -> UpstreamEnv:
    """The built environment; skips the test without it, fails it under CI."""
    if not (VENV / STAMP_NAME).is_file():
        _missing(f"the upstream environment {VENV} is not built")
    return UpstreamEnv(VENV)
