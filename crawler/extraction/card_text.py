"""A listed product's card read as text (:mod:`.listing`): its visible text in pieces
(a piece per block or per struck-through run), and from them its price, the
struck-through regular price, its stock wording and its rating."""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from lxml.etree import _Element

from .normalize.availability import availability_from_text
from .normalize.currency import currency_from_text
from .normalize.price import THREE_DECIMAL_CURRENCIES, ZERO_DECIMAL_CURRENCIES, parse_price
from .visible.dom import SKIPPED_TAGS, hidden_with_class
from .visible.price_text import LIST_BEFORE, MONEY_TEXT

_STRUCK_TAGS = frozenset({"del", "s", "strike"})
_STRUCK_CLASS = re.compile(
    r"(?:^|[-_\s])(?:old|was|regular|strike|struck|crossed|compare|before|list|rrp|msrp|"
    r"original)(?:$|[-_\s]|price)",
    re.I,
)
_BLOCK_TAGS = frozenset(
    {"div", "p", "li", "td", "th", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6", "ul",
     "ol", "section", "article", "figure", "figcaption", "dd", "dt", "dl", "header",
     "footer", "button", "table", "tbody"}
)
# "from £10", "ab 10 €", "dès 10 €", "desde": the lowest of several prices, not the price
_FROM_BEFORE = re.compile(r"(?:\bfrom|\bab|\bdès|\bdesde|\bda|\bstarting at|\bod)\s*:?\s*$", re.I)
# "£2.50 / kg", "£2.50 per 100 g": a unit price beside the price
_UNIT_AFTER = re.compile(r"^\s*(?:/|per\b|pro\b|le\b|el\b|al\b)", re.I)
_RATING = re.compile(
    r"(\d(?:[.,]\d{1,2})?)\s*(?:out of|/|von|sur|de|su|z|of)\s*(5|10)\b", re.I
)
_RATING_CLASS = re.compile(r"rating|stars?\b|review", re.I)
# "£1,299.99", "$ 12.99", "€0.50": a sign, digits (comma thousands or none), a dot and
# two decimals. Of such an amount, ``currency_from_text`` reads the sign's currency and
# :func:`parse_price` the digits without their commas, as they are (but for a currency
# without minor units or with three: that is left to it). Checked on 4.7 million such
# amounts of up to 15 digits, with and without a space and thousands, for every sign
# and 15 currency hints; tests/unit/test_card_money.py checks a sample.
_PLAIN_AMOUNT = re.compile(r"([$£€]) ?(\d{1,3}(?:,\d{3})+|\d+)\.(\d\d)")
_MAX_AMOUNT = Decimal("1e12")  # (parse_price's bound)


def card_texts(card: _Element, names: set[_Element]) -> list[tuple[str, bool]]:
    """The card's visible text outside its name, in pieces: (text, struck through),
    a piece per block (a paragraph, a cell, a line) or per struck run."""
    pieces: list[tuple[str, bool]] = []
    current: list[str] = []
    current_struck = False

    def flush() -> None:
        text = " ".join("".join(current).split())  # (normalize_text)
        if text:
            pieces.append((text, current_struck))
        current.clear()

    def walk(el: _Element, struck: bool) -> None:
        nonlocal current_struck
        tag = el.tag
        if not isinstance(tag, str) or tag in SKIPPED_TAGS or el in names:
            return
        here = struck or tag in _STRUCK_TAGS
        attributes = el.keys()
        if attributes:  # (most elements of a card have none, or a class alone)
            cls = el.get("class") if "class" in attributes else None
            hiding = cls or "hidden" in attributes or "style" in attributes
            if hiding and hidden_with_class(el, cls):
                return
            if cls and not here and _struck_class(cls):
                here = True
        boundary = tag in _BLOCK_TAGS or here != current_struck
        if boundary:
            if current:  # (most boundaries close a block whose text was flushed already)
                flush()
            current_struck = here
        text = el.text
        if text:
            current.append(text)
        for child in el:
            walk(child, here)
            tail = child.tail
            if tail:
                if current_struck != here:
                    if current:
                        flush()
                    current_struck = here
                current.append(tail)
        if boundary:
            if current:
                flush()
            current_struck = struck

    walk(card, False)
    if current:
        flush()
    return pieces


