"""The items, typed: every field with its contract, and the field lists derived from them.

:class:`Product` (the ``ecommerce`` spider's item), :class:`ListedProduct` (a product
card of a listing page, which the same spider yields beside its products) and
:class:`Quote` (the ``finance`` spider's, with its lists ``QUOTE_*`` derived the same way).

:class:`Product` is written once, here, in the manner of zyte-common-items: a
typed class whose every field documents its contract. The lists the rest of the
project needs are derived from its fields, never restated:

=====================  ==========================================================
:data:`FIELDS`         every field, in the JSON Schema's order
:data:`PAGE_FIELDS`    what the extractor reads from a product page
                       (``crawler.extraction.PRODUCT_FIELDS``)
:data:`CRAWL_FIELDS`   what the crawl adds (when, by which worker)
:data:`PROFILE_FIELDS` what a site profile may override (``rating`` as
                       ``rating_value``/``rating_count``)
:data:`COLUMNS`        the typed columns of the stores' ``products`` rows, before
                       ``data`` (the whole item); the storage record
                       (:class:`crawler.pipelines.product_record.ProductRecord`)
                       and the SQL column lists follow it
:data:`OFFER_FIELDS`   what a price history row records when it changes
=====================  ==========================================================

The JSON Schema (``crawler/schema/product.schema.json``) stays the contract
items are validated against; ``tests/unit/test_items.py`` holds this class to
it (names, order, required fields, types), so neither can drift alone.

Spiders yield plain dicts with these keys; a :class:`Product` is an item too
(``ItemAdapter`` reads dataclasses), with ``None`` for unknown values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any, Literal, get_args

#: schema.org ItemAvailability names, without the ``https://schema.org/`` prefix.
Availability = Literal[
    "InStock", "OutOfStock", "PreOrder", "BackOrder", "Discontinued", "LimitedAvailability"
]
AVAILABILITIES: tuple[str, ...] = get_args(Availability)

#: Where each main field was read: the syntax, or for the currency a hint.
Source = Literal[
    "json-ld", "microdata", "rdfa", "opengraph", "embedded-state", "visible", "language",
    "profile", "url", "range", "site",
]


@dataclass(kw_only=True)
class Rating:
    """The product's aggregate rating."""

    value: float
    """The average, on the site's own scale (not normalised to 5); ``>= 0``."""

    count: int | None = None
    """How many ratings the average is made of, when the page says; ``>= 0``."""


