"""Zero-configuration product extraction: one pure function from a page to a product.

Sources, in order of trust, merged field by field:

1. schema.org JSON-LD, then microdata, then RDFa (all through ``extruct``);
2. OpenGraph ``og:``/``product:`` tags;
3. the visible page (:mod:`crawler.extraction.visible`);
4. a :class:`~crawler.extraction.profiles.SiteProfile`, when given, overrides
   every field it names.

Exception: the visible selling price and stock state win over structured data
when the page clearly shows them (one selling price in the price box after the
heading; a dedicated stock element), because markup is often stale.

Offers and variants: when a product has several offers (or the page holds one
Product per variant), the offer matching the page wins (same URL, e.g.
``?variant=123``, or the SKU the page shows); else the lowest price among
available offers, else the lowest price. ``AggregateOffer`` gives its nested
offers, else ``price``, else ``lowPrice``. ``priceSpecification`` entries of
type list/strikethrough/SRP/MSRP, and unit prices (with ``referenceQuantity``),
are ignored. Breadcrumbs exclude the product itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.response import get_base_url
from w3lib.url import canonicalize_url

from .links import is_html_response
from .normalize.availability import availability_from_text, normalize_availability
from .normalize.currency import DOLLAR_CURRENCIES, currency_from_text, parse_currency
from .normalize.identifiers import normalize_gtin, normalize_identifier
from .normalize.price import parse_price
from .normalize.text import normalize_html_text, normalize_text
from .normalize.urls import normalize_images
from .pagetype import is_negative_page
from .profiles import SiteProfile
from .structured import StructuredData, is_product_node, read_structured_data, types_of
from .visible.page import VisiblePage, read_visible_page
from .weigh import currency_signals, page_title, weigh_name

PRODUCT_FIELDS = (
    "url", "name", "price", "currency", "availability", "sku", "gtin", "brand",
    "images", "breadcrumbs", "rating", "description",
)
_GTIN_KEYS = ("gtin13", "gtin12", "gtin14", "gtin8", "gtin", "isbn", "ean", "upc")
_LIST_PRICE_TYPES = re.compile(r"list|strikethrough|srp|msrp|invoice|minimumadvertised", re.I)
_UNAVAILABLE = frozenset({"OutOfStock", "Discontinued"})


@dataclass
class _Offer:
    price: Decimal | None
    currency: str | None
    availability: str | None
    sku: str | None = None
    gtin: str | None = None
    url: str | None = None
    #: the syntax the offer came from (provenance)
    source: str = "json-ld"


def extract_product(
    response: TextResponse, profile: SiteProfile | None = None
) -> dict[str, Any] | None:
    """The product of a product detail page, or None for any other page.

    Returns a dict with every key of :data:`PRODUCT_FIELDS` (None or ``[]`` when
    unknown): ``price`` is a ``Decimal`` (the current selling price),
    ``currency`` an ISO 4217 code (None without a price), ``availability`` one
    of the schema.org short names, ``rating`` ``{"value": float, "count": int}``.
    """
    if not is_html_response(response):
        return None
    html = response.text
    root = response.selector.root
    url = response.url
    base_url = get_base_url(response)
    structured = read_structured_data(root, html, base_url)
    visible = read_visible_page(root)

    forced = None
    if profile is not None and profile.is_product is not None:
        forced = bool(profile.is_product.getall(response.selector))
        if not forced:
            return None
    if not forced and is_negative_page(visible.name, urlsplit(url).path):
        return None

    item = _merge(response, structured, visible, profile, forced=bool(forced))
    if item is None:
        return None
    if profile is not None and profile.fields:
        _apply_profile(item, response, profile, visible)
    _finish(item)
    if not item["name"]:
        return None
    return item


def extract_product_from_html(
    url: str, html: str, profile: SiteProfile | None = None
) -> dict[str, Any] | None:
    """:func:`extract_product` for a URL and its HTML text."""
    response = HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")
    return extract_product(response, profile)


# ----------------------------------------------------------------- main product


def _same_page(a: str | None, b: str) -> bool:
    if not a:
        return False
    try:
        return canonicalize_url(a) == canonicalize_url(b)
    except ValueError:
        return False


def _same_path(a: str | None, b: str) -> bool:
    return bool(a) and urlsplit(str(a)).path.rstrip("/") == urlsplit(b).path.rstrip("/")


def _name_key(value: Any) -> str:
    return (normalize_text(_first_str(value)) or "").casefold()


def _first_str(value: Any) -> str | None:
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if isinstance(value, dict):
        value = value.get("name")
    return value if isinstance(value, str) else None


def _common_prefix_words(names: list[str]) -> str:
    split = [n.split() for n in names]
    prefix: list[str] = []
    for words in zip(*split, strict=False):
        if all(w == words[0] for w in words):
            prefix.append(words[0])
        else:
            break
    return " ".join(prefix).rstrip(" -–|,/:")


def _choose_products(
    structured: StructuredData, visible: VisiblePage, url: str, canonical: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None] | None:
    """(nodes describing the main product, its variants, its ProductGroup), or None
    when the structured products are a listing. ``([], [], None)`` when there are none."""
    nodes = structured.products
    if not nodes:
        return [], [], None
    groups = [n for n in nodes if "ProductGroup" in types_of(n)]
    group = groups[0] if groups else None
    variants: list[dict[str, Any]] = []
    if group is not None:
        raw = group.get("hasVariant") or []
        variants = [v for v in (raw if isinstance(raw, list) else [raw]) if is_product_node(v)]
        singles = [n for n in nodes if n is not group and _name_key(n.get("name")) != _name_key(
            group.get("name"))]
        # other top-level products besides the group: its variants listed separately
        variants += [n for n in singles if not any(n is v for v in variants)]
        same = [group] + [n for n in nodes if n is not group and n not in singles]
        return same, variants, group

    h1 = (visible.name or "").casefold()
    names = {_name_key(n.get("name")) for n in nodes}
    if len(names) == 1:
        return nodes, [], None
    # One Product per variant: shared group id, the page's own URL, or names that
    # all start with the page heading.
    group_ids = {
        str(n.get("productGroupID") or n.get("inProductGroupWithID") or _first_str(
            n.get("isVariantOf")) or "") for n in nodes
    }
    urls = [n.get("url") if isinstance(n.get("url"), str) else None for n in nodes]
    if (
        (len(group_ids) == 1 and "" not in group_ids)
        or (all(urls) and all(_same_path(u, url) for u in urls))
        or (h1 and all(_name_key(n.get("name")).startswith(h1) for n in nodes))
    ):
        return [], nodes, None
    # Related products marked up too: keep the one product that is this page.
    matching = [
        n for n in nodes
        if _same_page(n.get("url"), url)
        or (canonical and _same_page(n.get("url"), canonical))
        or (h1 and _name_key(n.get("name")) == h1)
    ]
    keys = {_name_key(n.get("name")) for n in matching}
    if len(keys) == 1:
        return matching, [], None
    return None


# ----------------------------------------------------------------------- offers


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _gtin_of(node: dict[str, Any]) -> str | None:
    for key in _GTIN_KEYS:
        gtin = normalize_gtin(node.get(key))
        if gtin:
            return gtin
    return None


def _spec_price(specs: Any, currency: str | None) -> tuple[Decimal | None, str | None]:
    for spec in _as_list(specs):
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


def _offers_of(node: dict[str, Any], base_url: str, source: str = "json-ld") -> list[_Offer]:
    out: list[_Offer] = []
    for offer in _as_list(node.get("offers")):
        if not isinstance(offer, dict):
            continue
        currency = parse_currency(offer.get("priceCurrency"))
        availability = normalize_availability(offer.get("availability"))
        nested = [o for o in _as_list(offer.get("offers")) if isinstance(o, dict)]
        if nested:  # AggregateOffer with its offers
            inner = _offers_of({"offers": nested}, base_url, source)
            for o in inner:
                o.currency = o.currency or currency
                o.availability = o.availability or availability
            out.extend(inner)
            if any(o.price for o in inner):
                continue
        price = parse_price(offer.get("price"), currency)
        if not price and offer.get("priceSpecification"):
            price, currency = _spec_price(offer["priceSpecification"], currency)
        if not price and "AggregateOffer" in types_of(offer):
            price = parse_price(offer.get("lowPrice"), currency)
        url = offer.get("url")
        out.append(
            _Offer(
                price=price or None,
                currency=currency,
                availability=availability,
                sku=normalize_identifier(offer.get("sku")),
                gtin=_gtin_of(offer),
                url=url if isinstance(url, str) else None,
                source=source,
            )
        )
    return out


def _variant_offers(
    variants: list[dict[str, Any]], base_url: str, structured: StructuredData
) -> list[_Offer]:
    out = []
    for variant in variants:
        sku = normalize_identifier(variant.get("sku"))
        gtin = _gtin_of(variant)
        url = variant.get("url") if isinstance(variant.get("url"), str) else None
        for offer in _offers_of(variant, base_url, structured.syntax_of(variant)):
            offer.sku = offer.sku or sku
            offer.gtin = offer.gtin or gtin
            offer.url = offer.url or url
            out.append(offer)
    return out


def _pick_offer(
    offers: list[_Offer], url: str, visible: VisiblePage
) -> tuple[_Offer | None, bool]:
    """(chosen offer, whether it specifically matches this page)."""
    priced = [o for o in offers if o.price is not None]
    if not priced:
        return (offers[0] if offers else None), False
    if len(priced) == 1:
        return priced[0], True
    by_url = [o for o in priced if _same_page(o.url, url)]
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


# ------------------------------------------------------------------------ merge


def _canonical(response: TextResponse) -> str | None:
    href = response.xpath("//link[@rel='canonical']/@href").get()
    if not href:
        return None
    try:
        absolute = response.urljoin(href.strip())
        if not _same_site(absolute, response.url):
            return None
    except ValueError:
        return None
    return absolute.split("#", 1)[0]


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def _same_site(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    if pa.scheme not in ("http", "https"):
        return False
    return _host(a) == _host(b) and pa.port == pb.port


def _brand(value: Any) -> str | None:
    for item in _as_list(value):
        if isinstance(item, dict):
            item = item.get("name")
            if isinstance(item, list):
                item = item[0] if item else None
        text = normalize_text(item) if isinstance(item, str) else None
        if text:
            return text
    return None


def _rating(node: dict[str, Any]) -> dict[str, Any] | None:
    agg = node.get("aggregateRating")
    if isinstance(agg, list):
        agg = agg[0] if agg else None
    if not isinstance(agg, dict):
        return None
    return _make_rating(
        agg.get("ratingValue"), agg.get("reviewCount") or agg.get("ratingCount")
    )


def _make_rating(value: Any, count: Any) -> dict[str, Any] | None:
    try:
        number = float(str(_first(value)).replace(",", ".").strip())
    except (TypeError, ValueError):
        return None
    digits = re.sub(r"[^\d]", "", str(_first(count))) if count not in (None, "", []) else ""
    if number < 0 or number != number:  # negative or NaN
        return None
    return {"value": number, "count": int(digits) if digits else None}


def _first(value: Any) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _breadcrumb_names(node: dict[str, Any]) -> list[str]:
    entries = []
    for i, element in enumerate(_as_list(node.get("itemListElement"))):
        if not isinstance(element, dict):
            continue
        name = element.get("name")
        item = element.get("item")
        if not name and isinstance(item, dict):
            name = item.get("name")
        name = normalize_text(_first(name)) if name else None
        if not name:
            continue
        try:
            position = float(str(_first(element.get("position"))))
        except (TypeError, ValueError):
            position = float(i)
        entries.append((position, i, name))
    return [name for _, _, name in sorted(entries)]


def _first_value(nodes: list[dict[str, Any]], getter: Any) -> Any:
    for node in nodes:
        value = getter(node)
        if value not in (None, "", []):
            return value
    return None


def _merge(
    response: TextResponse,
    structured: StructuredData,
    visible: VisiblePage,
    profile: SiteProfile | None,
    forced: bool,
) -> dict[str, Any] | None:
    url = response.url
    base_url = get_base_url(response)
    canonical = _canonical(response)
    og = structured.opengraph
    chosen = _choose_products(structured, visible, url, canonical)
    if chosen is None:
        if not forced:
            return None  # several unrelated products: a listing
        chosen = ([], [], None)
    nodes, variants, group = chosen
    has_structured = bool(nodes or variants)
    og_product = "product" in (og.get("og:type") or "").lower() and bool(og.get("og:title"))

    if not has_structured and not forced:
        if structured.has_product_list:
            return None
        if not og_product and not _visible_product(visible):
            return None
    if has_structured and not forced and visible.grid_cards >= 3 and visible.price is None:
        # A listing that marks up one Product (e.g. for a rich snippet): the
        # heading must name it, or the page must be its URL.
        titles = " ".join(
            t for t in (page_title(response), normalize_text(og.get("og:title"))) if t
        )
        if not any(
            _refers_to(n, url, canonical) or _name_key(n.get("name")) == (visible.name or "")
            .casefold() or _named_in(_name_key(n.get("name")), titles) for n in nodes + variants
        ):
            return None

    all_nodes = nodes + variants
    syntax = structured.syntax_of
    offers = _offers_of(group, base_url, syntax(group)) if group else []
    for node in nodes:
        if node is not group:
            offers += _offers_of(node, base_url, syntax(node))
    offers += _variant_offers(variants, base_url, structured)
    prov: dict[str, str] = {}
    offer, matched = _pick_offer(offers, canonical or url, visible) if offers else (None, False)
    if offer is not None and not matched and canonical and not _same_page(canonical, url):
        retry, matched = _pick_offer(offers, url, visible)
        if matched:
            offer = retry

    product_nodes = nodes or variants
    # name
    name, prov["name"] = None, "visible"
    if nodes:
        named = next((n for n in nodes if normalize_text(_first_str(n.get("name")))), None)
        if named is not None:
            name, prov["name"] = normalize_text(_first_str(named.get("name"))), syntax(named)
    elif variants:
        names = [normalize_text(_first_str(v.get("name"))) or "" for v in variants]
        name = visible.name or _common_prefix_words(names) or names[0]
        prov["name"] = "visible" if visible.name else syntax(variants[0])
    if not name and og_product and normalize_text(og.get("og:title")):
        name, prov["name"] = normalize_text(og.get("og:title")), "opengraph"
    if not name:
        name, prov["name"] = visible.name, "visible"
    if not name and has_structured:  # a marked-up product without a name: the page's title
        title = page_title(response) or normalize_text(og.get("og:title")) or ""
        name = normalize_text(re.split(r"\s+[|–—]\s+|\s+-\s+", title)[0])
        name = _as_shown(response, name) if name else name
    brand = _first_value(product_nodes, lambda n: _brand(n.get("brand") or n.get("manufacturer")))
    brand = brand or normalize_text(og.get("product:brand")) or visible.codes.get("brand")
    if name:
        headings = () if visible.name else tuple(
            t for h in response.xpath("//h1")[:5]
            if (t := normalize_text(" ".join(h.xpath(".//text()").getall())))
        )
        better, source = weigh_name(
            name, brand, visible.name, og.get("og:title"), page_title(response), headings
        )
        if better != name:
            name, prov["name"] = better, source

    # price, currency
    og_currency = parse_currency(og.get("product:price:currency") or og.get("og:price:currency"))
    hints: list[tuple[str | None, str]] = [
        (profile.currency if profile else None, "profile"),
        (offer.currency if offer else None, offer.source if offer else ""),
        (og_currency, "opengraph"),
        *currency_signals(response),
    ]
    hint, hint_source = _hint(hints, visible.price_text)
    price = offer.price if offer else None
    currency = offer.currency if offer and price is not None else None
    if price is not None and offer is not None:
        prov["price"] = offer.source
        if currency:
            prov["currency"] = offer.source
    if price is None and og_product:
        currency = og_currency
        price = parse_price(
            og.get("product:price:amount") or og.get("og:price:amount"), currency
        )
        if price is not None:
            prov["price"] = "opengraph"
            if currency:
                prov["currency"] = "opengraph"
    if visible.price is not None and (price is None or visible.price_clear):
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
    anchored = bool(visible.name and name and _name_key(visible.name) == _name_key(name))
    availability = _judge_availability(availability, visible, anchored, prov)

    # identifiers: the code the page shows beats internal ids of the markup
    sku: str | None = visible.codes.get("sku")
    prov["sku"] = "visible"
    structured_sku = (offer.sku if offer and matched else None) or _first_value(
        nodes, lambda n: normalize_identifier(n.get("sku"))
    ) or (offer.sku if offer else None)
    if not sku and structured_sku:
        sku, prov["sku"] = structured_sku, offer.source if offer and offer.sku else syntax(
            nodes[0] if nodes else None)
    if not sku and normalize_identifier(og.get("product:retailer_item_id")):
        sku, prov["sku"] = normalize_identifier(og.get("product:retailer_item_id")), "opengraph"
    gtin = (offer.gtin if offer and matched else None) or _first_value(nodes, _gtin_of) or (
        offer.gtin if offer else None) or visible.codes.get("gtin")
    images = _first_value(product_nodes, lambda n: normalize_images(n.get("image"), base_url))
    if not images and og.get("og:image"):
        images = normalize_images(og.get("og:image"), base_url)
    images = images or normalize_images(visible.images, base_url)

    breadcrumbs: list[str] = []
    for node in structured.breadcrumb_lists:
        breadcrumbs = _breadcrumb_names(node)
        if breadcrumbs:
            break
    breadcrumbs = breadcrumbs or list(visible.breadcrumbs)

    rating = _first_value(all_nodes, _rating) or visible.rating
    description = _first_value(
        product_nodes, lambda n: normalize_html_text(_first_str(n.get("description")))
    ) or visible.description or normalize_text(og.get("og:description")) or normalize_text(
        response.xpath("//meta[@name='description']/@content").get()
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
            k: v for k, v in prov.items()
            if v and k in ("name", "price", "currency", "availability", "sku")
        },
    }


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
        text = normalize_text(el.text_content()) or ""
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
    marked: str | None, visible: VisiblePage, anchored: bool, prov: dict[str, str]
) -> str | None:
    """The stock state a careful reader of the page would give, from the markup's state
    and the visible page; ``None`` where the page does not say or contradicts itself.

    ``anchored``: the page's heading is the product, so its buy button is the product's."""
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
            prov["availability"] = "visible"
            return "InStock" if anchored else None
    if marked == "LimitedAvailability" and visible.add_to_cart and (
        visible.availability != "LimitedAvailability"
    ):
        # markup alone says "limited" while the page sells it and shows no
        # limited-stock wording of its own
        return "InStock"
    return marked


def _refers_to(node: dict[str, Any], url: str, canonical: str | None) -> bool:
    """The node (or one of its offers) names this page's address."""
    values = [node.get("url"), node.get("@id")] + [
        v for o in _as_list(node.get("offers")) if isinstance(o, dict) for v in o.values()
    ]
    return any(
        isinstance(v, str) and (_same_page(v, url) or bool(canonical and _same_page(v, canonical)))
        for v in values
    )


