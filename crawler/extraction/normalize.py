"""Normalisation of every product field, in one place.

Each function takes a raw value as found on a page (structured data or visible
text) and returns the field in its contract form, or ``None`` when the value is
unusable:

* :func:`parse_price` -- ``Decimal`` with a dot, thousands separators removed.
* :func:`parse_currency` / :func:`currency_from_text` -- ISO 4217 code.
* :func:`normalize_availability` / :func:`availability_from_text` -- one of
  :data:`AVAILABILITY_VALUES`.
* :func:`normalize_gtin` -- digits only, 8, 12, 13 or 14 of them.
* :func:`normalize_text` / :func:`normalize_html_text` -- whitespace collapsed.
* :func:`absolute_url` / :func:`normalize_images` -- absolute http(s) URLs.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urljoin, urlsplit

from price_parser import Price
from w3lib.html import replace_entities
from w3lib.url import safe_url_string

AVAILABILITY_VALUES = (
    "InStock",
    "OutOfStock",
    "PreOrder",
    "BackOrder",
    "Discontinued",
    "LimitedAvailability",
)

# --------------------------------------------------------------------------- text

_WS = re.compile(r"\s+")
_BLOCK_TAG = re.compile(
    r"(?i)</?(?:p|br|li|ul|ol|div|h[1-6]|table|tr|td|th|section|article|dl|dt|dd|hr|"
    r"blockquote|pre)\b[^<>]*?/?>"
)
_INLINE_TAG = re.compile(
    r"(?i)</?(?:b|strong|i|em|u|span|a|img|small|sup|sub|font|mark|code|s|del|ins|abbr)"
    r"\b[^<>]*?/?>|<!--.*?-->"
)


def normalize_text(value: Any) -> str | None:
    """Collapse runs of whitespace (including non-breaking spaces) and strip."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value if v is not None)
    text = _WS.sub(" ", str(value).replace("\xa0", " ")).strip()
    return text or None


