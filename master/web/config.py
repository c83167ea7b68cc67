"""What ``master serve`` was started with, and the dependencies its routes receive."""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field

import redis
from fastapi import HTTPException, Request

from crawler.keys import CrawlKeys
from master.connection import connect
from master.stores import ProductStore, StoreError, open_store

DEFAULT_MAX_BODY = 16 * 1024 * 1024  # bytes of a request body (a seed upload)


@dataclass
class DashboardConfig:
    """The crawl (Redis, spider), the product store's options (as ``export`` takes them),
    the token (``None``: loopback only, no login), and the limits."""

    redis_url: str
    keys: CrawlKeys
    store_args: argparse.Namespace
    token: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    allow_private_networks: str = ""
    # signs the browser sessions; new at each start (a restart asks browsers to log in again)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    _client: redis.Redis | None = field(default=None, repr=False)

    @property
    def client(self) -> redis.Redis:
        if self._client is None:
            self._client = connect(self.redis_url, cluster=self.keys.cluster)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def get_config(request: Request) -> DashboardConfig:
    config: DashboardConfig = request.app.state.config
    return config


def get_store(request: Request) -> Iterator[ProductStore]:
    """The product store, opened for one request and closed after it."""
    try:
        store = open_store(get_config(request).store_args)
    except StoreError as exc:
        raise HTTPException(503, f"product store: {exc}") from None
    try:
        yield store
    finally:
        store.close()
