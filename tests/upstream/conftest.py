"""upstream's server as ``EvoSci`` launches it, shared by the modules that can share one
(they run on one worker: tests/grouping.py's ``ONE_AT_A_TIME``): its start is some 15 s
of CPU."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.upstream.env import require_upstream_env
from tests.upstream.server import UpstreamServer, upstream_server

# The scripted model's pace for ``[slow]`` questions: an answer of ``[long]`` runs some
# 19 s, so a fault, a write of the runs (every 10 s) or a restart lands inside it.
SLOW_TOKEN_S = "0.1"


@pytest.fixture(scope="package")
def launched_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpstreamServer]:
    with upstream_server(
        require_upstream_env(),
        tmp_path_factory.mktemp("upstream"),
        launcher=True,
        SCRIPTED_SLOW_DELAY=SLOW_TOKEN_S,
    ) as server:
        yield server
