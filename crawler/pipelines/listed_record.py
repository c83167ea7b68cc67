"""A listed product as the product stores write it: an observation of the product at its url.

A listed product (:class:`crawler.core.items.ListedProduct`, a card of a listing page) is
no product of its own: each store applies it to the product's row with
:func:`observe`, the one rule of every store:

* no row yet (the product's page was never fetched): a row is created from the card,
  its ``data`` marked ``"source": "listing"`` (known from a listing only); the product
  page's item replaces it whole when the page is fetched (``first_seen`` kept);
* a row: its ``price``/``currency`` (when the card shows a price) and ``availability``
  (when the card says something of stock) take the card's, ``last_seen`` is updated,
  and ``data`` takes them too with ``data.reading`` = ``{"source": "listing",
  "listing_url", "seen_at"}``: the row's latest reading and where it was made (a
  product page's item has no ``reading``: its reading is the page's);
* a card read before the row's latest reading (``crawled_at`` older) changes nothing;
* a price history row (``source`` ``listing``, with ``listing_url``) is added when the
  card shows a price and the offer changed, or when the row's latest reading was the
  page's (a card without a price adds none: the history is of prices): a product page's
  reading and a listing's are both kept in the history (the product page's write adds
  its row, ``source`` ``page``, when the row's latest reading was a listing's, by the
  same rule: :func:`page_reading_is_new`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from crawler.core.itemkinds import LISTED_KEY
from crawler.pipelines.product_record import data_as_json, exact_price, item_data, utc_time

#: the price history's ``source`` of each kind of reading
PAGE, LISTING = "page", "listing"


@dataclass(frozen=True)
class ListedRecord:
    """One listed product, ready for the stores (see the module doc)."""

    url: str
    name: str
    price: Decimal | None
    currency: str | None
    availability: str | None
    listing_url: str
    worker: str
    crawled_at: str | None
    data: dict[str, Any]

    @classmethod
    def of(cls, item: Any, worker: str) -> ListedRecord:
        data, raw = item_data(item, "name")
        data_as_json(data)  # refused now when JSON cannot hold it
        return cls(
            url=data["url"],
            name=data["name"],
            price=exact_price(raw.get("price")),
            currency=data.get("currency"),
            availability=data.get("availability"),
            listing_url=str(data.get(LISTED_KEY) or ""),
            worker=data.get("worker") or worker,
            crawled_at=data.get("crawled_at"),
            data=data,
        )

    @property
    def seen_at(self) -> dt.datetime | None:
        """When the listing page was read (UTC), if the item says."""
        return utc_time(self.crawled_at)


@dataclass(frozen=True)
class Observation:
    """What a listed product does to the product's row: its new offer and ``data``,
    whether the row is new, whether a history row is added."""

    price: Decimal | None
    currency: str | None
    availability: str | None
    data: dict[str, Any]
    new: bool
    history: bool


def reading_source(data: dict[str, Any] | None) -> str:
    """The source of a stored row's latest reading: ``listing`` or ``page``."""
    reading = (data or {}).get("reading")
    return LISTING if isinstance(reading, dict) and reading.get("source") == LISTING else PAGE


def page_reading_is_new(data: dict[str, Any] | None) -> bool:
    """A product page's item written over this stored ``data`` adds a history row even
    with the same offer: the row's latest reading was a listing's."""
    return data is not None and reading_source(data) == LISTING


def _same(old: Any, new: Any) -> bool:
    if isinstance(new, Decimal) and old is not None:
        return Decimal(str(old)) == new
    return bool(old == new)


def observe(
    record: ListedRecord,
    stored: tuple[Any, Any, Any, dict[str, Any]] | None,
) -> Observation | None:
    """What ``record`` does to the row whose (price, currency, availability, data) is
    ``stored`` (None: no row); None when the card is older than the row's reading."""
    reading: dict[str, Any] = {
        "source": LISTING, "listing_url": record.listing_url, "seen_at": record.crawled_at,
    }
    if stored is None:
        fresh: dict[str, Any] = {
            "url": record.url,
            "name": record.name,
            "price": record.data.get("price"),
            "currency": record.currency if record.price is not None else None,
            "availability": record.availability,
            "images": [record.data["image"]] if record.data.get("image") else [],
            "rating": record.data.get("rating"),
            "source": LISTING,
            "reading": reading,
            "crawled_at": record.crawled_at,
            "worker": record.worker,
        }
        currency = record.currency if record.price is not None else None
        # the price history holds prices: a card that shows none adds no row to it
        shown = record.price is not None
        return Observation(record.price, currency, record.availability, fresh, True, shown)
    price, currency, availability, stored_data = stored
    data: dict[str, Any] = dict(stored_data or {})
    latest = (data.get("reading") or {}).get("seen_at") or data.get("crawled_at")
    row_time, card_time = utc_time(latest), record.seen_at
    if row_time is not None and card_time is not None and card_time < row_time:
        return None
    new_price, new_currency = price, currency
    if record.price is not None:
        new_price, new_currency = record.price, record.currency
    new_availability = record.availability or availability
    changed = not (
        _same(price, new_price) and currency == new_currency and availability == new_availability
    )
    history = record.price is not None and (changed or reading_source(data) != LISTING)
    data.update(
        {
            "price": float(new_price) if new_price is not None else None,
            "currency": new_currency,
            "availability": new_availability,
        }
    )
    if record.price is not None or changed:  # the row's reading: the offer it shows
        data["reading"] = reading
    return Observation(new_price, new_currency, new_availability, data, False, history)
