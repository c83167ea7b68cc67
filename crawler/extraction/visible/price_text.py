"""The amount a price element shows: its screen-reader copy, a split price put
back together, or its text."""

from __future__ import annotations

import re

from lxml.etree import _Element

from ..normalize.text import normalize_text
from .dom import SKIPPED_TAGS, is_hidden, visible_strings, visible_text

_PRICE_WHOLE = re.compile(r"(?:^|[-_\s])(?:whole|integer|entero|entier|intero)(?:$|\s)", re.I)
_PRICE_FRACTION = re.compile(r"(?:^|[-_\s])(?:fraction|decimals?|decimales|cents)(?:$|\s)", re.I)
# Screen-reader copies of a price: the full amount, in one string.
_SCREEN_READER = re.compile(
    r"(?:^|\s)(?:a-offscreen|sr-only|visually-?hidden|visuallyhidden|screen-?reader-?text|"
    r"offscreen)(?:$|\s)",
    re.I,
)


def text_without(box: _Element, dropped: list[_Element]) -> str:
    """The visible text of ``box`` without the ``dropped`` elements (their tails kept)."""
    skip = set(dropped)
    out: list[str] = []

    def walk(el: _Element) -> None:
        if el not in skip:
            if el.tag == "sup" and re.fullmatch(r"\s*\d{2}\s*", el.text or "") and len(el) == 0:
                whole = "".join(out)
                out.append(("," if re.search(r"\d\.\d{3}\D*$", whole) else ".") + el.text.strip())
            elif el.text:
                out.append(el.text)
            for child in el:
                if isinstance(child.tag, str) and child.tag not in SKIPPED_TAGS:
                    walk(child)
                if child.tail:
                    out.append(child.tail)

    walk(box)
    return normalize_text("".join(out)) or ""


def price_value(el: _Element) -> str:
    content = el.get("content") or el.get("data-price-amount") or el.get("data-price")
    if content and el.get("itemprop") == "price":
        return content
    return price_text(el)


def price_text(el: _Element) -> str:
    """The price as shown: a screen-reader copy of the full amount when there is
    one (``<span class=a-offscreen>$1,099.99</span>``), else a split price put
    back together (whole + fraction), else the text."""
    whole = fraction = symbol = None
    for child in el.iterdescendants():
        if not isinstance(child.tag, str):
            continue
        cls = child.get("class") or ""
        if not cls:
            continue
        if _SCREEN_READER.search(cls):
            text = visible_text(child)
            if any(ch.isdigit() for ch in text) and len(text) <= 40:
                return text
        elif not whole and _PRICE_WHOLE.search(cls):
            whole = re.sub(r"\D", "", child.text or "")
        elif fraction is None and _PRICE_FRACTION.search(cls):
            fraction = re.sub(r"\D", "", visible_text(child))
        elif symbol is None and re.search(r"symbol|currency", cls, re.I):
            symbol = visible_text(child)
    if whole and not fraction:
        sup = el.find(".//sup")  # "<span class=entero>150</span><sup>,99</sup>"
        digits = re.sub(r"\D", "", visible_text(sup)) if sup is not None else ""
        fraction = digits if len(digits) == 2 else None
    if whole:
        return f"{symbol or ''}{whole}.{fraction}" if fraction else f"{symbol or ''}{whole}"
    if el.find(".//sup") is not None:
        return text_without(el, [])  # "115<sup>,99</sup> €": the parts glued back
    # a hidden machine copy inside ("<span style=display:none itemprop=price>1679")
    # is not part of what the shopper reads
    return normalize_text(" ".join(visible_strings(el, skip=is_hidden))) or ""
