"""The master's command line: the parser, the context every command gets, and ``main()``.

Each command lives in its own module of :mod:`master.commands` (``seed``, ``status``,
``pause``, ``resume``, ``report``, ``reset``, ``dead``, ``metrics``, ``invalid``,
``export``, ``recrawl``, ``bench``, ``serve``), which registers its sub-parser and holds its
handler; :mod:`master.commands.base` has what they share.

Exit codes (every command):

====  ==================================================================
0     done
1     nothing done: no valid seed given, confirmation refused or missing,
      live workers block a reset, a dead letter could not be requeued
2     Redis unreachable or failing (one line on stderr says which URL and
      what to do), or a usage error (also: a crawl recorded on a cluster
      with another REDIS_CLUSTER_SHARDS, for the commands that write it)
130   interrupted with Ctrl-C
====  ==================================================================
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable
from types import ModuleType

import redis

from crawler.core.config import redact_dsn
from crawler.core.keys import SPIDER_NAME, CrawlKeys
from crawler.core.layout import LayoutMismatch
from master.commands import (
    bench,
    checks,
    dead,
    export,
    invalid,
    metrics,
    pause,
    recrawl,
    report,
    reset,
    resume,
    seed,
    serve,
    status,
)
from master.commands.base import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_REDIS,
    Subcommands,
    err,
)
from master.connection import (
    DEFAULT_REDIS_URL,
    MasterRedisError,
    cluster_enabled,
    cluster_shards,
    connect,
    explain,
    resolve_redis_url,
)

# every command, in the order of `--help`: name -> the module that registers it
COMMANDS: dict[str, ModuleType] = {
    "seed": seed,
    "status": status,
    "pause": pause,
    "resume": resume,
    "report": report,
    "reset": reset,
    "dead": dead,
    "metrics": metrics,
    "invalid": invalid,
    "export": export,
    "recrawl": recrawl,
    "bench": bench,
    "serve": serve,
    "checks": checks,
}


class Context:
    """What every command needs: the options, the key names, a lazily opened client."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.redis_url = resolve_redis_url(getattr(args, "redis_url", None))
        self.shown_url = redact_dsn(self.redis_url)
        self.cluster = cluster_enabled()
        self.keys = CrawlKeys.layout(
            getattr(args, "spider", None) or SPIDER_NAME,
            cluster=self.cluster,
            shards=cluster_shards() if self.cluster else 0,
        )
        self._client: redis.Redis | None = None

    def keys_of(self, spider: str) -> CrawlKeys:
        """Another spider's keys, in this crawl's layout (``status --all-spiders``)."""
        return CrawlKeys.layout(spider, cluster=self.cluster, shards=self.keys.shards)

    @property
    def client(self) -> redis.Redis:
        if self._client is None:
            self._client = connect(self.redis_url, cluster=self.cluster)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


def _common_options() -> argparse.ArgumentParser:
    """``--redis-url`` and ``--spider``, accepted before or after the command name."""
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("global options")
    group.add_argument(
        "--redis-url",
        metavar="URL",
        default=argparse.SUPPRESS,
        help=f"the crawl's Redis (default: $REDIS_URL, else {DEFAULT_REDIS_URL}); with "
        "REDIS_CLUSTER=true a node of the Redis Cluster, or several, comma-separated",
    )
    group.add_argument(
        "--spider",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help=f"the spider whose crawl (keys NAME:*, items, stores) the command is about "
        f"(default: {SPIDER_NAME}; the other: finance)",
    )
    return common


def build_parser(prog: str = "python -m master") -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog=prog,
        description=textwrap.fill(
            "Control plane of the distributed crawler: seeds, status, pause/resume, report, "
            "reset, dead letters. Exit codes: 0 done, 1 nothing done (see each command), "
            "2 Redis unreachable or usage error, 130 interrupted.",
            79,
        ),
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        + "\n".join(
            f"  {prog} {example}"
            for example in (
                "seed seeds.txt",
                "status",
                "pause",
                "resume",
                "report",
                "reset --yes",
                "dead requeue",
                "COMMAND --help",
            )
        ),
    )
    commands = Subcommands(
        parser.add_subparsers(dest="command", metavar="COMMAND", required=True), common, prog
    )
    for module in COMMANDS.values():
        module.register(commands)
    return parser


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run one command; return its exit code (never raises, never prints a traceback)."""
    parser = build_parser(prog or os.path.basename(sys.argv[0] or "master"))
    ctx: Context | None = None
    try:
        args = parser.parse_args(argv)
        ctx = Context(args)
        handler: Callable[[Context, argparse.Namespace], int] = args.handler
        return handler(ctx, args)
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_REDIS
    except (MasterRedisError, LayoutMismatch) as exc:
        err(f"error: {exc}")
        return EXIT_REDIS
    except redis.RedisError as exc:
        err(f"error: {explain(exc, ctx.redis_url if ctx else DEFAULT_REDIS_URL)}")
        return EXIT_REDIS
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into head, less, ...
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    finally:
        if ctx is not None:
            ctx.close()