def normalize_html_text(value: Any) -> str | None:
    """Like :func:`normalize_text`, for values that may hold markup or entities
    (JSON-LD descriptions often carry the HTML of the description tab)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value if v is not None)
    text = str(value)
    if "<" in text:
        # only real HTML tags: "Quarry <Pro>" is a name, not markup
        text = _BLOCK_TAG.sub(" ", text)
        text = _INLINE_TAG.sub("", text)
    if "&" in text:
        text = replace_entities(text)
    return normalize_text(text)


# -------------------------------------------------------------------------- price

# Currencies whose prices are written without minor units: "24.990" is 24990.
ZERO_DECIMAL_CURRENCIES = frozenset(
    {"CLP", "JPY", "KRW", "ISK", "VND", "PYG", "UGX", "XAF", "XOF", "IDR", "COP", "HUF"}
)

_PLAIN_NUMBER = re.compile(r"^[+]?\d+(?:\.\d+)?$")
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
        if _PLAIN_NUMBER.match(text) and not (
            currency in ZERO_DECIMAL_CURRENCIES and _THOUSANDS_DOT.match(text)
        ):
            amount = Decimal(text)
        else:
            amount = Price.fromstring(text).amount
    if amount is None or not amount.is_finite() or amount < 0 or amount > Decimal("1e12"):
        return None
    if currency in ZERO_DECIMAL_CURRENCIES and amount == amount.to_integral_value():
        amount = amount.quantize(Decimal(1))
    return amount


# ----------------------------------------------------------------------- currency

ISO_CURRENCIES = frozenset(
    """AED ARS AUD BDT BGN BHD BOB BRL BYN CAD CHF CLP CNY COP CRC CZK DKK DOP DZD EGP
    EUR GBP GEL GHS GTQ HKD HNL HRK HUF IDR ILS INR IQD ISK JMD JOD JPY KES KRW KWD KZT
    LBP LKR MAD MDL MXN MYR NGN NIO NOK NPR NZD OMR PAB PEN PHP PKR PLN PYG QAR RON RSD
    RUB SAR SEK SGD THB TND TRY TTD TWD UAH UGX USD UYU UZS VES VND XAF XOF ZAR""".split()
)

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
]
_SYMBOL_RE = re.compile("|".join(re.escape(s) for s, _ in _SYMBOLS))
_SYMBOL_MAP = dict(_SYMBOLS)
_ISO_RE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
_KRONA = re.compile(r"(?i)(?<![a-z])kr\.?(?![a-z])")

# Country-code top-level domains whose "$" (or "kr", "¥") is not the default one.
TLD_CURRENCIES = {
    "ca": "CAD", "au": "AUD", "nz": "NZD", "hk": "HKD", "sg": "SGD", "tw": "TWD",
    "mx": "MXN", "cl": "CLP", "ar": "ARS", "co": "COP", "uy": "UYU", "br": "BRL",
    "se": "SEK", "no": "NOK", "dk": "DKK", "is": "ISK", "cn": "CNY", "jp": "JPY",
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
    if text.upper() in ISO_CURRENCIES:
        return text.upper()
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
    match = _SYMBOL_RE.search(text)
    if match:
        return _SYMBOL_MAP[match.group(0)]
    if "$" in text:
        return hint if hint in DOLLAR_CURRENCIES else None
    if "¥" in text or "￥" in text or "円" in text:
        return "CNY" if hint == "CNY" else "JPY"
    if _KRONA.search(text):
        return hint if hint in {"SEK", "NOK", "DKK", "ISK"} else "SEK"
    return None


# ------------------------------------------------------------------- availability

_AVAILABILITY_TOKENS = {
    "instock": "InStock",
    "available": "InStock",
    "instoreonly": "InStock",
    "onlineonly": "InStock",
    "yes": "InStock",
    "true": "InStock",
    "outofstock": "OutOfStock",
    "soldout": "OutOfStock",
    "unavailable": "OutOfStock",
    "notavailable": "OutOfStock",
    "no": "OutOfStock",
    "false": "OutOfStock",
    "preorder": "PreOrder",
    "presale": "PreOrder",
    "backorder": "BackOrder",
    "backordered": "BackOrder",
    "onbackorder": "BackOrder",
    "discontinued": "Discontinued",
    "limitedavailability": "LimitedAvailability",
    "limitedstock": "LimitedAvailability",
    "lowstock": "LimitedAvailability",
}


def normalize_availability(value: Any) -> str | None:
    """Map a structured availability value to the contract's vocabulary.

    Accepts ``http://schema.org/InStock``, ``https://schema.org/OutOfStock``,
    ``schema:PreOrder``, ``InStock``, ``in_stock``, ``instock``, ``in stock``,
    ``Sold out`` ... Anything unknown gives None.
    """
    if isinstance(value, (list, tuple)):
        for item in value:
            found = normalize_availability(item)
            if found:
                return found
        return None
    if isinstance(value, dict):
        return normalize_availability(value.get("@id") or value.get("name"))
    text = normalize_text(value)
    if not text:
        return None
    token = re.split(r"[/#:]", text)[-1]
    token = re.sub(r"[^a-z]", "", token.lower())
    return _AVAILABILITY_TOKENS.get(token) or availability_from_text(text)


# Ordered: the first matching rule wins, negatives before positives.
_STOCK_RULES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"\b(?:pre-?\s?orders?|pre-?sale|reserve now|pre-?venta|en preventa|reserva(?:r)? ya|"
            r"vorbestell(?:ung|bar|en)|précommande|pré-?venda|pre-?ordine|preordina|"
            r"pré-?encomenda|voorbestel(?:len|ling)?|przedsprzedaż|předobjednávka|"
            r"predobjednávka|prednaročilo|precomandă|eeltellimus|ennakkotilaus|"
            r"förhandsboka|förbeställ|förhandsbeställning)\b",
            re.I,
        ),
        "PreOrder",
    ),
    (
        re.compile(
            r"\b(?:back-?\s?order(?:ed|s)?|on back order|nachbestell(?:ung|t|bar)|"
            r"back in stock soon|available (?:for|on) back-?order|"
            r"(?:we'?ll|we will) ship (?:it |them )?when (?:it'?s|it is|they'?re) "
            r"(?:available|in stock)|"
            r"bajo pedido|por encargo|sobre pedido|sur commande|sob encomenda|"
            r"su ordinazione|in arrivo|nabestelling|na zamówienie|na objednávku|"
            r"po naročilu|la comandă|tellimisel|tilaustuote|beställningsvara)\b",
            re.I,
        ),
        "BackOrder",
    ),
    (
        re.compile(
            r"\b(?:discontinued|no longer (?:available|sold|made)|descontinuado|"
            r"nicht mehr (?:erhältlich|lieferbar|verfügbar)|ausgelaufen|"
            r"plus disponible|fuori produzione|uit (?:het )?assortiment|wycofany|"
            r"ukončen[ýá] prodej|utgått)\b",
            re.I,
        ),
        "Discontinued",
    ),
    (
        re.compile(
            r"\b(?:out[\s-]+of[\s-]+stock|sold[\s-]*out|not (?:in stock|available)|"
            r"currently unavailable|unavailable|no stock|agotado|sin stock|sin existencias|"
            r"no disponible|ausverkauft|vergriffen|nicht vorrätig|"
            r"rupture de stock|épuisé|indisponible|esgotado|indisponível|"
            r"nicht (?:verfügbar|lieferbar|auf lager)|non disponibile|esaurito|"
            r"uitverkocht|niet (?:op voorraad|leverbaar|beschikbaar)|"
            r"niedostępny|brak w magazynie|wyprzedany|"
            r"není skladem|nie je na sklade|vypredané|vyprodáno|"
            r"ni na zalogi|ni na voljo|razprodano|"
            r"stoc epuizat|indisponibil|nu este în stoc|"
            r"otsas|laost otsas|pole saadaval|"
            r"loppu(?:unmyyty)?|ei varastossa|tilapäisesti loppu|"
            r"slut(?:såld)?(?: i lager)?|ej i lager|finns ej i lager|tillfälligt slut|"
            r"\(?0 (?:in stock|available|left)\)?)\b",
            re.I,
        ),
        "OutOfStock",
    ),
    (
        re.compile(
            r"\b(?:only \d+ (?:left|remaining|in stock)|few (?:left|remaining)|"
            r"low (?:in )?stock|limited (?:stock|availability|quantit(?:y|ies))|"
            r"últimas unidades|quedan \d+|nur noch \d+|wenige (?:auf lager|verfügbar))\b",
            re.I,
        ),
        "LimitedAvailability",
    ),
    (
        re.compile(
            r"(?:\bin[\s-]+stock\b|\bavailable now\b|\(\s*\d+\s+available\s*\)|"
            r"^\s*available\s*$|\bships (?:today|in \d)|\ben stock\b|\bdisponible\b|"
            r"\ben existencia\b|\bauf lager\b|\blieferbar\b|\bverfügbar\b|\bvorrätig\b|"
            r"\bem estoque\b|\bdisponível\b|\bdisponibile\b|\bin magazzino\b|"
            r"\bop voorraad\b|\bleverbaar\b|\bdostępny\b|\bw magazynie\b|"
            r"\bna (?:skladě|sklade)\b|\bskladem\b|\bna zalogi\b|\bna voljo\b|"
            r"\bîn stoc\b|\bdisponibil\b|\blaos\b|\bsaadaval\b|\bvarastossa\b|"
            r"\btoimitusvalmis\b|\bi lager\b|\bfinns i lager\b|\bi butik\b)",
            re.I,
        ),
        "InStock",
    ),
]


def availability_from_text(text: str | None) -> str | None:
    """Availability from visible stock wording ("In stock", "Out of stock",
    "Only 3 left" → LimitedAvailability, "(22 available)" → InStock,
    "Pre-order", "Available on backorder"...)."""
    if not text:
        return None
    text = normalize_text(text) or ""
    if len(text) > 200:
        return None
    for pattern, value in _STOCK_RULES:
        if pattern.search(text):
            return value
    return None


def availability_states(text: str | None) -> list[str]:
    """Every state the wording names, in rule order (the first is what
    :func:`availability_from_text` returns). More than one means the wording is
    ambiguous ("Lieferbar auf Nachbestellung": available, on backorder)."""
    if not text:
        return []
    text = normalize_text(text) or ""
    if len(text) > 200:
        return []
    states = []
    for pattern, value in _STOCK_RULES:
        text, found = pattern.subn(" ", text)  # "not in stock" does not also say "in stock"
        if found and value not in states:
            states.append(value)
    return states


# ----------------------------------------------------------------------- gtin/sku

_GTIN_LENGTHS = (8, 12, 13, 14)


def normalize_gtin(value: Any) -> str | None:
    """Digits only, and only GTIN-8, UPC-12, EAN-13 or GTIN-14 lengths."""
    if isinstance(value, (list, tuple)):
        for item in value:
            found = normalize_gtin(item)
            if found:
                return found
        return None
    if value is None or isinstance(value, (dict, bool)):
        return None
    text = str(value).strip()
    if isinstance(value, float) or re.search(r"[A-Za-z]", text.split(":")[-1]):
        return None
    digits = re.sub(r"\D", "", text.split(":")[-1])
    return digits if len(digits) in _GTIN_LENGTHS else None


def normalize_identifier(value: Any) -> str | None:
    """A SKU/MPN-like code: a short single-line string."""
    if isinstance(value, (list, tuple)):
        value = next((v for v in value if v not in (None, "")), None)
    if isinstance(value, bool) or isinstance(value, dict):
        return None
    text = normalize_text(value)
    if not text or len(text) > 100:
        return None
    return text


# --------------------------------------------------------------------------- urls


def absolute_url(value: Any, base_url: str) -> str | None:
    """An absolute http(s) URL, or None (data: URIs, javascript: ...)."""
    text = normalize_text(value)
    if not text:
        return None
    try:
        url = safe_url_string(urljoin(base_url, text))
        if urlsplit(url).scheme not in ("http", "https"):
            return None
    except ValueError:  # malformed (e.g. "http://[broken")
        return None
    return url


def normalize_images(values: Any, base_url: str) -> list[str]:
    """Absolute, de-duplicated image URLs from strings, lists or ImageObjects."""
    found: list[str] = []
    stack = values if isinstance(values, (list, tuple)) else [values]
    for value in stack:
        if isinstance(value, dict):
            value = value.get("contentUrl") or value.get("url") or value.get("@id")
            if isinstance(value, list):
                value = value[0] if value else None
        if not isinstance(value, str):
            continue
        url = absolute_url(value, base_url)
        if url and url not in found:
            found.append(url)
    return found
