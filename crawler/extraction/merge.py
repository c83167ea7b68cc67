"""The product, field by field, from the sources of one page.

Sources, in order of trust:

1. schema.org JSON-LD, then microdata, then RDFa (all through ``extruct``;
   :mod:`.structured`), the offer that is this page's (:mod:`.offers`);
2. OpenGraph ``og:``/``product:`` tags;
3. the visible page (:mod:`.visible`).

Exception: the visible selling price and stock state win over structured data
when the page clearly shows them (one selling price in the price box after the
heading; a dedicated stock element), because markup is often stale; the code the
page shows beats internal ids of the markup. The name read first is weighed
against the page's headings and titles (:func:`.weigh.weigh_name`), the currency
of a bare ``$`` against the page's own signals (:func:`.weigh.currency_signals`).
Each field's provenance is kept (``json-ld``, ``microdata``, ``rdfa``,
``opengraph``, ``visible``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import islice
from typing import Any

from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from .first_tags import tags_in_order
from .main_product import MainProduct
from .nodes import (
    brand_of,
    breadcrumb_names,
    first_str,
    first_value,
    gtin_of,
    name_key,
    rating_of,
)
from .normalize.availability import normalize_availability
from .normalize.currency import currency_from_text, parse_currency
from .normalize.identifiers import normalize_identifier
from .normalize.price import parse_price
from .normalize.text import normalize_html_text, normalize_text
from .normalize.urls import normalize_images
from .offers import page_offer
from .pagetype import og_says_product
from .profiles import SiteProfile
from .structured import StructuredData
from .tree import utf8_body
from .visible.buy import mentions_a_cart
from .visible.dom import text_of
from .visible.page import VisiblePage
from .visible.url_code import address_item_number
from .weigh import currency_hint, site_names, strip_site_name, weigh_name


def merge_sources(
    response: TextResponse,
    structured: StructuredData,
    visible: VisiblePage,
    profile: SiteProfile | None,
    main: MainProduct,
    canonical: str | None,
    title: str | None,
) -> dict[str, Any]:
    """The product of a page typed as a product page (see :mod:`.pagetype`): every key
    of :data:`~.product.PRODUCT_FIELDS` and ``provenance``; ``profile`` gives its
    currency as a hint (its fields are applied afterwards, :mod:`.profile_overrides`);
    ``title`` is the page's :func:`~.weigh.page_title`."""
    url = response.url
    base_url = get_base_url(response)
    root = response.selector.root
    og = structured.opengraph
    nodes, variants, group = main
    has_structured = bool(nodes or variants)
    og_product = og_says_product(og)

    all_nodes = nodes + variants
    syntax = structured.syntax_of
    offer, matched = page_offer(
        structured, nodes, variants, group, base_url, url, canonical, visible
    )
    prov: dict[str, str] = {}

    product_nodes = nodes or variants
    # name
    name, prov["name"] = None, "visible"
    if nodes:
        named = next((n for n in nodes if normalize_text(first_str(n.get("name")))), None)
        if named is not None:
            name, prov["name"] = normalize_text(first_str(named.get("name"))), syntax(named)
    elif variants:
        names = [normalize_text(first_str(v.get("name"))) or "" for v in variants]
        name = visible.name or _common_prefix_words(names) or names[0]
        prov["name"] = "visible" if visible.name else syntax(variants[0])
    if not name and og_product and normalize_text(og.get("og:title")):
        name, prov["name"] = normalize_text(og.get("og:title")), "opengraph"
    if not name:
        name, prov["name"] = visible.name, "visible"
    if not name and has_structured:  # a marked-up product without a name: the page's title
        shown = title or normalize_text(og.get("og:title")) or ""
        name = normalize_text(re.split(r"\s+[|–—]\s+|\s+-\s+", shown)[0])
        name = _as_shown(response, name) if name else name
    brand = first_value(product_nodes, lambda n: brand_of(n.get("brand") or n.get("manufacturer")))
    brand = brand or normalize_text(og.get("product:brand")) or visible.codes.get("brand")
    if name:  # the shop's name after the product's ("Knit Cardigan | MIXXMIX")
        name = strip_site_name(name, site_names(url, og.get("og:site_name")))
        headings = (
            ()
            if visible.name
            else tuple(
                t
                for h in islice(root.iter("h1"), 5)
                if (t := normalize_text(" ".join(h.itertext())))
            )
        )
        better, source = weigh_name(
            name, brand, visible.name, og.get("og:title"), title, headings
        )
        if better != name:
            name, prov["name"] = better, source

    # price, currency
    og_currency = parse_currency(og.get("product:price:currency") or og.get("og:price:currency"))
    hints: list[tuple[str | None, str]] = [
        (profile.currency if profile else None, "profile"),
        (offer.currency if offer else None, offer.source if offer else ""),
        (og_currency, "opengraph"),
    ]
    hint, hint_source = currency_hint(hints, visible.price_text, response)
    price = offer.price if offer else None
    currency = offer.currency if offer and price is not None else None
    if price is not None and offer is not None:
        prov["price"] = offer.source
        if currency:
            prov["currency"] = offer.source
    if price is None and og_product:
        currency = og_currency
        price = parse_price(og.get("product:price:amount") or og.get("og:price:amount"), currency)
        if price is not None:
            prov["price"] = "opengraph"
            if currency:
                prov["currency"] = "opengraph"
    sellers = bool(
        offer is not None and offer.lowest_of_sellers and price == offer.price
        and prov.get("price") == offer.source
    )
    if price is not None and not sellers and _range_end(price, prov.get("price"), offer, visible):
        # the page shows a range and no single price: one end of it is not the price
        price, prov["price"] = None, "range"
    # several sellers' range: its low end is the cheapest offer, the price (see .offers)
    ranged = not sellers and (prov.get("price") == "range" or visible.price_range is not None)
    if visible.price is not None and (price is None or visible.price_clear) and not ranged:
        if price is None or visible.price != price:
            price, prov["price"] = visible.price, "visible"
            from_text = currency_from_text(visible.price_text, hint)
            if from_text:
                currency = from_text
                prov["currency"] = "visible" if from_text != hint else hint_source
    if price is not None and currency is None:
        currency = currency_from_text(visible.price_text, hint) if visible.price_text else None
        prov["currency"] = "visible" if currency and currency != hint else hint_source
        currency = currency or hint
    if price is None and ranged:
        # a range has a currency of the page's own: the markup's, else the range's text
        prov["price"] = "range"
        currency, prov["currency"] = (
            (offer.currency, offer.source)
            if offer and offer.currency
            else (og_currency, "opengraph")
            if og_currency
            else (None, "")
        )
        if currency is None and visible.price_text:
            currency = currency_from_text(visible.price_text, hint)
            prov["currency"] = "visible" if currency and currency != hint else hint_source

    # availability
    availability = offer.availability if offer else None
    if availability is not None and offer is not None:
        prov["availability"] = offer.source
    if availability is None:
        stated = [n for n in nodes if normalize_availability(n.get("availability"))]
        if stated:
            availability = normalize_availability(stated[0].get("availability"))
            prov["availability"] = syntax(stated[0])
    if availability is None and og_product:
        availability = normalize_availability(
            og.get("product:availability") or og.get("og:availability")
        )
        prov["availability"] = "opengraph"
    # the buy button is the product's own when the page's heading names the product
    anchored = bool(visible.name and name and name_key(visible.name) == name_key(name))
    # an offer with no stock concept: markup types the page as one product offer, the
    # page itself shows its price clearly, and it has no shopping cart anywhere
    # (classified ads, auction lots, tickets: see _judge_availability); or several
    # sellers' offers counted by the markup (price comparison), whose cheapest is the
    # price. Asked only when neither the markup nor the page states the stock (the cart
    # is searched for in the whole page).
    def offered() -> bool:
        return sellers or bool(
            price is not None
            and (has_structured or og_product)
            and visible.price is not None
            and visible.price_clear
            and visible.price == price
            and not visible.add_to_cart
            and not mentions_a_cart(response.text, utf8_body(response, response.text))
        )

    availability = _judge_availability(availability, visible, anchored, prov, offered)

    # identifiers: the code the page shows beats internal ids of the markup: the
    # shop's own code, else the item number of the page's address that the page shows
    # (:mod:`.visible.url_code`), else a model/part number or a lone "#790485" it shows
    sku: str | None = (
        visible.codes.get("sku")
        or visible.url_code
        or visible.codes.get("mpn")
        or visible.codes.get("hash_code")
    )
    prov["sku"] = "visible"
    structured_sku = (
        (offer.sku if offer and matched else None)
        or first_value(nodes, lambda n: normalize_identifier(n.get("sku")))
        or (offer.sku if offer else None)
    )
    if not sku and structured_sku:
        sku, prov["sku"] = (
            structured_sku,
            offer.source if offer and offer.sku else syntax(nodes[0] if nodes else None),
        )
    if not sku and normalize_identifier(og.get("product:retailer_item_id")):
        sku, prov["sku"] = normalize_identifier(og.get("product:retailer_item_id")), "opengraph"
    if not sku:  # last: the product number the page's address ends with
        sku = address_item_number(canonical or url)
        prov["sku"] = "url" if sku else prov["sku"]
    gtin = (
        (offer.gtin if offer and matched else None)
        or first_value(nodes, gtin_of)
        or (offer.gtin if offer else None)
        or visible.codes.get("gtin")
    )
    images = first_value(product_nodes, lambda n: normalize_images(n.get("image"), base_url))
    if not images and og.get("og:image"):
        images = normalize_images(og.get("og:image"), base_url)
    images = images or normalize_images(visible.images, base_url)

    breadcrumbs: list[str] = []
    for node in structured.breadcrumb_lists:
        breadcrumbs = breadcrumb_names(node)
        if breadcrumbs:
            break
    breadcrumbs = breadcrumbs or list(visible.breadcrumbs)

    rating = first_value(all_nodes, rating_of) or visible.rating
    description = (
        first_value(product_nodes, lambda n: normalize_html_text(first_str(n.get("description"))))
        or visible.description
        or normalize_text(og.get("og:description"))
        or normalize_text(_meta_description(root))
    )

    return {
        "url": canonical or url.split("#", 1)[0],
        "name": name,
        "price": price,
        "currency": currency,
        "availability": availability,
        "sku": sku,
        "gtin": gtin,
        "brand": brand,
        "images": images or [],
        "breadcrumbs": breadcrumbs,
        "rating": rating,
        "description": description,
        "provenance": {
            k: v
            for k, v in prov.items()
            if v and k in ("name", "price", "currency", "availability", "sku")
        },
    }