def _named_in(name: str, titles: str) -> bool:
    """Most words of the product's name are in the page's <title>/og:title (a listing's
    title names its category, not one of its products)."""
    words = set(re.findall(r"\w+", name))
    if len(words) < 2:
        return False
    return len(words & set(re.findall(r"\w+", titles.casefold()))) >= 0.8 * len(words)


def _hint(hints: list[tuple[str | None, str]], text: str | None) -> tuple[str | None, str]:
    """The strongest currency signal; for a ``$`` price the strongest dollar currency."""
    found = [(c, s) for c, s in hints if c]
    if text and "$" in text:
        found = [(c, s) for c, s in found if c in DOLLAR_CURRENCIES]
    return found[0] if found else (None, "")


def _visible_product(visible: VisiblePage) -> bool:
    """A page with no structured product is one when it shows one heading, a
    selling price (or a price range) right after it (outside any grid of cards) and at least one
    product signal: add-to-cart control, product code, or stock wording."""
    shows_price = visible.price is not None or bool(visible.price_text)  # or a price range
    return bool(visible.name and shows_price and visible.product_signals >= 1)


# ---------------------------------------------------------------------- profile


def _apply_profile(
    item: dict[str, Any], response: TextResponse, profile: SiteProfile, visible: VisiblePage
) -> None:
    sel = response.selector
    base_url = get_base_url(response)
    values = {key: spec.getall(sel) for key, spec in profile.fields.items()}
    values = {k: [v for v in vs if v and v.strip()] for k, vs in values.items()}

    def text(key: str) -> str | None:
        return normalize_text(" ".join(values[key])) if values.get(key) else None

    prov = item["provenance"]
    for key in ("name", "sku", "brand"):
        found = text(key)
        if found:
            item[key] = normalize_identifier(found) if key == "sku" else found
            prov[key] = "profile"
    if text("description"):
        item["description"] = normalize_html_text(text("description"))
    if text("currency") and parse_currency(text("currency")):
        item["currency"], prov["currency"] = parse_currency(text("currency")), "profile"
    if values.get("price"):
        raw = values["price"][0]
        currency = item["currency"] or profile.currency
        price = parse_price(raw, currency)
        if price is not None:
            item["price"] = price
            prov["price"] = prov["currency"] = "profile"
            item["currency"] = (
                parse_currency(text("currency")) if text("currency") else None
            ) or currency_from_text(raw, currency) or currency
    if values.get("availability"):
        raw = text("availability") or ""
        said = normalize_availability(raw) or availability_from_text(raw)
        if said:
            item["availability"], prov["availability"] = said, "profile"
    if values.get("gtin"):
        item["gtin"] = normalize_gtin(values["gtin"]) or item["gtin"]
    if values.get("images"):
        item["images"] = normalize_images(values["images"], base_url)
    if values.get("breadcrumbs"):
        item["breadcrumbs"] = [t for t in (normalize_text(v) for v in values["breadcrumbs"]) if t]
    if values.get("rating_value"):
        counts: list[Any] = values.get("rating_count") or [None]
        rating = _make_rating(values["rating_value"][0], counts[0])
        item["rating"] = rating or item["rating"]


def _finish(item: dict[str, Any]) -> None:
    name = item["name"]
    crumbs = item["breadcrumbs"]
    if name and crumbs and crumbs[-1].casefold() == name.casefold():
        crumbs.pop()
    if item["price"] is None:
        item["currency"] = None
    prov = item["provenance"]
    for key in list(prov):
        if item.get(key) in (None, ""):
            del prov[key]
