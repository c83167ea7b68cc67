"""Quotes in a page's data: JSON-LD, the JSON state scripts embed, and meta tags.

A quote object is any JSON object with a symbol and a price among its keys, as
:func:`crawler.extraction.quotes.vocabulary.field_of_key` reads keys
(``{"symbol": "AAPL", "regularMarketPrice": {"raw": 187.44, "fmt": "187.44"}}``,
``{"tickerSymbol": ..., "price": ...}``, ``{"ticker": ..., "last": ...}``). They
are found in ``<script type="application/ld+json">``, in scripts of JSON
(``application/json``, ``__NEXT_DATA__``, Nuxt's) and in scripts that assign JSON
to a variable (``window.__INITIAL_STATE__ = {...};``), however deep. A value
that is an object with ``raw`` (or ``value``) and ``fmt`` counts as its ``raw``.

The same walk reads a JSON quote endpoint (:mod:`.endpoints`): there every
quote object is a quote; on a page only the one the page is about is taken
(:func:`pick_quote`).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterator
from typing import Any

from crawler.extraction.normalize.currency import ISO_CURRENCIES

from .vocabulary import field_of_key, field_of_tokens, key_of, tokens

MAX_DEPTH = 40
MAX_OBJECTS = 20_000  # JSON objects looked at in one document
_ASSIGNED = re.compile(r"=\s*(\{.*\}|\[.*\])\s*;?\s*$", re.S)
_SCRIPT_TYPES = ("application/ld+json", "application/json", "text/json")
_NOT_QUOTES = re.compile(r"Product|Offer|Service|Event|Place|Book|Vehicle", re.I)
# a key that is a ticker: {"AAPL": {...}}, {"SAP.DE": {...}}
_KEYED_SYMBOL = re.compile(r"^[A-Z0-9^][A-Z0-9.\-^=]{0,14}$")


def _unwrap(value: Any) -> Any:
    if isinstance(value, dict):
        for key in ("raw", "value", "val", "amount"):
            if key in value and not isinstance(value[key], dict | list):
                return value[key]
    return value


def quote_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """The quote fields of one JSON object (its scalar values under known keys)."""
    fields: dict[str, Any] = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            continue
        field = field_of_key(key)
        if field is None:
            continue
        value = _unwrap(value)
        if isinstance(value, dict | list) or value is None or value == "":
            continue
        fields.setdefault(field, value)
    if "price" not in fields and "close" in fields:
        fields["price"] = fields["close"]
    return fields


def is_quote(fields: dict[str, Any]) -> bool:
    """A symbol and a price; a symbol that is a currency's code (``{"symbol": "USD",
    "value": 1}``: a page's exchange rates) is not an instrument's."""
    symbol = fields.get("symbol")
    if not isinstance(symbol, str | int) or not str(symbol).strip() or "price" not in fields:
        return False
    return str(symbol).strip().upper() not in ISO_CURRENCIES


def walk_quotes(data: Any) -> Iterator[dict[str, Any]]:
    """Every quote object of a JSON document (its fields), outermost first; an object keyed
    by symbol (``{"AAPL": {"price": ...}}``) gives its key as the symbol."""
    seen = 0
    stack: deque[tuple[Any, int, str | None]] = deque([(data, 0, None)])
    while stack:
        node, depth, parent_key = stack.popleft()
        seen += 1
        if seen > MAX_OBJECTS or depth > MAX_DEPTH:
            return
        if isinstance(node, dict):
            if _NOT_QUOTES.search(str(node.get("@type", ""))):
                continue  # a product and its offers: prices, not quotes
            fields = quote_fields(node)
            if "symbol" not in fields and "price" in fields and parent_key:
                if _KEYED_SYMBOL.match(parent_key):
                    fields["symbol"] = parent_key
            if is_quote(fields):
                yield fields
                continue
            for key, value in node.items():
                if isinstance(value, dict | list):
                    stack.append((value, depth + 1, key if isinstance(key, str) else None))
        elif isinstance(node, list):
            stack.extend((item, depth + 1, None) for item in node if isinstance(item, dict | list))


def _script_json(script: Any) -> Any:
    text = (script.text or "").strip()
    if not text:
        return None
    kind = (script.get("type") or "").strip().lower()
    if kind in _SCRIPT_TYPES or script.get("id") in ("__NEXT_DATA__", "__NUXT_DATA__"):
        try:
            return json.loads(text)
        except ValueError:
            return None
    if kind and "javascript" not in kind and kind != "module":
        return None
    match = _ASSIGNED.search(text) if len(text) < 2_000_000 else None
    if not match:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def page_quotes(root: Any) -> list[tuple[dict[str, Any], str]]:
    """The quote objects of a page's scripts, each with its source (``structured`` for
    JSON-LD, ``embedded`` for a script's state), in page order."""
    found: list[tuple[dict[str, Any], str]] = []
    for script in root.iter("script"):
        data = _script_json(script)
        if data is None:
            continue
        kind = (script.get("type") or "").strip().lower()
        source = "structured" if kind == "application/ld+json" else "embedded"
        for fields in walk_quotes(data):
            found.append((fields, source))
    return found


def same_symbol(a: Any, b: Any) -> bool:
    return key_of(str(a)) == key_of(str(b))


def pick_quote(
    quotes: list[tuple[dict[str, Any], str]], symbols: list[str]
) -> tuple[dict[str, Any], str] | None:
    """The page's own quote among its data's: the one whose symbol the page names
    (``symbols``: from its address, title, heading), else the only one (duplicates of
    one symbol count once), else None: the page's data quotes several instruments."""
    for symbol in symbols:
        for fields, source in quotes:
            if same_symbol(fields["symbol"], symbol):
                return fields, source
    distinct = {key_of(str(fields["symbol"])) for fields, _ in quotes}
    if len(distinct) == 1:
        return quotes[0]
    return None


_META_SKIP = ("og:", "product:", "twitter:", "fb:", "al:")


def meta_fields(root: Any) -> dict[str, str]:
    """Quote fields named by ``<meta name|property|itemprop=... content=...>``
    (``tickerSymbol``, ``price``, ``priceCurrency``, ``exchange``, ``quoteTime``)."""
    fields: dict[str, str] = {}
    for meta in root.iter("meta"):
        name = meta.get("itemprop") or meta.get("name") or meta.get("property") or ""
        content = (meta.get("content") or "").strip()
        if not name or not content or name.lower().startswith(_META_SKIP):
            continue
        field = field_of_key(name) or field_of_tokens(tokens([name]))
        if field is not None and field not in ("name", "close"):
            fields.setdefault(field, content)
    return fields


def product_markup(root: Any) -> bool:
    """Does the page declare itself a product page (JSON-LD or microdata ``Product``,
    ``og:type`` product)? A quote page does not."""
    for meta in root.iter("meta"):
        if (meta.get("property") or "").lower() == "og:type" and "product" in (
            meta.get("content") or ""
        ).lower():
            return True
    for element in root.iter():
        itemtype = element.get("itemtype") if isinstance(element.tag, str) else None
        if itemtype and itemtype.rstrip("/").lower().endswith(("/product", "/individualproduct")):
            return True
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        if re.search(r'"@type"\s*:\s*\[?\s*"(?:https?://schema\.org/)?Product"', script.text or ""):
            return True
    return False
