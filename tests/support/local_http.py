"""httpx clients for the servers the suite starts on this machine, sharing one SSL context
built once: each new ``httpx.AsyncClient`` would otherwise load certifi's CA bundle, a
real CPU cost for clients made per request that speak plain HTTP to 127.0.0.1.
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
