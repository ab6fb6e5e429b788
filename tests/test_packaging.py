"""The distribution ``evoscientist-final-answer`` (``pyproject.toml``): its wheel holds
the ``evoscientist_final_answer`` package and nothing else (no file under
``EvoScientist/``, which would replace upstream's own), and PostgreSQL is an extra that
only a PostgreSQL store loads."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.support.servers import REPO

PACKAGE = "evoscientist_final_answer"
# What ``pip wheel`` reads: the project's metadata, the package, and the demo beside it
# (copied too, so that leaving it out is the build's doing, not the copy's).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", PACKAGE, "EvoScientist")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the sources (the build writes beside them)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy2(path, source / name)
    out = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_holds_only_the_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {PACKAGE, f"{PACKAGE}-0.1.0.dist-info"}
    packaged = {name for name in names if name.endswith(".py")}
    in_repo = {path.relative_to(REPO).as_posix() for path in (REPO / PACKAGE).rglob("*.py")}
    assert packaged == in_repo  # every module, sub-packages included
    metadata = zipfile.ZipFile(wheel).read(f"{PACKAGE}-0.1.0.dist-info/METADATA").decode()
    assert "Name: evoscientist-final-answer" in metadata
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    postgres = [line for line in requires if "psycopg" in line or "checkpoint-postgres" in line]
    assert postgres and all('extra == "postgres"' in line for line in postgres)
    entry_points = zipfile.ZipFile(wheel).read(f"{PACKAGE}-0.1.0.dist-info/entry_points.txt")
    assert b"evosci-answer = evoscientist_final_answer.recovery.cli:main" in entry_points


def test_installed_it_adds_no_file_under_evoscientist(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")),
            *("install", "--no-deps", "--no-index", "-q", str(wheel)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (site,) = (venv / "lib").glob("python3*/site-packages")
    installed = {path.relative_to(site).parts[0] for path in site.rglob("*")}
    assert PACKAGE in installed
    assert not {name for name in installed if name.lower() == "evoscientist"}
    assert all(
        not name.lower().startswith("evoscientist-") and not name.startswith("EvoScientist")
        for name in installed
    ), installed


# PostgreSQL's modules made unimportable, as in a host without the extra.
WITHOUT_POSTGRES = """
import asyncio, importlib.abc, sys

