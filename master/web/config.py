"""What ``master serve`` was started with, and the dependencies its routes receive."""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

import redis
from fastapi import HTTPException, Query, Request

from crawler.core.itemkinds import PRODUCT, QUOTE, SPIDERS
from crawler.core.keys import CrawlKeys
from master.connection import connect
from master.quotestore import open_quote_store
from master.stores import ProductStore, StoreError, open_store

SPIDER_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"

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


def spiders_of(config: DashboardConfig) -> list[str]:
    """The spiders the dashboard offers: the project's, and the one serve was started with."""
    names = list(SPIDERS)
    if config.keys.spider not in names:
        names.insert(0, config.keys.spider)
    return names


def keys_for(config: DashboardConfig, spider: str | None) -> CrawlKeys:
    """The keys of ``spider``'s crawl (default: the one serve was started with), in the
    layout of the served crawl (one Redis, or the cluster's shards)."""
    if not spider or spider == config.keys.spider:
        return config.keys
    shards = config.keys.shards if config.keys.cluster else 0
    return CrawlKeys.layout(spider, cluster=config.keys.cluster, shards=shards)


def get_keys(
    request: Request,
    spider: Annotated[
        str | None,
        Query(
            pattern=SPIDER_NAME,
            description="the spider whose crawl this is about (default: the one `master "
            "serve --spider` names, else ecommerce)",
        ),
    ] = None,
) -> CrawlKeys:
    return keys_for(get_config(request), spider)


def _opened(request: Request, kind: str) -> Iterator[ProductStore]:
    args = get_config(request).store_args
    try:
        store = open_quote_store(args) if kind == QUOTE.name else open_store(args)
    except StoreError as exc:
        raise HTTPException(503, f"{kind} store: {exc}") from None
    try:
        yield store
    finally:
        store.close()


def get_store(request: Request) -> Iterator[ProductStore]:
    """The product store, opened for one request and closed after it."""
    yield from _opened(request, PRODUCT.name)


def get_quote_store(request: Request) -> Iterator[ProductStore]:
    """The quote store, opened for one request and closed after it."""
    yield from _opened(request, QUOTE.name)
