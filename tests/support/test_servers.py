"""``tests/support/servers.py``: a test server is reached on its own port, even when another
test process took the port it was given (as ``make test``'s workers may)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import servers
from tests.support.servers import langgraph_dev

pytestmark = pytest.mark.e2e


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other process listens on (here: a bare socket)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_taken_free_port_is_followed_to_where_langgraph_dev_moved(
    tmp_path: Path, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(servers, "free_port", lambda: taken_port)
    with langgraph_dev(tmp_path / "work", tmp_path / "data", http=False) as server:
        assert server.port != taken_port
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert httpx.get(f"{server.url}/ok").status_code == 200
        assert f"Port {taken_port} is already in use, using port {server.port}" in server.log()


def test_a_taken_fixed_port_is_an_error(tmp_path: Path, taken_port: int) -> None:
    with (
        pytest.raises(RuntimeError, match=f"port {taken_port} was taken"),
        langgraph_dev(tmp_path / "work", tmp_path / "data", http=False, port=taken_port),
    ):
        pass
