"""A site's figures: what the data checks (:mod:`.checks`) look at, bounded in size.

One :class:`Figures` per site, shared by every worker through Redis (:mod:`.store`),
is three plain maps, so that adding two of them is a few lines in Python and in Lua:

``n``    counters: ``rows``; per field ``have:<f>`` (rows that have it),
         ``prov:<f>:<source>`` (where it was read: ``data.provenance``),
         ``shown:<f>`` (rows without it whose page shows one: :func:`shows_field`),
         ``uncertain`` and ``uncertain:<f>`` (rows whose reading was uncertain:
         ``data.uncertain``); ``rejected:<reason>`` (pages that gave no product, by the
         extractor's reason); quotes: ``as_of:fetch`` (``as_of`` set to the fetch time).
``top``  capped counts of values, group -> value -> rows: ``availability``, ``price``,
         ``name``, ``shape`` (the URL shapes of the product pages, :func:`url_shape`),
         ``rejected`` (``"<flag><shape>\\t<reason>"`` of the pages that gave no product,
         flag ``P`` when the URL looks like a product's by its own shape, else ``-``).
         At most ``cap`` values a group are kept (the most counted): the share of the
         most common value stays right whenever that value matters.
``ex``   example URLs, ``"<group>\\t<value>"`` (or a counter's name) -> at most
         :data:`EXAMPLES` URLs, kept only for values still in their group's top.

:func:`observe_product`, :func:`observe_rejected` and :func:`observe_quote` add one
row or page; :meth:`Figures.add` adds another worker's figures (what the Lua script of
:mod:`.store` does in Redis).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

EXAMPLES = 3  # example URLs kept per value or counter
TOP_CAP = 24  # values kept per group (in Redis and, doubled, between two syncs in a worker)

#: the product fields whose coverage is figured (have, provenance, shown)
PRODUCT_FIELDS = ("name", "price", "currency", "availability", "sku", "gtin", "brand")
#: the fields :func:`shows_field` can find shown on a page without their value read
SHOWN_FIELDS = ("price", "sku", "availability")
QUOTE_FIELDS = ("symbol", "name", "price", "currency", "change", "volume", "as_of")

_DIGITS = re.compile(r"\d+")
# a price as pages show it: a currency sign or code beside an amount (either order)
_PRICE_SHOWN = re.compile(
    r"(?:[$€£¥₹₽₩]|\b(?:USD|EUR|GBP|CHF|JPY|SEK|NOK|DKK|PLN|CZK|CAD|AUD)\b|\bkr\b)"
    r"\s?\d{1,7}(?:[.,\s]\d{3})*(?:[.,]\d{2})?"
    r"|\d{1,7}(?:[.,\s]\d{3})*[.,]\d{2}\s?(?:[$€£¥₹₽₩]|\b(?:USD|EUR|GBP|CHF|SEK|NOK|DKK|PLN|CZK|kr|zł|Kč)\b)"
)
# a product code's label followed by a code
_CODE_SHOWN = re.compile(
    r"\b(?:SKU|MPN|EAN|GTIN|UPC|Art(?:ikel)?\.?[\s-]?(?:Nr|nummer)|Item\s?(?:No|#|number)"
    r"|Product\s?code|R[ée]f(?:[ée]rence)?|Referenz|Model(?:l)?\s?(?:No|Nr|number)?)"
    r"\.?\s*[:#]?\s*(?:</?\w[^>]*>\s*)*[A-Z0-9][A-Z0-9._/-]{2,}",
    re.I,
)
_STOCK_SHOWN = re.compile(
    r"\b(?:in stock|out of stock|sold out|available|unavailable|auf lager|lieferbar|"
    r"ausverkauft|nicht verfügbar|en stock|disponible|épuisé|rupture de stock|agotado|"
    r"esaurito|disponibile|op voorraad|uitverkocht|w magazynie|niedostępny)\b",
    re.I,
)
_SHOWN = {"price": _PRICE_SHOWN, "sku": _CODE_SHOWN, "availability": _STOCK_SHOWN}


@dataclass
class Figures:
    """One site's figures (see the module doc); ``kind``: ``product`` or ``quote``."""

    n: dict[str, float] = field(default_factory=dict)
    top: dict[str, dict[str, float]] = field(default_factory=dict)
    ex: dict[str, list[str]] = field(default_factory=dict)

    # -- building ------------------------------------------------------------------
    def count(self, name: str, by: float = 1, url: str | None = None) -> None:
        self.n[name] = self.n.get(name, 0) + by
        if url is not None:
            self.example(name, url)

    def value(self, group: str, value: str, url: str | None = None) -> None:
        values = self.top.setdefault(group, {})
        values[value] = values.get(value, 0) + 1
        if url is not None:
            self.example(f"{group}\t{value}", url)

    def example(self, key: str, url: str) -> None:
        urls = self.ex.setdefault(key, [])
        if len(urls) < EXAMPLES and url not in urls:
            urls.append(url)

    def add(self, other: Figures, cap: int = TOP_CAP) -> None:
        """Add ``other`` (another worker's, or the figures since the last sync)."""
        for name, count in other.n.items():
            self.n[name] = self.n.get(name, 0) + count
        for group, values in other.top.items():
            mine = self.top.setdefault(group, {})
            for value, count in values.items():
                mine[value] = mine.get(value, 0) + count
        for key, urls in other.ex.items():
            for url in urls:
                self.example(key, url)
        self.trim(cap)

    def trim(self, cap: int = TOP_CAP) -> None:
        """Keep the ``cap`` most counted values of each group, and their examples only."""
        for group, values in self.top.items():
            if len(values) <= cap:
                continue
            kept = dict(sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))[:cap])
            for value in values.keys() - kept.keys():
                self.ex.pop(f"{group}\t{value}", None)
            self.top[group] = kept

    def __bool__(self) -> bool:
        return bool(self.n or self.top)

    # -- reading -------------------------------------------------------------------
    def get(self, name: str) -> int:
        return int(self.n.get(name, 0))

    def most_common(self, group: str) -> tuple[str | None, int]:
        """The group's most counted value and its count (``(None, 0)`` when empty)."""
        values = self.top.get(group) or {}
        if not values:
            return None, 0
        value, count = max(values.items(), key=lambda kv: (kv[1], kv[0]))
        return value, int(count)

    def examples(self, key: str) -> list[str]:
        return list(self.ex.get(key, []))[:EXAMPLES]

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "top": self.top, "ex": self.ex}

    @classmethod
    def from_json(cls, data: Any) -> Figures:
        """Decode what :meth:`to_json` (or the Lua script, whose empty tables are ``{}``)
        wrote; anything malformed reads as empty."""
        if not isinstance(data, dict):
            return cls()
        n, top, ex = (
            value if isinstance(value := data.get(part), dict) else {}
            for part in ("n", "top", "ex")
        )
        return cls(
            n={str(k): float(v) for k, v in n.items() if isinstance(v, int | float)},
            top={
                str(g): {str(k): float(v) for k, v in vals.items() if isinstance(v, int | float)}
                for g, vals in top.items()
                if isinstance(vals, dict)
            },
            ex={str(k): [str(u) for u in v] for k, v in ex.items() if isinstance(v, list)},
        )


