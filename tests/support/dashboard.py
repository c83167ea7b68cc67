"""``master serve``'s application on a real uvicorn, in a thread of the test, on a free port."""

from __future__ import annotations

import argparse
import threading
import time
from types import TracebackType

import uvicorn

from crawler.core.keys import CrawlKeys
from master.web.app import create_app
from master.web.config import DashboardConfig
from tests.support.net import free_port


def store_args(
    postgres_dsn: str | None = None, store_path: str | None = None
) -> argparse.Namespace:
    """The store options as ``export`` and ``serve`` parse them."""
    return argparse.Namespace(
        postgres_dsn=postgres_dsn,
        mongo_uri=None,
        mongo_database=None,
        store_path=store_path,
        batch_size=100,
    )


class DashboardServer:
    """The dashboard served by uvicorn until the ``with`` block ends."""

    def __init__(self, config: DashboardConfig) -> None:
        self.config = config
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        server_config = uvicorn.Config(
            create_app(config), host="127.0.0.1", port=self.port, log_level="warning"
        )
        self.server = uvicorn.Server(server_config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> DashboardServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the dashboard did not start")
            time.sleep(0.02)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def dashboard(
    redis_url: str,
    *,
    token: str | None = None,
    max_body: int = 1024 * 1024,
    postgres_dsn: str | None = None,
    store_path: str | None = None,
    allow: str = "127.0.0.1",
) -> DashboardServer:
    config = DashboardConfig(
        redis_url=redis_url,
        keys=CrawlKeys(),
        store_args=store_args(postgres_dsn, store_path),
        token=token,
        max_body=max_body,
        allow_private_networks=allow,
    )
    return DashboardServer(config)
