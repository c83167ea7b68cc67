"""Which elements of a page's walk are price elements (:class:`.index.PageIndex`'s
``prices``): marked by ``itemprop="price"``, by a price class or by a struck or inserted
tag, with no class of their own or of their context that rules them out (a unit price,
an instalment, a split price's part), and with an amount in their text (a counter of
units sold or of reviews is none)."""

from __future__ import annotations

import re
from functools import lru_cache

from lxml.etree import _Element

from ..ascii_case import CaseFolded
from .classtests import register_class_test
from .dom import CachedSearch, text_of
from .price_text import MONEY_TEXT

_PRICE_CLASS = re.compile(
    r"price|amount|precio|preço|preco|preis|prix|prezzo|"
    r"(?:^|[\s_-])(?:cena|cijena|pris|hinta|hind|pret|preț|cost|kaina|prijs)(?:$|[\s_-])",
    re.I,
)
# Parts of a split price ("<span class=price-whole>1,099</span><span class=price-fraction>99")
# are not prices of their own: the element around them is.
_PRICE_PART = re.compile(
    r"(?:^|[-_\s])(?:whole|fraction|decimals?|integer|cents|symbol|currency|entero|decimales|"
    r"ganzzahl|entier|intero)(?:$|\s)",
    re.I,
)
_NOT_PRICE_CLASS = re.compile(
    r"label|unit|per-?(?:kg|item|100|l\b)|excl|excluding|installment|instalment|klarna|"
    r"afterpay|saving|save|discount|percent|off\b|range|filter|(?:price|range|ui)-?slider|slider-?range|currency-?code|"
    r"tax-?info|points|shipping|grundpreis|precio-?unit|prix-?unit",
    re.I,
)
_NOT_PRICE_CONTEXT = CachedSearch(
    re.compile(
        r"excl|excluding|installment|instalment|klarna|afterpay|saving|unit-?price|price-?per",
        re.I,
    )
)
# Counters in a price box -- units sold, purchase limits, reviews -- are no amounts:
# "29개 구매", "957 sold", "max 999 per person", "12 reviews", "3 szt." (class: deal and
# marketplace pages that print a sales counter inside their price block).
_COUNT_TEXT = re.compile(
    r"\d[\d.,]*\s*(?:개|件|個|点|명|人|인당|pcs\b|pieces\b|items?\b|sold\b|bought\b|purchased\b|"
    r"reviews?\b|ratings?\b|szt\b|шт\b|stk\b|unidades\b|units?\b|per person\b)|"
    r"\b(?:sold|bought|purchased|max(?:imum)?|limit)\b[^\d]{0,12}\d[\d.,]*",
    re.I,
)
_COUNTS = CaseFolded(_COUNT_TEXT)  # (an ASCII text searched lowered: ..ascii_case)
# A sale price's class: marks a price element here, and the selling price of a price box
# in :mod:`.price`.
SALE_CLASS = re.compile(
    r"special-?price|sale-?price|price--?sale|price-item--sale|final-?price|current-?price|"
    r"price--?current|price-?new|new-?price|\bnow\b|price-?now|offer-?price|our-?price|"
    r"precio-?(?:oferta|final|ahora)|angebots-?preis|aktions-?preis|prix-?promo",
    re.I,
)


# Pure functions of one class attribute, which repeats across a page and a shop's pages
# (these searches were most of the page walk's time).
# every string either pattern finds holds one of these words (the need: see
# register_class_test)
@register_class_test(
    need=re.compile(
        r"price|amount|precio|preço|preco|preis|prix|prezzo|cena|cijena|pris|hinta|hind|pret|"
        r"preț|cost|kaina|prijs|now"
    )
)
@lru_cache(maxsize=4096)
def names_price(cls: str) -> bool:
    return bool(_PRICE_CLASS.search(cls) or SALE_CLASS.search(cls))


@lru_cache(maxsize=4096)
def _rules_out_price(cls: str) -> bool:
    return bool(_NOT_PRICE_CLASS.search(cls) or _PRICE_PART.search(cls))



def is_price_element(el: _Element, tag: str, cls: str) -> bool:
    """A price element of the walk (``tag``, ``cls``: its tag and class attribute): marked
    by an ``itemprop="price"``, a price class or a struck/inserted tag, with no class
    of its own or of its context that rules it out, and an amount in its text."""
    if tag in ("meta", "link", "input", "form", "img", "body", "html", "table", "ul"):
        return False
    if (
        el.get("itemprop") != "price"
        and not names_price(cls)
        and tag not in ("ins", "del", "s")
    ):
        return False
    if _rules_out_price(cls):
        return False
    parent = el.getparent()
    for _ in range(3):  # "<span class=price-excluding-tax><span class=price>"
        if parent is None:
            break
        if _NOT_PRICE_CONTEXT.search(parent.get("class") or ""):
            return False
        parent = parent.getparent()
    text = " ".join(text_of(el).split())
    if len(text) > 80 or not any(map(str.isdigit, text)):
        return False
    if "%" in text and not MONEY_TEXT.search(text):
        return False  # a discount badge ("-25%"), not a price box that also shows one
    # a counter alone is no price; a price beside a counter ("30,000원 29개 구매") is
    # (lowering an ASCII text first changes no digit)
    return any(map(str.isdigit, _COUNTS.sub(" ", text)))