def _meta(
    role: Literal["page", "extraction", "crawl"],
    *,
    column: bool = False,
    offer: bool = False,
    profile: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """A field's place in the project.

    ``role``: read from the ``page``, about the ``extraction``, or added by the
    ``crawl``; ``column``: a typed column of the stored row; ``offer``: part of
    the offer a price history follows; ``profile``: the names a site profile
    uses for the field (default: the field's own name, for page fields).
    """
    return {"role": role, "column": column, "offer": offer, "profile": profile}


@dataclass(kw_only=True)
class Product:
    """One product, as read from its detail page (the item the spider yields).

    One item per product detail page; category, listing and search pages give
    no items. The field order is the JSON Schema's.
    """

    url: str = field(metadata=_meta("page", column=True, profile=()))
    """Absolute http(s) URL of the product detail page (at most 2048 characters):
    the product's identity in every store. Required."""

    name: str = field(metadata=_meta("page", column=True))
    """Product name as shown on the page; not empty, not only white space. Required."""

    price: Decimal | None = field(default=None, metadata=_meta("page", column=True, offer=True))
    """Current selling price, discounts applied, as an exact decimal (``Decimal("19.90")``,
    a number with a dot in JSON); ``>= 0``; ``None`` when the page shows none."""

    currency: str | None = field(default=None, metadata=_meta("page", column=True, offer=True))
    """ISO 4217 code of the price, three upper-case letters (``"EUR"``); required
    when ``price`` is a number."""

    availability: Availability | None = field(
        default=None, metadata=_meta("page", column=True, offer=True)
    )
    """schema.org ItemAvailability name (:data:`AVAILABILITIES`), or ``None``."""

    sku: str | None = field(default=None, metadata=_meta("page", column=True))
    """The shop's own product code."""

    gtin: str | None = field(default=None, metadata=_meta("page"))
    """GTIN-8, UPC (GTIN-12), EAN (GTIN-13) or GTIN-14: digits only."""

    brand: str | None = field(default=None, metadata=_meta("page"))
    """The brand's name."""

    images: list[str] = field(default_factory=list, metadata=_meta("page"))
    """Absolute http(s) URLs of the product images, main image first."""

    breadcrumbs: list[str] = field(default_factory=list, metadata=_meta("page"))
    """Category path from the site root to the product, names only, the product excluded."""

    rating: Rating | None = field(
        default=None,
        metadata=_meta("page", profile=tuple(f"rating_{part.name}" for part in fields(Rating))),
    )
    """The aggregate rating (:class:`Rating`), or ``None`` when the page shows none."""

    description: str | None = field(default=None, metadata=_meta("page"))
    """The product description, as plain text."""

    provenance: dict[str, Source] = field(default_factory=dict, metadata=_meta("extraction"))
    """Where each main field (``name``, ``price``, ``currency``, ``availability``,
    ``sku``, ``gtin``, ``brand``) was read: ``json-ld``, ``microdata``, ``rdfa``,
    ``opengraph``, ``visible``, ``profile``, ``site`` (where the site's structured data
    shows it on its other pages); for the currency also ``language`` (the page's
    declared language and country) or ``url`` (a weak hint). Under ``disagrees``, the
    list of structured fields whose value differs from what the site's learned position
    shows on the page (:mod:`crawler.extraction.evidence`)."""

    uncertain: list[str] = field(default_factory=list, metadata=_meta("extraction"))
    """The fields whose reading is in doubt (:mod:`crawler.datachecks.uncertain`): a
    structured value the page contradicts, a price or stock state left to a guess, a
    field a data check fails on for the product's site; ``[]`` when none.
    ``master export --trusted`` leaves out the rows that name any."""

    crawled_at: str | None = field(default=None, metadata=_meta("crawl"))
    """When the page was parsed: RFC 3339 date-time with a UTC offset. Absent
    (never null) when unknown."""

    worker: str | None = field(default=None, metadata=_meta("crawl", column=True))
    """``WORKER_ID`` of the worker that crawled the page. Absent (never null) when
    unknown; the stores then record the worker that wrote it."""


def _names(**wanted: Any) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in fields(Product)
        if all(f.metadata[key] == value for key, value in wanted.items())
    )


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Product))
PAGE_FIELDS: tuple[str, ...] = _names(role="page")
CRAWL_FIELDS: tuple[str, ...] = _names(role="crawl")
PROFILE_FIELDS: frozenset[str] = frozenset(
    name
    for f in fields(Product)
    if f.metadata["role"] == "page"
    for name in (f.metadata["profile"] if f.metadata["profile"] is not None else (f.name,))
)
COLUMNS: tuple[str, ...] = _names(column=True)
OFFER_FIELDS: tuple[str, ...] = _names(offer=True)

#: Where each field of a quote was read (:mod:`crawler.extraction.quotes`).
QuoteSource = Literal[
    "structured", "embedded", "meta", "label", "attribute", "title", "url", "visible",
    "profile", "endpoint", "language", "exchange", "fetch", "table",
]


@dataclass(kw_only=True)
class Quote:
    """One quote of one instrument, as read from its quote page (or from one row of a CSV
    or JSON quote endpoint): the item the ``finance`` spider yields. Numbers are exact
    decimals with a dot, in the quote's currency (``volume`` a count of units). The
    field order is the JSON Schema's (``crawler/schema/quote.schema.json``)."""

    url: str = field(metadata=_meta("page", column=True, profile=()))
    """Absolute http(s) URL of the quote page (an endpoint's row: the endpoint's URL with
    ``#<symbol>``; a market table's row: the quote page it links to, else the table page's
    URL with ``#<symbol>``): the quote's identity in every store. Required."""

    symbol: str = field(metadata=_meta("page", column=True, offer=True))
    """The instrument's ticker as the page shows it (``AAPL``, ``SAP``, ``7203``). Required."""

    name: str | None = field(default=None, metadata=_meta("page", column=True))
    """The instrument's name (``Apple Inc.``)."""

    exchange: str | None = field(default=None, metadata=_meta("page", column=True))
    """Where it trades, as the page names it (``NASDAQ``, ``XETRA``)."""

    price: Decimal = field(metadata=_meta("page", column=True, offer=True))
    """The last price, ``> 0``. Required: a page without one gives no quote."""

    currency: str = field(metadata=_meta("page", column=True, offer=True))
    """ISO 4217 code of the prices (``"EUR"``). Required (with the price)."""

    change: Decimal | None = field(default=None, metadata=_meta("page", column=True))
    """The change since the previous close, signed."""

    change_percent: Decimal | None = field(default=None, metadata=_meta("page"))
    """The same change in percent, signed (``-1.25`` is -1.25 %)."""

    previous_close: Decimal | None = field(default=None, metadata=_meta("page"))
    """The previous session's closing price."""

    open: Decimal | None = field(default=None, metadata=_meta("page"))
    """The session's opening price."""

    day_low: Decimal | None = field(default=None, metadata=_meta("page"))
    """The session's lowest price (the day's range, low end)."""

    day_high: Decimal | None = field(default=None, metadata=_meta("page"))
    """The session's highest price (the day's range, high end)."""

    volume: int | None = field(default=None, metadata=_meta("page", column=True, offer=True))
    """Units traded in the session, ``>= 0``."""

    market_cap: Decimal | None = field(default=None, metadata=_meta("page", column=True))
    """Market capitalisation, in the quote's currency, ``>= 0``."""

    as_of: str = field(metadata=_meta("page", column=True, offer=True))
    """When the quote is for: RFC 3339 with its offset, as the page says it (in the
    page's or the exchange's time zone), else the time the page was fetched
    (``provenance["as_of"] == "fetch"``). Required."""

    provenance: dict[str, QuoteSource] = field(default_factory=dict, metadata=_meta("extraction"))
    """Where each field was read: ``structured`` (JSON-LD), ``embedded`` (a script's
    JSON state), ``meta``, ``label`` (a label and its value), ``attribute`` (an element
    named for the field), ``title``, ``url``, ``visible``, ``profile``, ``endpoint``
    (a CSV or JSON row); for the currency also ``language`` or ``exchange``; for
    ``as_of`` also ``fetch``."""

    uncertain: list[str] = field(default_factory=list, metadata=_meta("extraction"))
    """The fields whose reading is in doubt: those of a data check failing on the
    quote's site (``price``, ``as_of``: :mod:`crawler.datachecks.uncertain`); ``[]``
    when none."""

    crawled_at: str | None = field(default=None, metadata=_meta("crawl"))
    """When the page was parsed: RFC 3339 date-time with a UTC offset."""

    worker: str | None = field(default=None, metadata=_meta("crawl"))
    """``WORKER_ID`` of the worker that crawled the page."""


