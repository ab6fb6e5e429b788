"""Our distribution installed beside upstream's: no upstream file replaced, ``pip check``
clean. (Installing a distribution named ``EvoScientist`` uninstalled upstream's; one
shipping ``EvoScientist/…`` files would overwrite its ``http.py`` and ``__init__.py``.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.upstream.env import REPO, UPSTREAM_VERSION, UpstreamEnv, require_upstream_env
from tests.upstream.server import (
    ADOPTED,
    PATCH,
    apply_adoption,
    changed_from_record,
    record,
    sha256_of,
    unzip_wheel,
)

OURS = "evoscientist-final-answer"


def test_upstream_is_the_pinned_release() -> None:
    env = require_upstream_env()
    assert env.dist_info("evoscientist").name == f"evoscientist-{UPSTREAM_VERSION}.dist-info"


def test_no_upstream_file_replaced() -> None:
    env: UpstreamEnv = require_upstream_env()
    after = env.dist_info("evoscientist") / "RECORD"
    assert after.read_bytes() == env.record_before.read_bytes(), "upstream was reinstalled"
    rows = [(name, digest) for name, digest in record(after) if digest]
    assert len(rows) > 300
    changed = [
        name
        for name, digest in rows
        if not (env.site_packages / name).is_file() or sha256_of(env.site_packages / name) != digest
    ]
    assert changed == []


def test_ours_installs_nothing_under_upstreams_package() -> None:
    env = require_upstream_env()
    names = [name for name, _ in record(env.dist_info(OURS) / "RECORD")]
    assert any(name.startswith("evoscientist_final_answer/") for name in names)
    clashing = [n for n in names if n.split("/")[0].lower() == "evoscientist"]
    assert clashing == []


def test_pip_check_is_clean() -> None:
    env = require_upstream_env()
    check = subprocess.run(
        [str(env.python), "-m", "pip", "check"], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_kit_patch_applies_to_a_clean_unzip_of_the_wheel(tmp_path: Path) -> None:
    """upstream/evoscientist.patch, applied to the release's wheel as downloaded, changes
    the files it names and nothing else (the server and gateway tests run that tree)."""
    env = require_upstream_env()
    tree = unzip_wheel(env, tmp_path)
    assert changed_from_record(tree) == []  # the unzip is the wheel, file for file

    apply_adoption(tree)

    assert changed_from_record(tree) == sorted(ADOPTED)
    http = (tree / ADOPTED[0]).read_text()
    assert "from evoscientist_final_answer import final_answer_routes" in http
    assert "*final_answer_routes()," in http


def test_the_adoption_doc_shows_the_kit_patch_as_it_is() -> None:
    """docs/upstream-adoption.md quotes upstream/evoscientist.patch: the patch is the
    single source, and the copy a reader sees is the patch, byte for byte."""
    doc = (REPO / "docs" / "upstream-adoption.md").read_text()
    found = re.search(r"^```diff\n(.*?)^```", doc, re.DOTALL | re.MULTILINE)
    assert found is not None, "docs/upstream-adoption.md shows no diff"
    assert found.group(1) == PATCH.read_text()