@lru_cache(maxsize=1024)
def _struck_class(cls: str) -> bool:
    """The class says struck through (a class attribute repeats on every card)."""
    return bool(_STRUCK_CLASS.search(cls))


@lru_cache(maxsize=1024)
def rating_class(cls: str) -> bool:
    """A class attribute says rating (one repeats on every card)."""
    return bool(_RATING_CLASS.search(cls))


@lru_cache(maxsize=256)
def _sign_currency(sign: str, hint: str | None) -> str | None:
    """``currency_from_text`` of an amount that is a sign and digits: the sign's."""
    return currency_from_text(sign, hint)


def money(amount: str, hint: str | None) -> tuple[Decimal | None, str | None]:
    """(``parse_price(amount, currency)``, the currency ``currency_from_text`` reads)
    of an amount of money in a card's text: a plain amount ("£1,299.99") read without
    price-parser's regular expressions (the same value, see :data:`_PLAIN_AMOUNT`)."""
    plain = _PLAIN_AMOUNT.fullmatch(amount)
    if plain is None:
        currency = currency_from_text(amount, hint)
        return parse_price(amount, currency), currency
    currency = _sign_currency(plain[1], hint)
    if currency in ZERO_DECIMAL_CURRENCIES or currency in THREE_DECIMAL_CURRENCIES:
        return parse_price(amount, currency), currency
    whole = plain[2]
    value = Decimal(f"{whole.replace(',', '') if ',' in whole else whole}.{plain[3]}")
    return (value if value <= _MAX_AMOUNT else None), currency


def card_price(
    texts: list[tuple[str, bool]], hint: str | None
) -> tuple[Decimal | None, Decimal | None, str | None]:
    """(the price, the struck-through regular price, the currency) of the card's text
    pieces; no price when it is ambiguous (see :mod:`.listing`)."""
    selling: list[tuple[Decimal, str | None]] = []
    regular: list[Decimal] = []
    ambiguous = False
    for text, struck in texts:
        for match in MONEY_TEXT.finditer(text):
            value, currency = money(match.group(0), hint)
            if value is None:
                continue
            start, end = match.span()
            # (an amount alone in its piece, as most are, has nothing before or after)
            if end < len(text) and _UNIT_AFTER.match(text[end:]):
                continue  # a unit price
            if struck or (start and LIST_BEFORE.search(text[:start])):
                regular.append(value)
            elif start and _FROM_BEFORE.search(text[:start]):
                ambiguous = True
            else:
                selling.append((value, currency))
    values = {value for value, _ in selling}
    if ambiguous or len(values) != 1:
        return None, None, None
    price, currency = selling[0]
    if any(c != currency for _, c in selling):
        return None, None, None
    was = max(regular) if regular else None
    return price, was if was is not None and was > price else None, currency


def card_availability(texts: list[tuple[str, bool]]) -> str | None:
    """The card's stock wording: one state, else None (none, or two that disagree)."""
    states = {state for text, _ in texts if (state := availability_from_text(text))}
    return states.pop() if len(states) == 1 else None


def card_rating(rated: list[_Element], texts: list[tuple[str, bool]]) -> dict[str, float] | None:
    """The card's rating from "4.5 out of 5" in its text or the label of one of its
    elements of a rating class (``rated``, :func:`rating_class`), in document order."""
    for text, _ in texts:
        rating = _rating_of(text)
        if rating is not None:
            return rating
    for el in rated:
        for label in (el.get("aria-label"), el.get("title")):
            if label and (rating := _rating_of(label)) is not None:
                return rating
    return None


def _rating_of(text: str) -> dict[str, float] | None:
    match = _RATING.search(text)
    if match:
        value = float(match.group(1).replace(",", "."))
        if value <= float(match.group(2)):
            return {"value": value}
    return None

