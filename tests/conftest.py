"""Fixtures for real services: Redis and PostgreSQL are required, never mocked or skipped.

``TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/15``) names a Redis database
the tests may flush; ``TEST_POSTGRES_DSN`` (default
``postgresql://postgres@127.0.0.1:5432/postgres``) a server where the tests may
create and drop their own databases. When either cannot be reached the tests
that need it fail with the reason: a missing service is an error, not a skip.

Under pytest-xdist (``-n``), worker ``gwK`` flushes database N - K of
``TEST_REDIS_URL``'s N instead, so that workers never flush each other's data;
everything else a test starts (redis-servers, shops, workers, PostgreSQL
databases) has a port or a name of its own already.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from tools.redis_server import RedisServer


def _worker_database(url: str, worker: str | None) -> str:
    """``url`` for pytest-xdist worker ``worker`` (``gw0``, ``gw1``...): database N - K."""
    if not worker:
        return url
    parts = urlsplit(url)
    database = int(parts.path.lstrip("/") or 0) - int(worker.removeprefix("gw"))
    if database < 0:
        raise pytest.UsageError(f"TEST_REDIS_URL={url}: no database left for xdist worker {worker}")
    return urlunsplit(parts._replace(path=f"/{database}"))


TEST_REDIS_URL = _worker_database(
    os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15"),
    os.environ.get("PYTEST_XDIST_WORKER"),
)
TEST_POSTGRES_DSN = os.environ.get(
    "TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"
)


@pytest.fixture
def redis_url() -> Iterator[str]:
    """The shared test Redis database, emptied before and after the test."""
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis is required at TEST_REDIS_URL={TEST_REDIS_URL}: {exc}", pytrace=False)
    client.flushdb()
    yield TEST_REDIS_URL
    client.flushdb()
    client.close()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def private_redis(tmp_path) -> Iterator[RedisServer]:  # type: ignore[no-untyped-def]
    """A redis-server of the test's own, with append-only persistence, that it may kill."""
    server = RedisServer(data_dir=tmp_path / "redis", appendonly=True).start()
    yield server
    server.cleanup()


def _with_dbname(dsn: str, dbname: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + dbname))


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for the test, dropped afterwards."""
    import psycopg2

    try:
        admin = psycopg2.connect(TEST_POSTGRES_DSN, connect_timeout=5)
    except psycopg2.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is required at TEST_POSTGRES_DSN={TEST_POSTGRES_DSN}: {exc}",
            pytrace=False,
        )
    admin.autocommit = True
    name = f"crawler_test_{uuid.uuid4().hex[:12]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_dbname(TEST_POSTGRES_DSN, name)
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The soak test (a minute and a half of a slow crawl) first: under pytest-xdist one
    worker runs it while the other runs the rest, instead of ending the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("soak") is None)
