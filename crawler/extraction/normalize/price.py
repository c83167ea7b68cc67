"""Prices: a ``Decimal`` with a dot, from a number or a price as shown."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from price_parser.parser import extract_price_text, parse_number

from .text import normalize_text

# Currencies whose prices are written without minor units: "24.990" is 24990.
ZERO_DECIMAL_CURRENCIES = frozenset(
    {"CLP", "JPY", "KRW", "ISK", "VND", "PYG", "UGX", "XAF", "XOF", "IDR", "COP", "HUF"}
)

# Currencies with three decimals: "KWD 12.500" is twelve and a half dinars.
THREE_DECIMAL_CURRENCIES = frozenset({"KWD", "BHD", "OMR", "JOD", "TND", "LYD"})
_THREE_DECIMAL_TEXT = re.compile(r"\b(?:KWD|BHD|OMR|JOD|TND|LYD)\b|د\.ك|ر\.ع|د\.ب|د\.ا|د\.ت")
_PLAIN_NUMBER = re.compile(r"^[+]?\d+(?:\.\d+)?$")
# Digits and separators of other scripts (Arabic-Indic, Persian, full-width), as ASCII:
# "٤٩٫٩٩" is 49.99, "１２，８００" is 12,800.
_ASCII = str.maketrans(
    {
        **{chr(0x0660 + i): str(i) for i in range(10)},
        **{chr(0x06F0 + i): str(i) for i in range(10)},
        **{chr(0xFF10 + i): str(i) for i in range(10)},
        "\u066b": ".",
        "\u066c": ",",
        "\uff0c": ",",
        "\uff0e": ".",
    }
)
# A Swiss thousands apostrophe ("1'299.00", "1’299.00").
_APOSTROPHE = re.compile(r"(?<=\d)['’](?=\d{3})")
_THOUSANDS_DOT = re.compile(r"^\d{1,3}(?:\.\d{3})+$")


def parse_price(value: Any, currency: str | None = None) -> Decimal | None:
    """Parse a price from a number or a string as shown or marked up.

    Strings go through ``price-parser`` (``"1.299,00 €"``, ``"$1,299.00"``,
    ``"R$ 1.299,90"``, ``"24.990"``). A plain machine number such as the
    ``"1299.00"`` of structured data is taken as is, except that for a
    zero-decimal currency (CLP, JPY...) ``"24.990"`` means 24990. Negative,
    zero-length and absurd values give ``None``; a zero price is kept.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (list, tuple)):
        for item in value:
            price = parse_price(item, currency)
            if price is not None:
                return price
        return None
    if isinstance(value, dict):
        return None
    amount: Decimal | None
    if isinstance(value, (int, float, Decimal)):
        try:
            amount = Decimal(str(value))
        except InvalidOperation:
            return None
    else:
        text = normalize_text(value)
        if not text or not any(ch.isdigit() for ch in text) or text[0] in "-−":
            return None
        text = _APOSTROPHE.sub("", text.translate(_ASCII))
        if _PLAIN_NUMBER.match(text) and not (
            currency in ZERO_DECIMAL_CURRENCIES and _THOUSANDS_DOT.match(text)
        ):
            amount = Decimal(text)
        elif currency in THREE_DECIMAL_CURRENCIES or _THREE_DECIMAL_TEXT.search(text):
            amount = _amount(text, ".")
        else:
            amount = _amount(text)
    if amount is None or not amount.is_finite() or amount < 0 or amount > Decimal("1e12"):
        return None
    if currency in ZERO_DECIMAL_CURRENCIES and amount == amount.to_integral_value():
        amount = amount.quantize(Decimal(1))
    return amount


def _amount(text: str, decimal_separator: str | None = None) -> Decimal | None:
    """``price_parser.Price.fromstring(text, decimal_separator=...).amount``: the same
    two steps, without the search of the currency symbol that ``fromstring`` also makes
    (the currency is read apart: :mod:`.currency`), about half of its time."""
    amount_text = extract_price_text(text)
    return parse_number(amount_text, decimal_separator) if amount_text is not None else None
