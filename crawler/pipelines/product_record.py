"""The product as every store writes it: its typed columns, the whole item, and the exact price.

The columns are :data:`crawler.core.items.COLUMNS` (the typed fields of
:class:`crawler.core.items.Product` the stores keep in columns of their own), then
``data``: :data:`ROW_COLUMNS` is the column list of every SQL statement that
writes a ``products`` row, and :meth:`ProductRecord.row` gives the values in
that order. A price history row follows :data:`crawler.core.items.OFFER_FIELDS`.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from itemadapter import ItemAdapter

from crawler.core.items import COLUMNS, OFFER_FIELDS
from crawler.pipelines.errors import RowRejected, describe_error
from crawler.schema import item_to_dict

#: The columns a store writes for each product, in this order.
ROW_COLUMNS: tuple[str, ...] = (*COLUMNS, "data")


def exact_price(value: Any) -> Decimal | None:
    """The price as an exact ``Decimal`` (``None`` stays ``None``); raises :class:`RowRejected`.

    A ``float`` is taken at its shortest decimal text (``19.9`` -> ``Decimal("19.9")``),
    a string after stripping white space; booleans, non-finite numbers and
    anything else are refused.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise RowRejected(f"price is not a number: {value!r}")
    try:
        if isinstance(value, Decimal):
            price = value
        elif isinstance(value, int):
            price = Decimal(value)
        elif isinstance(value, float):
            price = Decimal(repr(value)) if math.isfinite(value) else Decimal("NaN")
        elif isinstance(value, str):
            price = Decimal(value.strip())
        else:
            raise RowRejected(f"price is not a number: {value!r}")
    except InvalidOperation:
        raise RowRejected(f"price is not a number: {value!r}") from None
    if not price.is_finite():
        raise RowRejected(f"price is not a finite number: {value!r}")
    return price


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


def item_data(item: Any, key: str) -> tuple[dict[str, Any], Mapping[str, Any]]:
    """(the item as plain JSON-ready data, the item as it is, for its exact numbers);
    raises :class:`RowRejected` unless it is an item with a ``url`` and a ``key``
    (a product's name, a quote's symbol), both non-empty text."""
    try:
        data = item_to_dict(item)
    except Exception as exc:  # noqa: BLE001 - whatever it is, it cannot be stored
        raise RowRejected(f"not an item: {describe_error(exc)}") from exc
    raw = item if isinstance(item, Mapping) else ItemAdapter(item)
    for name in ("url", key):
        value = data.get(name)
        if not isinstance(value, str) or not value:
            raise RowRejected(f"no {name}")
    return data, raw


def data_as_json(data: dict[str, Any]) -> str:
    """The ``data`` column's text; raises :class:`RowRejected` for values JSON cannot hold."""
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError as exc:
        raise RowRejected(f"not JSON: {exc}") from exc


@dataclass(frozen=True)
class ProductRecord:
    """An item as the stores write it: the typed columns (:data:`crawler.core.items.COLUMNS`,
    in that order) plus the whole JSON-ready item."""

    url: str
    name: str
    price: Decimal | None
    currency: str | None
    availability: str | None
    sku: str | None
    worker: str
    data: dict[str, Any]
    data_json: str

    @classmethod
    def of(cls, item: Any, worker: str) -> ProductRecord:
        """The record of one item (``worker``: when the item names none); raises
        :class:`RowRejected` for data no store accepts."""
        data, raw = item_data(item, "name")
        data_json = data_as_json(data)
        columns: dict[str, Any] = {column: _text(data.get(column)) for column in COLUMNS}
        # the price is the one number: exact, from the item itself (data has it as a float)
        columns["price"] = exact_price(raw.get("price"))
        columns["worker"] = columns["worker"] or worker
        return cls(**columns, data=data, data_json=data_json)

    def row(self) -> tuple[Any, ...]:
        """The values of :data:`ROW_COLUMNS`, in that order (``data`` as JSON text)."""
        return (*(getattr(self, column) for column in COLUMNS), self.data_json)

    def offer(self) -> tuple[Any, ...]:
        """The values of :data:`crawler.core.items.OFFER_FIELDS` (price, currency, availability)."""
        return tuple(getattr(self, name) for name in OFFER_FIELDS)

    def same_offer(self, *previous: Any) -> bool:
        """Whether a stored offer (values in :data:`~crawler.core.items.OFFER_FIELDS` order) is
        this one: the price compared as a number, the rest as they are."""
        for old, new in zip(previous, self.offer(), strict=True):
            if isinstance(new, Decimal) and old is not None:
                if Decimal(str(old)) != new:
                    return False
            elif old != new:
                return False
        return True

    @property
    def crawled_at(self) -> dt.datetime | None:
        """When the page was fetched (the item's ``crawled_at``, UTC), if it says."""
        return utc_time(self.data.get("crawled_at"))


def utc_time(value: Any) -> dt.datetime | None:
    """An item's ISO 8601 time (``crawled_at``) in UTC (naive: taken as UTC); None when
    it is no such text."""
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


def latest_by_url(records: Sequence[ProductRecord]) -> list[ProductRecord]:
    """One record per url (the last one wins, as the latest crawl), sorted by url.

    An upsert cannot touch the same row twice in one statement, and writing rows
    in one order everywhere keeps concurrent workers from deadlocking.
    """
    latest = {record.url: record for record in records}
    return [latest[url] for url in sorted(latest)]
