"""Product pages by cursor and price histories, from each store the workers write to.

The products are written by the real pipelines (PostgreSQL and the embedded SQLite
store real, MongoDB through mongomock, as in ``test_master_export``); the pages and
histories are read by ``master.stores`` as ``GET /api/v1/products`` reads them.
"""

from __future__ import annotations

import argparse
from typing import Any

from master.catalog import ProductQuery, decode_cursor, product_page
from master.stores import open_store
from tests.integration.test_master_export import (  # noqa: F401 (fixtures)
    COUNT,
    Store,
    mongo_client,
    store,
)
from tests.support.products import make_product


def options(filled: Store) -> argparse.Namespace:
    args = dict(zip(filled.args[::2], filled.args[1::2], strict=True))
    return argparse.Namespace(
        postgres_dsn=args.get("--postgres-dsn"),
        mongo_uri=args.get("--mongo-uri"),
        mongo_database=None,
        store_path=args.get("--store-path"),
        batch_size=10,
    )


def every_page(opened: Any, query: ProductQuery) -> list[str]:
    urls: list[str] = []
    while True:
        items, cursor = product_page(opened, query)
        urls += [item["url"] for item in items]
        if cursor is None:
            return urls
        query = ProductQuery(
            query.q, query.site, query.availability, query.limit, decode_cursor(cursor)
        )


def test_pages_filters_and_history_in_every_store(store: Store) -> None:  # noqa: F811
    opened = open_store(options(store))
    try:
        everything = every_page(opened, ProductQuery(limit=7))
        assert len(everything) == COUNT == len(set(everything))
        assert everything == sorted(everything)
        first, _ = product_page(opened, ProductQuery(limit=3))
        assert {"url", "name", "price", "first_seen", "last_seen"} <= set(first[0])

        assert every_page(opened, ProductQuery(q="PRODUCT 1", limit=50)) == sorted(
            make_product(i)["url"] for i in (1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
        )
        assert every_page(opened, ProductQuery(q="groß", limit=50)) == [make_product(COUNT)["url"]]
        assert len(every_page(opened, ProductQuery(site="shop.example", limit=50))) == COUNT
        assert every_page(opened, ProductQuery(site="shop.exampl", limit=50)) == []
        assert every_page(opened, ProductQuery(availability="OutOfStock", limit=50)) == []
        assert len(every_page(opened, ProductQuery(availability="InStock", limit=50))) == COUNT

        url = make_product(2)["url"]
        history = opened.history(url)
        assert [(h["price"], h["currency"], h["availability"]) for h in history] == [
            (12.99, "EUR", "InStock")
        ]
        assert history[0]["seen_at"].endswith("+00:00")
        assert opened.history("https://shop.example/none") == []
    finally:
        opened.close()