def url_shape(url: str) -> str:
    """The shape of a URL's path: its last segment ``*`` (keeping an extension), digits
    elsewhere ``#``: ``/p/blue-widget-12`` and ``/p/red-9`` are both ``/p/*``, while
    ``/c/widgets`` is ``/c/*`` and ``/`` is ``/``."""
    path = urlsplit(url).path or "/"
    parts = path.split("/")
    last = parts[-1]
    if last:
        stem, dot, ext = last.rpartition(".")
        parts[-1] = f"*.{ext.lower()}" if dot and stem and ext.isalnum() and len(ext) <= 5 else "*"
    parts[:-1] = [_DIGITS.sub("#", part) for part in parts[:-1]]
    return "/".join(parts) or "/"


def shows_field(field_name: str, text: str) -> bool:
    """Does the page's text show the field (a price beside a currency, a product code
    after its label, stock wording) although it was not read?"""
    pattern = _SHOWN.get(field_name)
    return pattern is not None and pattern.search(text) is not None


def observe_product(
    figures: Figures, item: dict[str, Any], text: str | None = None
) -> None:
    """Add one stored product row (``text``: its page's HTML, to see what it shows)."""
    url = str(item.get("url") or "")
    figures.count("rows")
    prov = item.get("provenance") or {}
    for name in PRODUCT_FIELDS:
        value = item.get(name)
        if value not in (None, "", []):
            figures.count(f"have:{name}")
            source = prov.get(name)
            if isinstance(source, str):
                figures.count(f"prov:{name}:{source}")
        elif name in SHOWN_FIELDS and text is not None and shows_field(name, text):
            figures.count(f"shown:{name}", url=url)
    uncertain = item.get("uncertain") or []
    if uncertain:
        figures.count("uncertain", url=url)
        for name in uncertain:
            figures.count(f"uncertain:{name}")
    if item.get("availability"):
        figures.value("availability", str(item["availability"]), url)
    if item.get("price") is not None:
        figures.value("price", f"{item['price']} {item.get('currency') or ''}".strip(), url)
    if item.get("name"):
        figures.value("name", " ".join(str(item["name"]).split()).casefold()[:160], url)
    figures.value("shape", url_shape(url))


def observe_rejected(figures: Figures, url: str, reason: str, looks_like: bool) -> None:
    """Add one page that gave no product (``reason``: the extractor's, ``looks_like``:
    its URL has the shape of a product page's by itself)."""
    figures.count(f"rejected:{reason}")
    figures.value("rejected", f"{'P' if looks_like else '-'}{url_shape(url)}\t{reason}", url)


def observe_quote(figures: Figures, item: dict[str, Any]) -> None:
    """Add one stored quote row."""
    url = str(item.get("url") or "")
    figures.count("rows")
    prov = item.get("provenance") or {}
    for name in QUOTE_FIELDS:
        if item.get(name) not in (None, ""):
            figures.count(f"have:{name}")
            source = prov.get(name)
            if isinstance(source, str):
                figures.count(f"prov:{name}:{source}")
    if prov.get("as_of") == "fetch":
        figures.count("as_of:fetch", url=url)
    uncertain = item.get("uncertain") or []
    if uncertain:
        figures.count("uncertain", url=url)
        for name in uncertain:
            figures.count(f"uncertain:{name}")
    if item.get("price") is not None:
        figures.value("price", f"{item['price']} {item.get('currency') or ''}".strip(), url)
