"""The amount a price element shows: its screen-reader copy, a split price put
back together, or its text."""

from __future__ import annotations

import re

from lxml.etree import _Element

from ..normalize.text import normalize_text
from .dom import (
    SCREEN_READER,
    SKIPPED_TAGS,
    is_hidden,
    offscreen_style,
    visible_strings,
    visible_text,
)

_PRICE_WHOLE = re.compile(r"(?:^|[-_\s])(?:whole|integer|entero|entier|intero)(?:$|\s)", re.I)
_PRICE_FRACTION = re.compile(r"(?:^|[-_\s])(?:fraction|decimals?|decimales|cents)(?:$|\s)", re.I)
# A label right before a price that makes it the current one ("Was $64.95 Now $52.00").
SALE_LABEL = re.compile(
    r"\s*(?:now|sale|sale price|now only|special price|our price|jetzt|nur|ahora|"
    r"maintenant|ora|nu)\s*:?\s*$",
    re.I,
)
# A list-price label right before an amount in running text ("... MSRP $25.").
LIST_BEFORE = re.compile(
    r"(?:\b(?:list price|was|rrp|msrp|srp|uvp|statt|vorher|antes|retail(?: price)?|"
    r"originally|original price|regular price|compare at|pvp|prix conseillé|"
    r"cena katalogowa|старая цена)\s*:?|(?:建議售價|建议售价|原價|原价|定價|定价|市價|市价|"
    r"参考价|希望小売価格|通常価格|정가|시중가)\s*[:：]?)\s*$",
    re.I,
)
# An amount of money written in text, with its currency sign, code or word before or
# after it ("2 000 ₽"); a dollar sign after an amount only after decimals written with a
# comma ("49,99 $" in Canadian French: "Pack of 3 $9.99" is $9.99). Guarded by the
# characters its amounts open with (a sign, a currency code's letter or a digit; tests/
# unit/test_extraction_phrase_starts.py checks it): a search tests them once at each
# position instead of each way of writing an amount (2.6x faster on records' texts).
_MONEY_STARTS = r"$€£¥₹₩₽₺RUEGCABMJSNDP\d"
MONEY_TEXT = re.compile(
    rf"(?=[{_MONEY_STARTS}])(?:"
    r"(?:[$€£¥₹₩₽₺]|R\$|\bRs\.?|\bRM|\bRp|\b(?:USD|EUR|GBP|CAD|AUD|CLP|BRL|MXN|ARS|COP|JPY|CHF|SEK|NOK|DKK|PLN)\b)"
    r"\s?\d[\d.,\s]*\d|\d(?:[\d.,]|[\s\u00a0\u202f](?=\d{3}))*\s?"
    r"(?:€|₽|zł|kr|元|円|원|₫|₴|₸|тг|руб|грн|Kč|Ft|\b(?:EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|CLP)\b)"
    r"|\d(?:\d|[\s\u00a0\u202f.](?=\d{3}))*,\d\d\s?\$)"
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
        cls, style = child.get("class") or "", child.get("style")
        if not cls and not style:
            continue
        if SCREEN_READER.search(cls) or (style and offscreen_style(style)):
            text = visible_text(child)
            if any(ch.isdigit() for ch in text) and len(text) <= 40:
                return text
        elif not whole and _PRICE_WHOLE.search(cls):
            whole = re.sub(r"\D", "", child.text or "")
        elif fraction is None and _PRICE_FRACTION.search(cls):
            # the decimal mark's own element ("price-decimal": ".") holds no digit: the
            # fraction is the next part (class: prices split into whole, mark, fraction)
            fraction = re.sub(r"\D", "", visible_text(child)) or None
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


def paid_amount(text: str) -> str:
    """Of a price element's text that writes several amounts, the one the shopper
    pays: an amount labelled current ("Now $30.00") wins, an amount labelled a list
    price ("Was $40.00", "RRP £50") is dropped; with no such labels, or one amount, the
    text as it is. Class: price blocks that write "Was X Now Y" in one element, the
    labels in plain spans with no list-price class."""
    found = list(MONEY_TEXT.finditer(text))
    if len(found) < 2:
        return text
    start = 0
    kept: list[str] = []
    for match in found:
        before = text[start : match.start()]
        start = match.end()
        if SALE_LABEL.match(before):
            return match.group(0)
        if not LIST_BEFORE.search(before):
            kept.append(match.group(0))
    return kept[0] if kept and len(kept) < len(found) else text