class NoPostgres(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("psycopg", "psycopg_pool", "psycopg_binary") or (
            name.startswith("langgraph.checkpoint.postgres")
        ):
            raise ImportError(f"{name} is not installed")
        return None

sys.meta_path.insert(0, NoPostgres())
from evoscientist_final_answer import final_answer_routes
from evoscientist_final_answer.http.app import create_app
from evoscientist_final_answer.http.service import FinalAnswerService
from evoscientist_final_answer.maintenance.sqlite import MaintainedSqliteSaver
from evoscientist_final_answer.recovery.cli import main
from evoscientist_final_answer.store.errors import ThreadNotFound

final_answer_routes()
create_app()

async def read():
    async with MaintainedSqliteSaver.from_conn_string(sys.argv[1]) as saver:
        await saver.setup()  # a store, with no thread in it
    service = FinalAnswerService.from_environment()
    try:
        await service.read("no-such-thread")
    except ThreadNotFound:
        print("thread_not_found")
    finally:
        await service.close()

asyncio.run(read())
"""


def test_without_the_postgres_extra_everything_else_loads(tmp_path: Path) -> None:
    finished = subprocess.run(
        [sys.executable, "-c", WITHOUT_POSTGRES, str(tmp_path / "sessions.db")],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "EVOSCIENTIST_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "thread_not_found"


# Every module of the package imported with the demo's package made unimportable.
WITHOUT_THE_DEMO = """
import importlib, importlib.abc, pkgutil, sys

class NoDemo(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "EvoScientist":
            raise ImportError(f"{name}: the demo is not part of the package")
        return None

sys.meta_path.insert(0, NoDemo())
import evoscientist_final_answer as package
names = [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
names = [name for name in names if not name.endswith(".__main__")]  # runs the CLI
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_the_package_imports_nothing_of_the_demo(tmp_path: Path) -> None:
    finished = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_DEMO],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "EVOSCIENTIST_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    modules = len(list((REPO / PACKAGE).rglob("*.py")))
    assert int(finished.stdout) == modules - 2  # all but the package's __init__, __main__


def test_a_langgraph_image_holds_the_demo_and_the_distribution(tmp_path: Path) -> None:
    """``langgraph build`` of the repository's ``langgraph.json``: its Dockerfile (written
    by ``langgraph dockerfile``, no docker needed) installs our distribution and the demo
    package that the graphs, checkpointer and ``http.app`` name. The distribution holds
    no ``EvoScientist/`` (see above), so the demo is a dependency of its own."""
    dockerfile = tmp_path / "Dockerfile"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "langgraph_cli",
            "dockerfile",
            "-c",
            "langgraph.json",
            str(dockerfile),
        ],
        cwd=REPO,
        env={**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"},
        check=True,
        capture_output=True,
        timeout=120,
    )
    lines = dockerfile.read_text().splitlines()
    ours = f"/deps/{REPO.name}"
    demo = "/deps/outer-EvoScientist"
    # Our distribution (its pyproject.toml) and the demo (a package without one, given
    # a generated pyproject.toml named after it), each installed from its folder.
    assert f"ADD . {ours}" in lines
    assert f"ADD ./EvoScientist {demo}/EvoScientist" in lines
    text = "\n".join(lines)
    assert f">> {demo}/pyproject.toml" in text and "'name = \"EvoScientist\"'" in text
    install = next(line for line in lines if line.startswith("RUN for dep in /deps/*"))
    assert "install" in install and "-e ." in install
    # Everything langgraph.json names is in the image, where the server looks for it.
    env = {
        match.group(1): json.loads(match.group(2))
        for match in map(re.compile(r"^ENV (\w+)='(.*)'$").match, lines)
        if match
    }
    assert env["LANGGRAPH_HTTP"]["app"] == "EvoScientist.langgraph_dev.http:app"
    named = [env["LANGGRAPH_CHECKPOINTER"]["path"], *env["LANGSERVE_GRAPHS"].values()]
    for spec in named:
        path = spec.rsplit(":", 1)[0]
        for root, host in ((f"{demo}/", REPO), (f"{ours}/", REPO)):
            if path.startswith(root):
                assert (host / path.removeprefix(root)).is_file(), spec
                break
        else:
            raise AssertionError(f"{spec} is outside the image's packages")


def _changelog_versions(path: Path) -> list[str]:
    return re.findall(r"^## (\d+\.\d+\.\d+)\b", path.read_text(), re.MULTILINE)


def test_both_packages_are_ready_to_publish() -> None:
    """The metadata a registry shows and a release needs: semver versions, each with its
    CHANGELOG entry, a license with its text, where the source lives; the JS package
    public (a scoped package is private by default) and holding what it names."""
    with (REPO / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    js_root = REPO / "clients" / "js"
    js = json.loads((js_root / "package.json").read_text())
    semver = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
    for version, changelog in (
        (project["version"], REPO / "CHANGELOG.md"),
        (js["version"], js_root / "CHANGELOG.md"),
    ):
        assert semver.match(version), version
        assert _changelog_versions(changelog)[:1] == [version], f"{changelog}: no {version} first"
    assert project["license"] == js["license"] == "MIT"
    for root in (REPO, js_root):
        assert "MIT License" in (root / "LICENSE").read_text()
    assert project["urls"]["Repository"] and js["repository"]["url"].endswith(".git")
    assert js["publishConfig"] == {"access": "public"} and js["engines"]["node"]
    for name in js["files"]:
        assert (js_root / name).exists(), name
