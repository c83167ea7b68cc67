"""The quote as every store writes it: its typed columns, the whole item, its observation.

The columns are :data:`crawler.core.items.QUOTE_COLUMNS`, then ``data``
(:data:`QUOTE_ROW_COLUMNS`, the column list of every statement that writes a
``quotes`` row); an observation (a ``quote_history`` row) is
:data:`crawler.core.items.QUOTE_OBSERVATION`, then ``seen_at``.

Two rules every quote store follows (:func:`batch_plan`):

* ``quotes`` keeps the **latest** quote of each url: a row is replaced only by a
  quote whose ``as_of`` is the same or later, so a late write of an older
  observation (a slow worker, a retried batch) never hides a newer one; its
  ``last_seen`` moves on in any case;
* at the same ``as_of``, a market table's row (:mod:`crawler.extraction.quotes.tables`,
  its price's provenance ``table``) does not replace a quote page's reading: the same
  observation, with fewer fields (:func:`replaces`);
* ``quote_history`` has one row per ``(url, as_of)``: a re-fetch of the same
  quote adds nothing. A page that shows no time gets the fetch time as its
  ``as_of``; such an observation is recorded only when its price, currency or
  volume differ from the url's latest one, so an unchanged quote re-fetched adds
  nothing either.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from crawler.core.items import QUOTE_COLUMNS, QUOTE_OBSERVATION
from crawler.pipelines.errors import RowRejected
from crawler.pipelines.product_record import data_as_json, exact_price, item_data

#: The columns a store writes for each quote, in this order.
QUOTE_ROW_COLUMNS: tuple[str, ...] = (*QUOTE_COLUMNS, "data")
#: The columns of a ``quote_history`` row, in this order.
HISTORY_COLUMNS: tuple[str, ...] = (*QUOTE_OBSERVATION, "seen_at")


def parse_time(value: Any) -> dt.datetime | None:
    """An aware UTC ``datetime`` from RFC 3339 text (``None`` when it is not one)."""
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, str):
        try:
            when = dt.datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            return None
    else:
        return None
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


def _volume(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal | float | str):
        raise RowRejected(f"volume is not a whole number: {value!r}")
    try:
        number = Decimal(str(value).strip())
    except ArithmeticError:
        raise RowRejected(f"volume is not a whole number: {value!r}") from None
    if not number.is_finite() or number != number.to_integral_value():
        raise RowRejected(f"volume is not a whole number: {value!r}")
    if abs(number) >= 2**63:
        raise RowRejected(f"volume out of range: {value!r}")
    return int(number)


@dataclass(frozen=True)
class QuoteRecord:
    """A quote item as the stores write it: the typed columns (:data:`QUOTE_ROW_COLUMNS`)
    and the whole JSON-ready item."""

    url: str
    symbol: str
    name: str | None
    exchange: str | None
    price: Decimal
    currency: str | None
    change: Decimal | None
    volume: int | None
    market_cap: Decimal | None
    as_of: dt.datetime
    data: dict[str, Any]
    data_json: str
    #: the page showed no time: ``as_of`` is the fetch time
    fetch_time: bool = False

    @classmethod
    def of(cls, item: Any, worker: str) -> QuoteRecord:
        """The record of one item (``worker``: kept in ``data`` when the item names none);
        raises :class:`RowRejected` for data no store accepts."""
        data, raw = item_data(item, "symbol")
        url, symbol = data["url"], data["symbol"]
        as_of = parse_time(data.get("as_of"))
        if as_of is None:
            raise RowRejected(f"as_of is not a time: {data.get('as_of')!r}")
        data.setdefault("worker", worker)
        data_json = data_as_json(data)
        price = exact_price(raw.get("price"))
        if price is None:
            raise RowRejected("no price")
        provenance = data.get("provenance")
        fetched = isinstance(provenance, dict) and provenance.get("as_of") == "fetch"
        return cls(
            url=url,
            symbol=symbol,
            name=_text(data.get("name")),
            exchange=_text(data.get("exchange")),
            price=price,
            currency=_text(data.get("currency")),
            change=exact_price(raw.get("change")),
            volume=_volume(raw.get("volume")),
            market_cap=exact_price(raw.get("market_cap")),
            as_of=as_of,
            data=data,
            data_json=data_json,
            fetch_time=fetched,
        )

    def row(self) -> tuple[Any, ...]:
        """The values of :data:`QUOTE_ROW_COLUMNS`, in that order (``data`` as JSON text)."""
        return (*(getattr(self, column) for column in QUOTE_COLUMNS), self.data_json)

    def observation(self) -> tuple[Any, ...]:
        """The values of :data:`crawler.core.items.QUOTE_OBSERVATION`, in that order."""
        return tuple(getattr(self, name) for name in QUOTE_OBSERVATION)

    def same_values(self, price: Any, currency: Any, volume: Any) -> bool:
        """Whether a stored observation's price (as a number), currency and volume are ours."""
        if price is None or Decimal(str(price)) != self.price:
            return False
        stored_volume = None if volume is None else int(volume)
        return bool(currency == self.currency and stored_volume == self.volume)

    @property
    def from_table(self) -> bool:
        """Read from a row of a market table (its price's provenance is ``table``)."""
        return from_table(self.data)

    @property
    def crawled_at(self) -> dt.datetime | None:
        """When the page was fetched (the item's ``crawled_at``, UTC), if it says."""
        return parse_time(self.data.get("crawled_at"))


def from_table(data: Any) -> bool:
    """Whether a quote's data (an item, a stored document) was read from a market table."""
    provenance = data.get("provenance") if isinstance(data, dict) else None
    return isinstance(provenance, dict) and provenance.get("price") == "table"


def replaces(record: QuoteRecord, as_of: dt.datetime, table: bool) -> bool:
    """Whether ``record`` replaces a stored quote of ``as_of`` (``table``: read from a
    market table): a later one does; one of the same time does unless it is a table's
    row and the stored one a page's."""
    return record.as_of > as_of or (record.as_of == as_of and (table or not record.from_table))


def _text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else str(value)


@dataclass(frozen=True)
class BatchPlan:
    """What a store writes for one batch: the latest quote of each url (sorted by url, to
    write rows in one order everywhere) and the distinct observations (sorted by url and
    ``as_of``), those of a fetch time already reduced to the changes within the batch."""

    latest: list[QuoteRecord]
    observations: list[QuoteRecord]


def batch_plan(records: Sequence[QuoteRecord]) -> BatchPlan:
    latest: dict[str, QuoteRecord] = {}
    observed: dict[tuple[str, dt.datetime], QuoteRecord] = {}
    for record in records:
        kept = latest.get(record.url)
        if kept is None or replaces(record, kept.as_of, kept.from_table):
            latest[record.url] = record
        observed.setdefault((record.url, record.as_of), record)
    observations: list[QuoteRecord] = []
    for key in sorted(observed):
        record = observed[key]
        previous = observations[-1] if observations else None
        if (
            record.fetch_time
            and previous is not None
            and previous.url == record.url
            and record.same_values(previous.price, previous.currency, previous.volume)
        ):
            continue  # an unchanged quote fetched twice in one batch: one observation
        observations.append(record)
    return BatchPlan([latest[url] for url in sorted(latest)], observations)
