"""The environment variables a worker reads, mapped onto Scrapy settings.

``REDIS_URL``, ``REDIS_CLUSTER``, ``REDIS_CLUSTER_SHARDS``, ``POSTGRES_DSN``,
``MONGO_URI``, ``MONGO_DATABASE``, ``WORKER_ID``, ``ALLOW_PRIVATE_NETWORKS``,
``MAX_IDLE_TIME_BEFORE_CLOSE``, ``EMBEDDED_STORE_PATH``, ``METRICS_PORT``,
``SITE_MAX_RPS``, ``PROXY_LIST``, ``BROWSER_RENDERING``, ``BROWSER_CONCURRENCY`` and
``BROWSER_EXECUTABLE`` are each also a Scrapy setting; the
environment sets the project default and ``-s NAME=VALUE`` on the command line
still wins over both.
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
from collections.abc import Mapping

from crawler.core import defaults

ENV_SETTINGS = (
    "REDIS_URL",
    "REDIS_CLUSTER",
    "REDIS_CLUSTER_SHARDS",
    "POSTGRES_DSN",
    "MONGO_URI",
    "MONGO_DATABASE",
    "WORKER_ID",
    "ALLOW_PRIVATE_NETWORKS",
    "MAX_IDLE_TIME_BEFORE_CLOSE",
    "EMBEDDED_STORE_PATH",
    "METRICS_PORT",
    "SITE_MAX_RPS",
    "PROXY_LIST",
    "BROWSER_RENDERING",
    "BROWSER_CONCURRENCY",
    "BROWSER_EXECUTABLE",
)


def env_overrides(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings given in the environment (unset or empty variables are ignored)."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in ENV_SETTINGS if env.get(name)}


@functools.cache
def default_worker_id() -> str:
    """``<hostname>-<pid>-<4 hex digits>``, drawn once per process.

    The random part keeps it unique where hostname and pid are not: replicas of
    a container on the host network, or processes in their own pid namespace,
    are all ``<host>-1``.
    """
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


def worker_id(settings) -> str:  # type: ignore[no-untyped-def]
    """``WORKER_ID`` or :func:`default_worker_id`; stable for the life of the process."""
    return settings.get("WORKER_ID", defaults.WORKER_ID) or default_worker_id()


def redact_dsn(dsn: str) -> str:
    """A connection string with its password replaced by ``***`` (for logs and reports)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(dsn)
    except ValueError:
        return "<unparseable>"
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return urlunsplit(parts._replace(netloc=netloc))
    if "password=" in dsn:
        import re

        return re.sub(r"password=\S+", "password=***", dsn)
    return dsn