def _quote_names(**wanted: Any) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in fields(Quote)
        if all(f.metadata[key] == value for key, value in wanted.items())
    )


QUOTE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Quote))
QUOTE_PAGE_FIELDS: tuple[str, ...] = _quote_names(role="page")
#: the typed columns of the stores' ``quotes`` rows, before ``data``
QUOTE_COLUMNS: tuple[str, ...] = _quote_names(column=True)
#: the fields of a ``quote_history`` row (an observation), before ``seen_at``
QUOTE_OBSERVATION: tuple[str, ...] = ("url", *_quote_names(offer=True))
#: fields a site profile may give for a quote (``quote.fields``)
QUOTE_PROFILE_FIELDS: frozenset[str] = frozenset(QUOTE_PAGE_FIELDS) - {"url"}


@dataclass(kw_only=True)
class ListedProduct:
    """One product card of a listing page (:func:`crawler.extraction.read_listing`): an
    observation of the product at ``url``, read on the page ``listing_url``. The
    ``ecommerce`` spider yields one per card (plain dicts with these keys; the key
    ``listing_url`` tells one from a :class:`Product`); the product stores keep it as
    an observation of that product (``crawler/schema/listed_product.schema.json``)."""

    url: str
    """The product page's absolute URL, canonical as the dupefilter sees it. Required."""

    name: str
    """The name as the card shows it (possibly cut short). Required."""

    price: Decimal | None = None
    """The selling price the card shows; ``None`` when none, or an ambiguous one."""

    currency: str | None = None
    """ISO 4217 code of the price; required with a price."""

    regular_price: Decimal | None = None
    """A struck-through regular price shown beside the price."""

    availability: Availability | None = None
    """From the card's stock wording; ``None`` when the card says nothing of stock."""

    image: str | None = None
    """The card's image, absolute."""

    rating: Rating | None = None
    """The rating the card shows."""

    position: int
    """1-based position among the page's listed products. Required."""

    listing_url: str
    """The listing page the card was read on. Required."""

    crawled_at: str | None = None
    """When the listing page was parsed (RFC 3339, UTC offset)."""

    worker: str | None = None
    """``WORKER_ID`` of the worker that read it."""


#: every field of a listed product, in the JSON Schema's order
LISTED_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ListedProduct))


__all__ = [
    "AVAILABILITIES",
    "COLUMNS",
    "CRAWL_FIELDS",
    "FIELDS",
    "LISTED_FIELDS",
    "OFFER_FIELDS",
    "PAGE_FIELDS",
    "PROFILE_FIELDS",
    "QUOTE_COLUMNS",
    "QUOTE_FIELDS",
    "QUOTE_OBSERVATION",
    "QUOTE_PAGE_FIELDS",
    "QUOTE_PROFILE_FIELDS",
    "Availability",
    "ListedProduct",
    "Product",
    "Quote",
    "QuoteSource",
    "Rating",
    "Source",
]
