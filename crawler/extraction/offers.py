"""Offers of the structured product, and the one that is this page's.

When a product has several offers (or the page holds one Product per variant),
the offer matching the page wins (same URL, e.g. ``?variant=123``, or the SKU
the page shows); else the lowest price among available offers, else the lowest
price. ``AggregateOffer`` gives its nested offers, else ``price``, else
``lowPrice`` (kept with its ``highPrice`` as a range: one end of it is no selling
price, :mod:`.merge`). An ``AggregateOffer`` that counts several offers
(``offerCount`` of 2 or more) and lists none is the offers of several sellers of
one product (price-comparison pages, marketplaces with a "from" price): its
``lowPrice`` is what a shopper pays the cheapest of them, the product's price, and
no range (a range of one shop's variants has no ``offerCount``: it stays a range).
``priceSpecification`` entries of type list/strikethrough/SRP/MSRP, and unit prices
(with ``referenceQuantity``), are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .nodes import as_list, first_item, gtin_of
from .normalize.availability import normalize_availability
from .normalize.currency import parse_currency
from .normalize.identifiers import normalize_identifier
from .normalize.price import parse_price
from .pageurl import same_page
from .structured import StructuredData, types_of
from .visible.page import VisiblePage

_LIST_PRICE_TYPES = re.compile(r"list|strikethrough|srp|msrp|invoice|minimumadvertised", re.I)
_UNAVAILABLE = frozenset({"OutOfStock", "Discontinued"})


@dataclass
class Offer:
    """One offer of the structured product, its fields normalised."""

    price: Decimal | None
    currency: str | None
    availability: str | None
    sku: str | None = None
    gtin: str | None = None
    url: str | None = None
    #: the syntax the offer came from (provenance)
    source: str = "json-ld"
    #: (low, high) of an ``AggregateOffer`` whose price is only its ``lowPrice``
    #: below a ``highPrice``: a range, not one selling price (see :mod:`.merge`)
    price_range: tuple[Decimal, Decimal] | None = None
    #: the ``lowPrice`` of several sellers' offers (``offerCount`` >= 2): the cheapest
    #: offer's price, which stands although the page shows the sellers' range
    lowest_of_sellers: bool = False


def _spec_price(specs: Any, currency: str | None) -> tuple[Decimal | None, str | None]:
    for spec in as_list(specs):
        if not isinstance(spec, dict):
            continue
        if _LIST_PRICE_TYPES.search(str(spec.get("priceType") or "")):
            continue
        if spec.get("referenceQuantity"):
            continue
        spec_currency = parse_currency(spec.get("priceCurrency")) or currency
        price = parse_price(spec.get("price") or spec.get("minPrice"), spec_currency)
        if price:
            return price, spec_currency
    return None, currency


def offers_of(node: dict[str, Any], base_url: str, source: str = "json-ld") -> list[Offer]:
    """The offers of a node (an AggregateOffer's nested offers among them)."""
    out: list[Offer] = []
    for offer in as_list(node.get("offers")):
        if not isinstance(offer, dict):
            continue
        currency = parse_currency(offer.get("priceCurrency"))
        availability = normalize_availability(offer.get("availability"))
        nested = [o for o in as_list(offer.get("offers")) if isinstance(o, dict)]
        if nested:  # AggregateOffer with its offers
            inner = offers_of({"offers": nested}, base_url, source)
            for o in inner:
                o.currency = o.currency or currency
                o.availability = o.availability or availability
            out.extend(inner)
            if any(o.price for o in inner):
                continue
        price = parse_price(offer.get("price"), currency)
        if not price and offer.get("priceSpecification"):
            price, currency = _spec_price(offer["priceSpecification"], currency)
        price_range, sellers = None, False
        if not price and "AggregateOffer" in types_of(offer):
            price = parse_price(offer.get("lowPrice"), currency)
            high = parse_price(offer.get("highPrice"), currency)
            sellers = bool(price) and _offer_count(offer) >= 2
            if price and high and high > price and not sellers:
                price_range = (price, high)
        url = offer.get("url")
        out.append(
            Offer(
                price=price or None,
                currency=currency,
                availability=availability,
                sku=normalize_identifier(offer.get("sku")),
                gtin=gtin_of(offer),
                url=url if isinstance(url, str) else None,
                source=source,
                price_range=price_range,
                lowest_of_sellers=sellers,
            )
        )
    return out


def _offer_count(offer: dict[str, Any]) -> int:
    """An ``AggregateOffer``'s ``offerCount`` as a whole number (0 when absent or not one)."""
    try:
        return int(str(first_item(offer.get("offerCount"))).strip())
    except (TypeError, ValueError):
        return 0


def variant_offers(
    variants: list[dict[str, Any]], base_url: str, structured: StructuredData
) -> list[Offer]:
    """The offers of the variants, with each variant's SKU, GTIN and URL."""
    out = []
    for variant in variants:
        sku = normalize_identifier(variant.get("sku"))
        gtin = gtin_of(variant)
        url = variant.get("url") if isinstance(variant.get("url"), str) else None
        for offer in offers_of(variant, base_url, structured.syntax_of(variant)):
            offer.sku = offer.sku or sku
            offer.gtin = offer.gtin or gtin
            offer.url = offer.url or url
            out.append(offer)
    return out


def pick_offer(
    offers: list[Offer], url: str, visible: VisiblePage
) -> tuple[Offer | None, bool]:
    """(chosen offer, whether it specifically matches this page)."""
    priced = [o for o in offers if o.price is not None]
    if not priced:
        return (offers[0] if offers else None), False
    if len(priced) == 1:
        return priced[0], True
    by_url = [o for o in priced if same_page(o.url, url)]
    if len(by_url) == 1:
        return by_url[0], True
    query = dict(parse_qsl(urlsplit(url).query))
    if "variant" in query:
        by_variant = [
            o for o in priced
            if o.url and dict(parse_qsl(urlsplit(o.url).query)).get("variant") == query["variant"]
        ]
        if len(by_variant) == 1:
            return by_variant[0], True
    sku = visible.codes.get("sku")
    if sku:
        by_sku = [o for o in priced if o.sku == sku]
        if len(by_sku) == 1:
            return by_sku[0], True
    available = [o for o in priced if o.availability not in _UNAVAILABLE]
    pool = available or priced
    return min(pool, key=lambda o: o.price or Decimal(0)), False


def page_offer(
    structured: StructuredData,
    nodes: list[dict[str, Any]],
    variants: list[dict[str, Any]],
    group: dict[str, Any] | None,
    base_url: str,
    url: str,
    canonical: str | None,
    visible: VisiblePage,
) -> tuple[Offer | None, bool]:
    """(the offer of this page among those of the product, its variants and its group,
    whether it specifically matches this page): chosen for the canonical URL, else
    for the page's own URL."""
    syntax = structured.syntax_of
    offers = offers_of(group, base_url, syntax(group)) if group else []
    for node in nodes:
        if node is not group:
            offers += offers_of(node, base_url, syntax(node))
    offers += variant_offers(variants, base_url, structured)
    offer, matched = pick_offer(offers, canonical or url, visible) if offers else (None, False)
    if offer is not None and not matched and canonical and not same_page(canonical, url):
        retry, matched = pick_offer(offers, url, visible)
        if matched:
            offer = retry
    return offer, matched
