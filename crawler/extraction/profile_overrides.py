"""A site profile's fields override what zero-configuration extraction found."""

from __future__ import annotations

from typing import Any

from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from .nodes import make_rating
from .normalize.availability import availability_from_text, normalize_availability
from .normalize.currency import currency_from_text, parse_currency
from .normalize.identifiers import normalize_gtin, normalize_identifier
from .normalize.price import parse_price
from .normalize.text import normalize_html_text, normalize_text
from .normalize.urls import normalize_images
from .profiles import SiteProfile


def apply_profile(item: dict[str, Any], response: TextResponse, profile: SiteProfile) -> None:
    """Override the item's fields with the values of the profile's selectors that
    match the page (normalised like every field; provenance ``profile``)."""
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
        rating = make_rating(values["rating_value"][0], counts[0])
        item["rating"] = rating or item["rating"]
