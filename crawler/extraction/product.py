"""Zero-configuration product extraction: one pure function from a page to a product.

:func:`extract_product` reads the page's sources -- structured data
(:mod:`.structured`) and the visible page (:mod:`.visible`) -- types the page
(:mod:`.pagetype`: only a product detail page gives a product), keeps the
structured nodes of its own product (:mod:`.main_product`), merges the sources
field by field (:mod:`.merge`), lets a :class:`~crawler.extraction.profiles.SiteProfile`,
when given, override every field it names (:mod:`.profile_overrides`), and
finishes the item: breadcrumbs exclude the product itself, no currency without a
price (except a price range's: provenance ``price: range``), provenance only for
fields that have a value.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.response import get_base_url

from crawler.items import PAGE_FIELDS

from .links import is_html_response
from .main_product import choose_products
from .merge import merge_sources
from .pagetype import is_negative_page, is_product_page, typed_by_profile
from .pageurl import canonical_url
from .profile_overrides import apply_profile
from .profiles import SiteProfile
from .structured import read_structured_data
from .visible.page import read_visible_page

#: The fields read from a product page (derived from :class:`crawler.items.Product`).
PRODUCT_FIELDS = PAGE_FIELDS


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
    visible = read_visible_page(root, url)

    by_profile = typed_by_profile(response, profile)
    if by_profile is False:
        return None
    forced = by_profile is True  # the profile says it is a product page
    if not forced and is_negative_page(visible.name, urlsplit(url).path):
        return None
    canonical = canonical_url(response)
    main = choose_products(structured, visible, url, canonical)
    if main is None:  # several unrelated products: a listing
        if not forced:
            return None
        main = ([], [], None)
    if not forced and not is_product_page(response, structured, visible, main, canonical):
        return None

    item = merge_sources(response, structured, visible, profile, main, canonical)
    if profile is not None and profile.fields:
        apply_profile(item, response, profile)
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


def _finish(item: dict[str, Any]) -> None:
    name = item["name"]
    crumbs = item["breadcrumbs"]
    if name and crumbs and crumbs[-1].casefold() == name.casefold():
        crumbs.pop()
    prov = item["provenance"]
    if item["price"] is None and prov.get("price") != "range":
        item["currency"] = None  # a range's currency stays: the page shows it
    for key in list(prov):
        if item.get(key) in (None, "") and not (key == "price" and prov[key] == "range"):
            del prov[key]