def _meta_description(root: Any) -> str | None:
    """``//meta[@name='description']/@content``, by lxml's search (:mod:`.first_tags`)."""
    for meta in tags_in_order(root, "meta"):
        if meta.get("name") == "description" and (content := meta.get("content")) is not None:
            return content
    return None


def _common_prefix_words(names: list[str]) -> str:
    split = [n.split() for n in names]
    prefix: list[str] = []
    for words in zip(*split, strict=False):
        if all(w == words[0] for w in words):
            prefix.append(words[0])
        else:
            break
    return " ".join(prefix).rstrip(" -–|,/:")


def _as_shown(response: TextResponse, name: str) -> str:
    """A name read from the <title> as the page itself shows it: the title often adds
    words of its own ("Treasure Trove Swing Set You'll Love | Shop"); a link or heading
    whose text is the title's first words (most of them) is the product as shown."""
    words = name.split()
    if len(words) < 4:
        return name
    first = words[0].casefold()
    best = name
    for el in response.selector.root.iter("a", "h2", "h3", "strong", "span"):
        text = normalize_text(text_of(el)) or ""
        if not text.casefold().startswith(first) or len(text) >= len(name):
            continue
        shown = text.split()
        if (
            len(shown) >= max(3, (len(words) + 1) // 2)
            and [w.casefold() for w in words[: len(shown)]] == [w.casefold() for w in shown]
            and (best == name or len(shown) > len(best.split()))
        ):
            best = text
    return best


def _judge_availability(
    marked: str | None,
    visible: VisiblePage,
    anchored: bool,
    prov: dict[str, str],
    offered: Callable[[], bool] = bool,
) -> str | None:
    """The stock state a careful reader of the page would give, from the markup's state
    and the visible page; ``None`` where the page does not say or contradicts itself.

    ``anchored``: the page's heading is the product, so its buy button is the product's.
    ``offered()``: the markup types the page as one product offer and the page shows its
    price clearly, or it counts several sellers' offers (see :func:`merge_sources`)."""
    if visible.not_sold_online:
        # "This item cannot be purchased online": no online stock state is true
        prov["availability"] = "visible"
        return None
    if visible.availability is not None and (marked is None or visible.availability_clear):
        prov["availability"] = "visible"
        return visible.availability
    if visible.availability is None and visible.add_to_cart:
        if marked in (None, "LimitedAvailability"):
            # a buy button the page shows, and no stock wording against it: it can be
            # bought ("limited" only when the page itself says so: "Only 3 left")
            prov["availability"] = "visible"
            return "InStock"
        if marked in ("OutOfStock", "Discontinued"):
            # markup says it cannot be bought, the page shows a buy button and says nothing
            # of its stock: the button decides when it is the product's (the heading names
            # the product); a button somewhere on the page is no decisive evidence
            # a disabled button (class: sold-out pages that still render the button
            # greyed out) is no evidence against the markup
            if not visible.buy_enabled:
                return marked
            prov["availability"] = "visible"
            return "InStock" if anchored else None
    if (
        marked == "LimitedAvailability"
        and visible.add_to_cart
        and (visible.availability != "LimitedAvailability")
    ):
        # markup alone says "limited" while the page sells it and shows no
        # limited-stock wording of its own
        return "InStock"
    if marked is None and visible.availability is None and offered():
        # Class: offers with no stock concept (classified ads, auction lots, tickets):
        # one product offered at the price the page shows, no shopping cart anywhere in
        # the page and no stock wording against it; being offered is being available.
        prov["availability"] = "visible"
        return "InStock"
    return marked


def _range_end(price: Any, source: str | None, offer: Any, visible: VisiblePage) -> bool:
    """The price read is one end of a range the page shows instead of one price: an
    amount within the visible price box's range ("$19.95 – $24.95"), or an
    ``AggregateOffer``'s ``lowPrice`` below its ``highPrice`` while the visible page
    shows no single selling price of its own."""
    if visible.price_range is not None:
        low, high = visible.price_range
        return bool(low <= price <= high)
    return bool(
        offer is not None
        and offer.price_range is not None
        and source == offer.source
        and price == offer.price
        and not (visible.price is not None and visible.price_clear)
    )
