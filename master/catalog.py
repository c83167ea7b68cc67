"""Browsing the products: one page at a time by cursor, and a product's price history.

:class:`ProductQuery` is what a page asks for; each store of :mod:`master.stores`
answers it (``page``) with one statement (PostgreSQL, SQLite) or one query (MongoDB),
in URL order. :func:`product_page` is what ``GET /api/v1/products`` answers: the
products and the cursor of the next page, an opaque token that names the last URL
shown. Paging by the unique URL (keyset) keeps pages stable while workers insert:
a product is never shown twice nor skipped because others were added before it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from master.stores import ProductStore

MAX_LIMIT = 500


@dataclass(frozen=True)
class ProductQuery:
    """One page of products in URL order: those after ``after`` (the cursor), whose name
    contains ``q`` (any case), on host ``site``, with ``availability``. Keyset paging on
    the unique URL, so a page never repeats nor skips a product when others are inserted."""

    q: str | None = None
    site: str | None = None
    availability: str | None = None
    limit: int = 50
    after: str | None = None

    def sql_params(self) -> dict[str, Any]:
        def like(text: str) -> str:
            return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

        return {
            "after": self.after,
            "q": self.q,
            "q_like": f"%{like(self.q)}%" if self.q else None,
            "site": self.site,
            "http": f"http://{like(self.site)}/%" if self.site else None,
            "https": f"https://{like(self.site)}/%" if self.site else None,
            "availability": self.availability,
            "limit": self.limit,
        }


# one statement for PostgreSQL (%(name)s) and SQLite (:name, LIKE: any case for ASCII)
_PAGE_SQL = (
    "SELECT data, first_seen, last_seen FROM products WHERE (:after IS NULL OR url > :after) "
    "AND (:q IS NULL OR name {like} :q_like ESCAPE '\\') "
    "AND (:site IS NULL OR url LIKE :http ESCAPE '\\' OR url LIKE :https ESCAPE '\\') "
    "AND (:availability IS NULL OR availability = :availability) ORDER BY url LIMIT :limit"
)
#: the history's columns as read; those added since its first version (the pipelines add
#: them when a worker of a later version opens the store: ``crawler.pipelines.postgres``,
#: ``crawler.pipelines.embedded``) are read from an older store as the value its rows
#: would get (a reading of the product page), so the master reads any store as it is
HISTORY_COLUMNS = (
    *("price", "currency", "availability", "worker", "seen_at"),
    *("source", "listing_url"),
)
_LATER_HISTORY_COLUMNS = {"source": "'page'", "listing_url": "NULL"}
#: the columns of the history table PostgreSQL resolves (none: no table)
PG_HISTORY_COLUMNS = (
    "SELECT column_name FROM information_schema.columns WHERE table_name = "
    "'product_price_history' AND table_schema = ANY(current_schemas(false))"
)


def history_sql(have: Collection[str], url: str) -> str | None:
    """The price history's query of a table with the columns ``have`` (none: there is no
    table, and no query); ``url`` is the driver's placeholder."""
    if not have:
        return None
    columns = ", ".join(
        column
        if column in have or column not in _LATER_HISTORY_COLUMNS
        else f"{_LATER_HISTORY_COLUMNS[column]} AS {column}"
        for column in HISTORY_COLUMNS
    )
    return f"SELECT {columns} FROM product_price_history WHERE url = {url} ORDER BY seen_at, id"


def pg_page_sql(sql: str) -> str:
    """A page query of named ``:parameters`` (SQLite's style) in psycopg2's, each
    parameter tested for NULL typed as text (PostgreSQL cannot infer the type of a
    parameter that is only compared with NULL)."""
    named = re.sub(r":(\w+)", r"%(\1)s", sql)
    return re.sub(r"%\((\w+)\)s IS NULL", r"%(\1)s::text IS NULL", named)


_PG_PAGE_SQL = pg_page_sql(_PAGE_SQL.format(like="ILIKE"))


def encode_cursor(url: str) -> str:
    return base64.urlsafe_b64encode(url.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The URL a cursor names; ``ValueError`` when it is not one of ours."""
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
        if not raw:
            raise ValueError("empty")
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError(f"not a cursor: {cursor!r}") from None


def product_page(
    store: ProductStore, query: ProductQuery
) -> tuple[list[dict[str, Any]], str | None]:
    """The products of one page and the cursor of the next (``None``: this is the last)."""
    rows = store.page(replace(query, limit=query.limit + 1))
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    return rows, encode_cursor(rows[-1]["url"]) if more and rows else None
