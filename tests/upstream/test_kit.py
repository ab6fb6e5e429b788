"""The upstream kit's WebUI patch (upstream/webui.patch) against upstream's WebUI at the
commit it is for: it applies with ``git apply``, touches no dependency file, and makes the
one-line adoption. (The server's patch is applied by every module here; upstream's own
checks on both trees run in ``make upstream-pr``: upstream/checks/.)"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.upstream.env import REPO

WEBUI_PATCH = REPO / "upstream" / "webui.patch"
WEBUI_COMMIT = "9c90a77"
# A git directory holding the WebUI's history: this workplace keeps a snapshot here;
# elsewhere, point EVOSCIENTIST_WEBUI_GIT at a clone.
WEBUI_GIT = Path(
    os.environ.get("EVOSCIENTIST_WEBUI_GIT", "/work/.mirror/EvoScientist+EvoScientist-WebUI/repo")
)
DEPENDENCY_FILES = {"package.json", "package-lock.json"}


@pytest.fixture(scope="module")
def webui(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The WebUI's tree at the commit the patch is for."""
    if not WEBUI_GIT.is_dir():
        reason = f"no git directory of EvoScientist-WebUI at {WEBUI_GIT} (EVOSCIENTIST_WEBUI_GIT)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    tree = tmp_path_factory.mktemp("webui")
    archive = subprocess.run(
        ["git", "--git-dir", str(WEBUI_GIT), "archive", "--format=tar", WEBUI_COMMIT],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def test_the_webui_patch_applies_and_adopts_the_drop_in_in_one_line(webui: Path) -> None:
    touched = re.findall(r"^\+\+\+ b/(\S+)", WEBUI_PATCH.read_text(), re.MULTILINE)
    assert touched and not DEPENDENCY_FILES & {Path(name).name for name in touched}, touched
    git_env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(webui.parent)}
    subprocess.run(
        ["git", "apply", "--verbose", str(WEBUI_PATCH)],
        cwd=webui,
        env=git_env,
        check=True,
        capture_output=True,
    )
    use_chat = (webui / "src" / "app" / "hooks" / "useChat.ts").read_text()
    assert (
        'import { useStreamWithRecovery as useStream } from "@evoscientist/final-answer/react";'
        in use_chat
    )
    sdk_import = re.search(r"import \{([^}]*)\} from \"@langchain/langgraph-sdk/react\"", use_chat)
    assert sdk_import is not None and not re.search(r"(?<!\w)useStream\s*,", sdk_import.group(1))
    assert '"@evoscientist/final-answer"' in (webui / "vitest.config.ts").read_text()
