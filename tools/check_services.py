"""Fail fast, with what to do, when the services the tests need are not there."""

from __future__ import annotations

import os
import shutil
import sys

import psycopg2
import redis


def main() -> int:
    redis_url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    pg_dsn = os.environ.get("TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    problems = []
    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        problems.append(
            f"Redis is not reachable at TEST_REDIS_URL={redis_url} ({exc}).\n"
            "  Start one (redis-server --daemonize yes) or point TEST_REDIS_URL at one."
        )
    try:
        psycopg2.connect(pg_dsn, connect_timeout=3).close()
    except psycopg2.Error as exc:
        problems.append(
            f"PostgreSQL is not reachable at TEST_POSTGRES_DSN={pg_dsn} ({str(exc).strip()}).\n"
            "  Start one, or point TEST_POSTGRES_DSN at a server where the tests may create "
            "databases."
        )
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
