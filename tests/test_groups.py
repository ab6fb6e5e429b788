"""``make test``'s grouping (tests/grouping.py), as pytest-xdist applies it: a module
sharing a module-scoped fixture runs on one worker, and so does a named ``xdist_group``;
a lost grouping fails no other test, each worker just starts its own servers.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import grouping

SAMPLE = """
import pytest


@pytest.fixture(scope="module")
def shared():
    return object()


@pytest.mark.parametrize("i", range(6))
def test_module_fixture(shared, i):
    pass


@pytest.mark.xdist_group("named")
@pytest.mark.parametrize("i", range(6))
def test_named_group(i):
    pass
"""
# The repository's hook, as the suite's conftest registers it.
CONFTEST = "from tests.grouping import pytest_collection_modifyitems  # noqa: F401\n"
# Only the plugins the sample needs (xdist): every installed one loaded costs each of the
# four processes ~4 s of CPU, beside the suite's own workers.
BARE_PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
PYTEST = [*BARE_PYTEST, "-p", "xdist.plugin", "-n", "3", "--dist", "loadgroup", "-v"]
RAN_ON = re.compile(r"\[(gw\d+)\].*PASSED \S*::(test_\w+)\[")


def run_sample(tmp_path: Path, sample: str, pytest: list[str]) -> subprocess.CompletedProcess[str]:
    """``sample`` as a test module beside the repository's hook, run by ``pytest``."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_sample.py").write_text(sample)
    return subprocess.run(
        [*pytest, "--rootdir", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_each_group_runs_on_one_worker(tmp_path: Path) -> None:
    done = run_sample(tmp_path, SAMPLE, PYTEST)
    assert done.returncode == 0, done.stdout + done.stderr
    workers: dict[str, set[str]] = {}
    for worker, test in RAN_ON.findall(done.stdout):
        workers.setdefault(test, set()).add(worker)
    assert set(workers) == {"test_module_fixture", "test_named_group"}, done.stdout
    assert all(len(ran_on) == 1 for ran_on in workers.values()), workers


def test_a_group_xdist_cannot_read_is_refused(tmp_path: Path) -> None:
    """xdist reads a group back from the test's id only when its ``@`` follows the id's
    last ``]``: a name holding one would silently be no group. (Under xdist the refusal
    stops the workers; the plain run says why.)"""
    sample = SAMPLE.replace('xdist_group("named")', 'xdist_group("module[sdk-1]")')
    done = run_sample(tmp_path, sample, BARE_PYTEST)
    assert done.returncode != 0, done.stdout
    assert "xdist_group 'module[sdk-1]' is not a group xdist can read" in (
        done.stdout + done.stderr
    )


def test_the_suite_registers_the_hook(request: pytest.FixtureRequest) -> None:
    """The samples load ``tests.grouping`` themselves: this is what says the suite does."""
    hook = request.config.pluginmanager.hook.pytest_collection_modifyitems
    assert any(
        impl.function is grouping.pytest_collection_modifyitems for impl in hook.get_hookimpls()
    )
