"""httpx clients for the servers the suite starts on this machine.

Making an ``httpx.AsyncClient`` builds an SSL context, which loads certifi's CA bundle:
about 20 ms of CPU, for clients that speak plain HTTP to 127.0.0.1. The browser modules'
helpers made one per request while polling a run (``nth_run`` every 50 ms): py-spy put
it at a third of a browser module's test-process CPU. One context, built once, serves
every client made here.
"""

from __future__ import annotations

from typing import Any

import httpx

_TLS = httpx.create_ssl_context()


def local_client(base_url: str, **options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` on ``base_url`` (``options`` as httpx takes them), made
    without building an SSL context of its own."""
    return httpx.AsyncClient(base_url=base_url, verify=_TLS, **options)


def local_get(url: str, **options: Any) -> httpx.Response:
    """``httpx.get(url)`` (``options`` as httpx takes them), made without building an SSL
    context of its own: for polls that wait on a server to start."""
    return httpx.get(url, verify=_TLS, **options)
