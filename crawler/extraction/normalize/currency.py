"""Currencies: ISO 4217 codes from codes, symbols and country-code domains."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from .text import normalize_text

ISO_CURRENCIES = frozenset(
    """AED ARS AUD BDT BGN BHD BOB BRL BYN CAD CHF CLP CNY COP CRC CZK DKK DOP DZD EGP
    EUR GBP GEL GHS GTQ HKD HNL HRK HUF IDR ILS INR IQD ISK JMD JOD JPY KES KRW KWD KZT
    LBP LKR MAD MDL MXN MYR NGN NIO NOK NPR NZD OMR PAB PEN PHP PKR PLN PYG QAR RON RSD
    RUB SAR SEK SGD THB TND TRY TTD TWD UAH UGX USD UYU UZS VES VND XAF XOF ZAR""".split()
)

# Codes shops still write for a current ISO 4217 code: withdrawn codes (the rouble's
# "RUR", which Russian shop feeds and markup keep using; "BYR", "YTL", "TRL") and
# common abbreviations ("RMB" for the yuan, "NIS" for the shekel).
CURRENCY_ALIASES = {
    "RUR": "RUB", "BYR": "BYN", "YTL": "TRY", "TRL": "TRY", "RMB": "CNY", "NIS": "ILS",
}

DOLLAR_CURRENCIES = frozenset(
    {"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN", "CLP", "ARS", "COP", "UYU",
     "JMD", "TTD", "BRL"}
)

# Symbols that name one currency, longest first so "R$" wins over "$".
_SYMBOLS: list[tuple[str, str]] = [
    ("US$", "USD"), ("CA$", "CAD"), ("C$", "CAD"), ("AU$", "AUD"), ("A$", "AUD"),
    ("NZ$", "NZD"), ("HK$", "HKD"), ("S$", "SGD"), ("NT$", "TWD"), ("MX$", "MXN"),
    ("R$", "BRL"), ("CLP$", "CLP"), ("€", "EUR"), ("£", "GBP"), ("₹", "INR"),
    ("₩", "KRW"), ("₽", "RUB"), ("₺", "TRY"), ("₪", "ILS"), ("₫", "VND"), ("₴", "UAH"),
    ("₱", "PHP"), ("฿", "THB"), ("zł", "PLN"), ("Kč", "CZK"), ("Ft", "HUF"), ("lei", "RON"),
    ("руб", "RUB"), ("лв", "BGN"),
    # non-Latin symbols of more currencies (class: shops in those countries)
    ("₸", "KZT"), ("тг", "KZT"), ("원", "KRW"), ("円", "JPY"), ("ر.س", "SAR"), ("د.إ", "AED"),
    ("грн", "UAH"), ("б.р", "BYN"),
    # abbreviations written before the amount (class: shops of South and Southeast
    # Asia, Romania): "Rs. 1,299", "RM 49.90", "Rp 49.000", "Lei 49"
    ("Rs.", "INR"), ("Rs", "INR"), ("₨", "INR"), ("RM", "MYR"), ("Rp", "IDR"), ("Lei", "RON"),
    ("৳", "BDT"),
    # the symbols and abbreviations of more countries' shops, written beside the amount
    # ("1.299,90 TL", "1.299.000 đ", "S/ 49.90", "RD$ 1,200", "49,90 kn", "1.200 din",
    # "ج.م 499")
    ("RD$", "DOP"), ("S/.", "PEN"), ("S/", "PEN"), ("TL", "TRY"), ("đ", "VND"), ("₡", "CRC"),
    ("₲", "PYG"), ("₦", "NGN"), ("₵", "GHS"), ("KSh", "KES"), ("kn", "HRK"), ("din", "RSD"),
    ("₾", "GEL"), ("SFr.", "CHF"), ("ج.م", "EGP"), ("د.ك", "KWD"), ("ر.ق", "QAR"),
    ("د.ب", "BHD"), ("ر.ع", "OMR"), ("د.ا", "JOD"), ("د.م", "MAD"), ("ل.ل", "LBP"),
]


def _symbol_pattern(symbol: str) -> str:
    """A symbol as a search pattern: one that begins or ends with a letter is a word of
    its own ("lei" is no currency inside "Kleider", nor "RM" inside "RMA")."""
    pattern = re.escape(symbol)
    if symbol[0].isalpha():
        pattern = r"(?<![^\W\d_])" + pattern
    if symbol[-1].isalpha():
        pattern += r"(?![^\W\d_])"
    return pattern


_SYMBOL_RE = re.compile("|".join(_symbol_pattern(s) for s, _ in _SYMBOLS))
_SYMBOL_MAP = dict(_SYMBOLS)
# The rupee's "Rs" names the hinted rupee where the domain names one (Pakistan, Sri
# Lanka, Nepal), else the Indian rupee.
_RUPEES = frozenset({"INR", "PKR", "LKR", "NPR"})
_ISO_RE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
_KRONA = re.compile(r"(?i)(?<![a-z])kr\.?(?![a-z])")

# Country-code top-level domains whose "$" (or "kr", "¥") is not the default one.
TLD_CURRENCIES = {
    "ca": "CAD", "au": "AUD", "nz": "NZD", "hk": "HKD", "sg": "SGD", "tw": "TWD",
    "mx": "MXN", "cl": "CLP", "ar": "ARS", "co": "COP", "uy": "UYU", "br": "BRL",
    "se": "SEK", "no": "NOK", "dk": "DKK", "is": "ISK", "cn": "CNY", "jp": "JPY",
    "pk": "PKR", "lk": "LKR", "np": "NPR",
}


def currency_hint_for_url(url: str) -> str | None:
    """The currency a country-code domain suggests (``tienda.cl`` → CLP), or None."""
    host = (urlsplit(url).hostname or "").lower()
    return TLD_CURRENCIES.get(host.rsplit(".", 1)[-1])


def parse_currency(value: Any) -> str | None:
    """An ISO 4217 code from a structured-data value (``"usd"``, ``"EUR"``, ``"€"``)."""
    text = normalize_text(value)
    if not text:
        return None
    upper = text.upper()
    if upper in ISO_CURRENCIES:
        return upper
    if upper in CURRENCY_ALIASES:
        return CURRENCY_ALIASES[upper]
    return currency_from_text(text)


def currency_from_text(text: str | None, hint: str | None = None) -> str | None:
    """The currency a visible price names, by ISO code or symbol.

    ``$`` alone is ambiguous (USD, CAD, AUD, MXN, CLP, ARS...): it means ``hint``
    when the hint is a dollar (or peso/real) currency, else None: no guess.
    ``kr`` resolves to the hint among SEK, NOK, DKK and ISK (else SEK); ``¥`` to CNY
    when hinted, else JPY.
    """
    if not text:
        return None
    for code in _ISO_RE.findall(text):
        if code in ISO_CURRENCIES:
            return code
        if code in CURRENCY_ALIASES:
            return CURRENCY_ALIASES[code]
    match = _SYMBOL_RE.search(text)
    if match:
        code = _SYMBOL_MAP[match.group(0)]
        return hint if code == "INR" and hint in _RUPEES else code
    if "$" in text:
        return hint if hint in DOLLAR_CURRENCIES else None
    if "¥" in text or "￥" in text or "円" in text:
        return "CNY" if hint == "CNY" else "JPY"
    if _KRONA.search(text):
        return hint if hint in {"SEK", "NOK", "DKK", "ISK"} else "SEK"
    return None


# An amount of money: "US$11.99", "€ 12", "EUR 12", "12,50 €" (a price shown where a
# code was expected); three letters are a currency only when they are an ISO 4217
# code ("LMP77", "TRX2000" are codes).
_AMOUNT = re.compile(
    rf"^(?:[A-Z]{{0,3}}[$€£¥₹₩₽₺₪]|(?:{'|'.join(sorted(ISO_CURRENCIES))})\s?)\s?\d[\d.,]*$"
    r"|^\d[\d.,]*\s?[$€£¥₹₩₽]$"
)


def is_amount(token: str) -> bool:
    """The token is an amount of money, not a code."""
    return _AMOUNT.match(token) is not None
