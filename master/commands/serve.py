"""``python -m master serve``: the control room in the browser and the JSON API.

Builds the application (:func:`master.web.app.create_app`) and serves it with
uvicorn. Without ``DASHBOARD_TOKEN`` only a loopback ``--host`` is accepted: any
other is refused with one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from crawler.net.network import SETTING as NETWORK_SETTING
from master.commands.base import EXIT_OK, EXIT_REDIS, Subcommands, _positive_int, err

if TYPE_CHECKING:
    from master.cli import Context

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8800
TOKEN_VARIABLE = "DASHBOARD_TOKEN"


def cmd_serve(ctx: Context, args: argparse.Namespace) -> int:
    from master.web.security import refusal

    token = os.environ.get(TOKEN_VARIABLE) or None
    refused = refusal(args.host, token)
    if refused is not None:
        err(refused)
        return EXIT_REDIS
    ctx.client.ping()  # Redis unreachable: the usual one-line error, exit 2

    import uvicorn

    from master.web.app import create_app
    from master.web.config import DashboardConfig

    config = DashboardConfig(
        redis_url=ctx.redis_url,
        keys=ctx.keys,
        store_args=args,
        token=token,
        max_body=args.max_body_mb * 1024 * 1024,
        allow_private_networks=os.environ.get(NETWORK_SETTING, ""),
    )
    shown = f"[{args.host}]" if ":" in args.host else args.host
    err(
        f"dashboard on http://{shown}:{args.port}/ (crawl {ctx.keys.spider!r}, Redis "
        f"{ctx.shown_url}; {'token required' if token else 'no token: loopback only'})"
    )
    uvicorn.run(
        create_app(config),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
        server_header=False,
    )
    return EXIT_OK


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "serve",
        help="the web dashboard and the JSON API (/api/v1)",
        description=(
            "Serve the dashboard (state, figures, chart, workers, seeds, pause/resume, dead "
            "letters, invalid items, products, export) and the JSON API under /api/v1 "
            "(OpenAPI document at /api/v1/openapi.json; /healthz for probes). Without "
            f"${TOKEN_VARIABLE} it serves on a loopback address only and refuses any other "
            f"--host (exit 2); with it every page and call needs the token (Authorization: "
            "Bearer, or the login form's session cookie). Products come from the store the "
            "workers write to, chosen as `export` chooses it."
        ),
        examples=[
            "serve",
            "serve --port 8900",
            "serve --host 0.0.0.0  # with DASHBOARD_TOKEN set",
        ],
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--max-body-mb",
        type=_positive_int,
        default=16,
        metavar="MB",
        help="largest request body (a seed upload) in MiB; larger ones get 413 (default 16)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=("critical", "error", "warning", "info", "debug"),
        help="uvicorn's log level (default info)",
    )
    parser.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="log each request (method, path, status; never a token) (default on)",
    )
    from master.stores import add_store_options

    add_store_options(parser)
    parser.set_defaults(handler=cmd_serve)
