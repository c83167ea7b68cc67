"""Values read from schema.org nodes (plain dicts, see :mod:`.structured`):
first values of lists, names, GTINs, brands, ratings, breadcrumb trails."""

from __future__ import annotations

import re
from typing import Any

from .normalize.identifiers import normalize_gtin
from .normalize.text import normalize_text

_GTIN_KEYS = ("gtin13", "gtin12", "gtin14", "gtin8", "gtin", "isbn", "ean", "upc")


def name_key(value: Any) -> str:
    """A name for comparing: its first string, whitespace collapsed, case folded."""
    return (normalize_text(first_str(value)) or "").casefold()


def first_str(value: Any) -> str | None:
    """The first non-blank string of a value, list or named node (its ``name``)."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, str) and v.strip()), None)
    if isinstance(value, dict):
        value = value.get("name")
    return value if isinstance(value, str) else None


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def gtin_of(node: dict[str, Any]) -> str | None:
    """The node's first valid GTIN (``gtin13``, ``gtin12``... ``isbn``, ``ean``, ``upc``)."""
    for key in _GTIN_KEYS:
        gtin = normalize_gtin(node.get(key))
        if gtin:
            return gtin
    return None


def brand_of(value: Any) -> str | None:
    for item in as_list(value):
        if isinstance(item, dict):
            item = item.get("name")
            if isinstance(item, list):
                item = item[0] if item else None
        text = normalize_text(item) if isinstance(item, str) else None
        if text:
            return text
    return None


def rating_of(node: dict[str, Any]) -> dict[str, Any] | None:
    agg = node.get("aggregateRating")
    if isinstance(agg, list):
        agg = agg[0] if agg else None
    if not isinstance(agg, dict):
        return None
    return make_rating(
        agg.get("ratingValue"), agg.get("reviewCount") or agg.get("ratingCount")
    )


def make_rating(value: Any, count: Any) -> dict[str, Any] | None:
    """``{"value": float, "count": int | None}``, or None for an unusable value."""
    try:
        number = float(str(first_item(value)).replace(",", ".").strip())
    except (TypeError, ValueError):
        return None
    digits = re.sub(r"[^\d]", "", str(first_item(count))) if count not in (None, "", []) else ""
    if number < 0 or number != number:  # negative or NaN
        return None
    return {"value": number, "count": int(digits) if digits else None}


def first_item(value: Any) -> Any:
    """The first item of a list (None when empty), else the value itself."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


def breadcrumb_names(node: dict[str, Any]) -> list[str]:
    """The names of a BreadcrumbList's elements, in the order of their positions."""
    entries = []
    for i, element in enumerate(as_list(node.get("itemListElement"))):
        if not isinstance(element, dict):
            continue
        name = element.get("name")
        item = element.get("item")
        if not name and isinstance(item, dict):
            name = item.get("name")
        name = normalize_text(first_item(name)) if name else None
        if not name:
            continue
        try:
            position = float(str(first_item(element.get("position"))))
        except (TypeError, ValueError):
            position = float(i)
        entries.append((position, i, name))
    return [name for _, _, name in sorted(entries)]


def first_value(nodes: list[dict[str, Any]], getter: Any) -> Any:
    """The first value ``getter`` reads from the nodes that is not empty."""
    for node in nodes:
        value = getter(node)
        if value not in (None, "", []):
            return value
    return None
