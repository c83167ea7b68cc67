"""Fixtures for real services: Redis and PostgreSQL are required, never mocked or skipped.

``TEST_REDIS_URL`` names a Redis database the tests may flush; ``TEST_POSTGRES_DSN``
a PostgreSQL server where the tests may create and drop their own databases. Each
one unset is replaced by a private server that the run starts for itself and stops
at its end (:mod:`tools.test_services`); the run's header says which are used.
When a server named cannot be reached the tests that need it fail with the
reason: a missing service is an error, not a skip.

Under pytest-xdist (``-n``), worker ``gwK`` flushes database N - K of
``TEST_REDIS_URL``'s N instead, so that workers never flush each other's data;
everything else a test starts (redis-servers, shops, workers, PostgreSQL
databases) has a port or a name of its own already.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from tools import workers
from tools.forkserver import ForkServer
from tools.redis_server import RedisServer
from tools.test_services import POSTGRES_VARIABLE, REDIS_VARIABLE, TestServices, start_for


def _worker_database(url: str, worker: str | None) -> str:
    """``url`` for pytest-xdist worker ``worker`` (``gw0``, ``gw1``...): database N - K."""
    if not worker:
        return url
    parts = urlsplit(url)
    database = int(parts.path.lstrip("/") or 0) - int(worker.removeprefix("gw"))
    if database < 0:
        raise pytest.UsageError(f"TEST_REDIS_URL={url}: no database left for xdist worker {worker}")
    return urlunsplit(parts._replace(path=f"/{database}"))


SERVICES = pytest.StashKey[TestServices]()
STARTED = pytest.StashKey[float]()
# set by scripts/test (Unix time): the run's time then includes bootstrap, ruff and mypy
SCRIPT_STARTED_VARIABLE = "SCRIPTS_TEST_STARTED"


def pytest_configure(config: pytest.Config) -> None:
    """Start the services whose variables are unset, once per run: in pytest-xdist's
    controller (its test processes, started later, inherit the variables)."""
    if hasattr(config, "workerinput"):
        return
    try:
        services = start_for(os.environ)
    except (RuntimeError, OSError) as exc:
        raise pytest.UsageError(f"could not start the test services: {exc}") from exc
    config.stash[SERVICES] = services
    config.stash[STARTED] = time.time()
    config.add_cleanup(services.stop)


def pytest_report_header(config: pytest.Config) -> str | None:
    services = config.stash.get(SERVICES, None)
    return services.describe() if services is not None else None


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The run's services, and its time (from scripts/test's start when it ran pytest)."""
    services = config.stash.get(SERVICES, None)
    if services is None:
        return
    terminalreporter.write_line(services.describe())
    now = time.time()
    line = f"time: pytest {_minutes(now - config.stash[STARTED])}"
    script_started = os.environ.get(SCRIPT_STARTED_VARIABLE, "")
    if script_started.replace(".", "", 1).isdigit():
        whole = _minutes(now - float(script_started))
        line += f"; scripts/test {whole} so far (with bootstrap, ruff and mypy)"
    terminalreporter.write_line(line)


def _test_redis_url() -> str:
    return _worker_database(os.environ[REDIS_VARIABLE], os.environ.get("PYTEST_XDIST_WORKER"))


@pytest.fixture
def redis_url() -> Iterator[str]:
    """The shared test Redis database, emptied before and after the test."""
    url = _test_redis_url()
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis is required at TEST_REDIS_URL={url}: {exc}", pytrace=False)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="module")
def module_redis() -> Iterator[RedisServer]:
    """A redis-server of the test module's own, for tests that count commands in the
    server-wide ``INFO commandstats``: the other test processes' use of the shared
    server (``redis_url``) would swell the counts."""
    server = RedisServer(appendonly=False).start()
    yield server
    server.cleanup()


@pytest.fixture
def private_redis(tmp_path) -> Iterator[RedisServer]:  # type: ignore[no-untyped-def]
    """A redis-server of the test's own, with append-only persistence, that it may kill."""
    server = RedisServer(data_dir=tmp_path / "redis", appendonly=True).start()
    yield server
    server.cleanup()


@pytest.fixture(scope="session", autouse=True)
def worker_fork_server() -> Iterator[None]:
    """Workers forked from a process that has imported Scrapy once (:mod:`tools.forkserver`):
    about 1.3 s of CPU saved a worker, a few hundred workers a run. They are the same
    ``scrapy crawl`` processes; ``TEST_WORKER_FORKSERVER=0`` starts each with its own
    interpreter (``python -m scrapy crawl``) instead. Started at the first worker."""
    if os.environ.get("TEST_WORKER_FORKSERVER", "1") == "0":
        yield
        return
    server = ForkServer()
    workers.FORK_SERVER = server
    try:
        yield
    finally:
        workers.FORK_SERVER = None
        server.close()


def _with_dbname(dsn: str, dbname: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + dbname))


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for the test, dropped afterwards."""
    import psycopg2

    server = os.environ[POSTGRES_VARIABLE]
    try:
        admin = psycopg2.connect(server, connect_timeout=5)
    except psycopg2.OperationalError as exc:
        pytest.fail(f"PostgreSQL is required at TEST_POSTGRES_DSN={server}: {exc}", pytrace=False)
    admin.autocommit = True
    name = f"crawler_test_{uuid.uuid4().hex[:12]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_dbname(server, name)
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


# A rough cost of a test in seconds, from its markers, for the order below: the soak
# test is the longest (about a minute), a worker-process test takes 5 to 30 s, the others
# well under a second each.
SOAK_COST = 60.0
WORKERS_COST = 10.0
OTHER_COST = 0.1


def _cost(item: pytest.Item) -> float:
    if item.get_closest_marker("soak") is not None:
        return SOAK_COST
    return WORKERS_COST if item.get_closest_marker("workers") is not None else OTHER_COST


def _chunk_sizes(total: int, processes: int) -> list[int]:
    """How pytest-xdist's ``--dist worksteal`` first splits ``total`` tests: into
    ``processes`` contiguous chunks, each ``pending // processes left``."""
    sizes = []
    for left in range(processes, 0, -1):
        sizes.append(total // left)
        total -= sizes[-1]
    return sizes


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long tests at the head of every process's share, the short ones after them.

    Under ``--dist worksteal`` each of the N processes first gets one contiguous
    Nth of the collection, and a process that runs out takes the second half of
    another's queue. So the worker-process tests (by module, heaviest first: a
    module's fixtures are set up once per process that runs it) are dealt to the N
    shares, each to the lightest so far, and head them: all N processes crawl from
    the start, and what is left at the end, to be shared out, is short tests. With
    no xdist (``-n 0``) the order is the same with one share: the long ones first.
    """
    workerinput = getattr(config, "workerinput", None)
    processes = int(workerinput["workercount"]) if workerinput else 1
    modules: dict[str, list[pytest.Item]] = {}
    light: list[pytest.Item] = []
    for item in items:
        if _cost(item) > OTHER_COST:
            modules.setdefault(item.nodeid.split("::")[0], []).append(item)
        else:
            light.append(item)
    groups = sorted(modules.values(), key=lambda group: -sum(map(_cost, group)))
    heads: list[list[pytest.Item]] = [[] for _ in range(processes)]
    for group in groups:
        min(heads, key=lambda head: sum(map(_cost, head))).extend(group)
    ordered: list[pytest.Item] = []
    for head, size in zip(heads, _chunk_sizes(len(items), processes), strict=True):
        ordered += head
        take = max(0, size - len(head))
        ordered += light[:take]
        del light[:take]
    items[:] = ordered + light
