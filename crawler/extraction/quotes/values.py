"""A field's value from what a source gave: a JSON value, or a text the page shows.

Each function takes the raw value (a number, a string, a JSON object's ``raw``)
and the page's number style and language, and gives the field's value or None.
A text must be the field's and nothing else: ``"187.44 USD"``, ``"+1.23 (+0.66%)"``,
``"52.345.678 Stück"``, ``"2,95 Bio. €"`` are values; ``"Price data delayed 15
minutes"`` is not (a label's sentence), nor ``"12 days"``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from crawler.extraction.normalize.currency import ISO_CURRENCIES, parse_currency

from .numbers import Number, NumberStyle, find_numbers

# words a number may carry: units of a volume, currency words, signs' words
_UNIT_WORDS = frozenset(
    "shares share sh stuck stück stk stk. aktien titres titre actions acciones azioni acoes "
    "ações aandelen aktier akcji akcje szt шт акций pcs units contracts lots uhr gbx gbp "
    "usd eur fr sfr kr zl zł kč ft lei lv tl rs rp rm".split()
)
_SYMBOLS = "$€£¥₹₩₽₺₪₫₴₱฿₦₵₡₲₸￥円元원￦"
_CJK_UNITS = "株股주"
_LEFTOVER = re.compile(r"[^\W\d_]+")
_SYMBOL = re.compile(r"^[A-Za-z0-9^][A-Za-z0-9.\-^=:/&]{0,19}$")
_EXCHANGE_SYMBOL = re.compile(
    r"^([A-Za-z][A-Za-z .]{1,24}?)\s?:\s?([A-Za-z0-9^][A-Za-z0-9.\-^=]{0,14})$"
)


def _json_number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def is_value_text(text: str, numbers: list[Number]) -> bool:
    """Is ``text`` only its numbers, with currency signs and codes, units and signs?"""
    rest = text
    for number in reversed(numbers):
        rest = rest[: number.start] + " " + rest[number.end :]
    rest = rest.replace("R$", " ")  # the real (Brazil)
    for sign in _SYMBOLS + _CJK_UNITS:
        rest = rest.replace(sign, " ")
    for word in _LEFTOVER.findall(rest):
        lowered = word.lower()
        if word.upper() in ISO_CURRENCIES or lowered in _UNIT_WORDS:
            continue
        return False
    return True


def _numbers(text: str, style: NumberStyle | None, language: str | None,
             whole: bool = False) -> list[Number]:
    if len(text) > 80:
        return []
    numbers = find_numbers(text, style, language, whole)
    if not numbers or not is_value_text(text, numbers):
        return []
    return numbers


def to_amount(
    value: Any, style: NumberStyle | None, language: str | None, signed: bool = False
) -> Decimal | None:
    """A price (or a change, ``signed``): a JSON number, or the first number of a value text
    that is not a percent."""
    number = _json_number(value)
    if number is not None:
        return number
    if not isinstance(value, str):
        return None
    for found in _numbers(value, style, language):
        if not found.percent:
            if found.value < 0 and not signed:
                return None
            return found.value
    return None


def to_percent(value: Any, style: NumberStyle | None, language: str | None) -> Decimal | None:
    """A change in percent: a JSON number, or the number with ``%`` of a text (else its only
    number: a "Change %" label's value may leave the sign out)."""
    number = _json_number(value)
    if number is not None:
        return number
    if not isinstance(value, str):
        return None
    numbers = _numbers(value, style, language)
    for found in numbers:
        if found.percent:
            return found.value
    return numbers[0].value if len(numbers) == 1 else None


def to_count(value: Any, style: NumberStyle | None, language: str | None) -> int | None:
    """A volume: a whole number."""
    number = _json_number(value)
    if number is not None:
        return int(number) if number == number.to_integral_value() else None
    if not isinstance(value, str):
        return None
    numbers = _numbers(value, style, language, whole=True)
    if not numbers or numbers[0].percent:
        return None
    return int(numbers[0].value.to_integral_value())


def to_range(
    value: Any, style: NumberStyle | None, language: str | None
) -> tuple[Decimal, Decimal] | None:
    """A day's range, ``"185.00 - 189.20"``: low and high."""
    if not isinstance(value, str):
        return None
    numbers = [n for n in _numbers(value, style, language) if not n.percent]
    if len(numbers) != 2:
        return None
    low, high = sorted(abs(n.value) for n in numbers)
    return low, high


def to_symbol(value: Any) -> tuple[str | None, str | None]:
    """A symbol, and the exchange when it is written with one (``"NASDAQ: AAPL"``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None, None
    text = value.strip()
    match = _EXCHANGE_SYMBOL.match(text)
    if match and not _SYMBOL.match(text.replace(" ", "")):
        return match.group(2), match.group(1).strip()
    if match and ":" in text and match.group(1).isupper():
        return match.group(2), match.group(1).strip()
    return (text, None) if _SYMBOL.match(text) else (None, None)


def to_text(value: Any, limit: int = 200) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if text and len(text) <= limit else None


def to_currency(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > 40:
        return None
    return parse_currency(value)
