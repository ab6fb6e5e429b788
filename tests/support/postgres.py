"""A PostgreSQL server for tests: throwaway databases (``evosci_<random>``, dropped after
use) on the server ``$EVOSCIENTIST_TEST_POSTGRES_URI`` names. Without a reachable server
the tests that need one skip, except under CI, where they fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cache
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

ENV = "EVOSCIENTIST_TEST_POSTGRES_URI"
DEFAULT_URI = "postgresql://postgres@127.0.0.1:5432/test"
DATABASE_PREFIX = "evosci_"
SCHEMA_PREFIX = "evosci_"
CONNECT_TIMEOUT_SECONDS = 3


def admin_uri() -> str:
    return os.environ.get(ENV, "").strip() or DEFAULT_URI


def database_uri(name: str, base: str | None = None) -> str:
    """``base`` (default: the admin URI) pointed at database ``name``."""
    parts = urlsplit(base or admin_uri())
    return urlunsplit(parts._replace(path=f"/{name}"))


def with_search_path(uri: str, schema: str) -> str:
    """``uri`` whose sessions put ``schema`` first on their ``search_path``."""
    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    options = dict(parse_qsl(parts.query)).get("options")
    search_path = f"-c search_path={schema}"
    query.append(("options", f"{options} {search_path}" if options else search_path))
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def with_user(uri: str, user: str, password: str) -> str:
    """``uri`` logging in as ``user`` with ``password``."""
    parts = urlsplit(uri)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{quote(user)}:{quote(password)}@{host}"))


def redacted(uri: str) -> str:
    """``uri`` without its password, for messages."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


@cache
def unreachable_reason() -> str | None:
    """Why the test server cannot be used (asked once per run), or None."""
    uri = admin_uri()
    try:
        with psycopg.connect(uri, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"PostgreSQL at {redacted(uri)} is unreachable ({type(exc).__name__}: {exc})"
    return None


def require_postgres() -> str:
    """The admin URI; skips the test without a server, fails it under CI."""
    reason = unreachable_reason()
    if reason is not None:
        message = f"{reason}; set {ENV} to a PostgreSQL database to administer from"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return admin_uri()


def new_database_name() -> str:
    return f"{DATABASE_PREFIX}{uuid.uuid4().hex[:16]}"


def new_schema_name() -> str:
    return f"{SCHEMA_PREFIX}{uuid.uuid4().hex[:16]}"


@contextmanager
def session_database() -> Iterator[str]:
    """A new database for a whole test run (its URI), dropped at the end (sync, for a
    session-scoped fixture)."""
    require_postgres()
    name = new_database_name()
    with psycopg.connect(
        admin_uri(), autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
    ) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield database_uri(name)
    finally:
        with psycopg.connect(admin_uri(), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@asynccontextmanager
async def temporary_schema(database: str) -> AsyncIterator[str]:
    """A new, empty schema in ``database``: a URI whose sessions read and write there
    (as a database of its own would); dropped, with everything in it, on exit.

    Creating a database is slow, so the backend-parametrized tests share one database per
    run (``session_database``) and each gets a schema of its own in it: its URI sets
    ``search_path``, where the saver's unqualified table names land."""
    name = new_schema_name()
    async with await psycopg.AsyncConnection.connect(database, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield with_search_path(database, name)
    finally:
        async with await psycopg.AsyncConnection.connect(database, autocommit=True) as conn:
            await conn.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name))
            )


async def create_database(name: str) -> str:
    async with await psycopg.AsyncConnection.connect(
        admin_uri(), autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
    ) as conn:
        await conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return database_uri(name)


async def drop_database(name: str) -> None:
    async with await psycopg.AsyncConnection.connect(
        admin_uri(), autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS
    ) as conn:
        await conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@asynccontextmanager
async def temporary_database() -> AsyncIterator[str]:
    """A new, empty database on the test server (its URI); dropped on exit. Reusable by any
    test or benchmark::

        async with temporary_database() as uri:  # empty: no tables yet
            async with open_seeder(uri) as seeder:  # tables set up by AsyncPostgresSaver
                ..."""
    require_postgres()
    name = new_database_name()
    uri = await create_database(name)
    try:
        yield uri
    finally:
        await drop_database(name)


async def database_exists(name: str) -> bool:
    async with await psycopg.AsyncConnection.connect(admin_uri(), autocommit=True) as conn:
        cur = await conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        return await cur.fetchone() is not None


async def table_names(uri: str) -> list[str]:
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        return [row[0] for row in await cur.fetchall()]
