"""Weighing page signals against each other: the product's name and the page's currency.

* :func:`weigh_name` -- the name read first (structured data, else the heading)
  checked against the heading, ``og:title`` and ``<title>``: a truncated name
  ("...") is completed, a name that is only the brand or a word-prefix of the
  heading gives way to the heading, and the brand is put back in front when the
  page's own titles show it there ("SKECHERS Prima" for "Prima"); a name that is
  the heading and a variant ("Robe - Free size / Blue") or a product-code row
  ("Desk Item # 101095") after it, or the heading's words glued together
  ("HEART CLUBHeart Button"), gives way to the heading as shown.
* :func:`strip_site_name` -- the shop's name after a separator ("Cardigan | MIXXMIX")
  dropped, the shop named by ``og:site_name`` or the host (:func:`site_names`).
* :func:`currency_signals` -- the ISO codes the page itself names, strongest
  first: its language and country (``<html lang="en-US">``, ``og:locale``,
  ``content-language``), currency codes in its data (``"currency": "USD"`` in
  inline scripts and attributes, ``US$``), then the country-code domain (a
  weak hint). A ``$`` price resolves only to a dollar currency among these;
  with no signal it stays unknown, except on an English (or unlabelled) page of
  a generic domain (``.com``, ``.us``...), where it is read as USD (source
  ``url``; the weakest rule, see docs/extraction.md).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from lxml import etree
from scrapy.http import TextResponse

from .first_tags import tags_in_order
from .normalize.currency import DOLLAR_CURRENCIES, ISO_CURRENCIES, TLD_CURRENCIES
from .normalize.text import normalize_text
from .tree import utf8_body
from .visible.codes import is_code_row

_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*$")
_TITLE_SEPARATORS = re.compile(r"\s+[|–—:-]\s+|\s+\|\s*")

#: Country (ISO 3166 alpha-2) -> currency, for language tags such as ``es-MX``.
COUNTRY_CURRENCIES = {
    "US": "USD",
    "CA": "CAD",
    "AU": "AUD",
    "NZ": "NZD",
    "MX": "MXN",
    "CL": "CLP",
    "AR": "ARS",
    "CO": "COP",
    "UY": "UYU",
    "BR": "BRL",
    "PE": "PEN",
    "GB": "GBP",
    "UK": "GBP",
    "IE": "EUR",
    "DE": "EUR",
    "AT": "EUR",
    "FR": "EUR",
    "ES": "EUR",
    "IT": "EUR",
    "PT": "EUR",
    "NL": "EUR",
    "BE": "EUR",
    "FI": "EUR",
    "EE": "EUR",
    "SK": "EUR",
    "SI": "EUR",
    "LU": "EUR",
    "LV": "EUR",
    "LT": "EUR",
    "GR": "EUR",
    "HR": "EUR",
    "CH": "CHF",
    "PL": "PLN",
    "CZ": "CZK",
    "RO": "RON",
    "SE": "SEK",
    "NO": "NOK",
    "DK": "DKK",
    "HU": "HUF",
    "BG": "BGN",
    "JP": "JPY",
    "CN": "CNY",
    "KR": "KRW",
    "IN": "INR",
    "SG": "SGD",
    "HK": "HKD",
    "TW": "TWD",
    "ZA": "ZAR",
    "TR": "TRY",
}
#: Languages spoken in one currency area only (a bare ``lang="de"`` is not one: CH, AT...).
LANGUAGE_CURRENCIES = {
    "pl": "PLN",
    "cs": "CZK",
    "ro": "RON",
    "sv": "SEK",
    "hu": "HUF",
    "bg": "BGN",
    "et": "EUR",
    "fi": "EUR",
    "sk": "EUR",
    "sl": "EUR",
    "ja": "JPY",
    "ko": "KRW",
    "da": "DKK",
    "nb": "NOK",
    "no": "NOK",
}
#: Generic domains; ``example`` (RFC 2606, reserved for examples) stands for any of them.
_GENERIC_TLDS = frozenset({"com", "net", "org", "us", "biz", "shop", "store", "info", "example"})
_CODE_IN_DATA = re.compile(r"currency[\w-]{0,12}[\"']?\s*[:=]\s*[\"']([A-Z]{3})[\"']", re.I)
# What follows a name in a variant's or a markup's name: " - Free size / Blue", ", Blue".
_VARIANT_SUFFIX = re.compile(r"^(?:\s+[-–—/|]\s+|\s*,\s+|\s*\()\S")
_LANG_TAG = re.compile(r"^([a-z]{2,3})(?:[-_]([a-z]{2}))?", re.I)


def _split(text: str) -> list[str]:
    return text.casefold().split()


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _starts_with_words(longer: str, shorter: str) -> bool:
    a, b = _split(longer), _split(shorter)
    return len(a) > len(b) and a[: len(b)] == b


def _compact(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def site_names(url: str, og_site_name: str | None) -> tuple[str, ...]:
    """The shop's own name, compacted (see :func:`strip_site_name`): ``og:site_name``,
    the host's first label other than ``www`` and the host itself ("buykud", "buykudcom")."""
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
    names = (og_site_name or "", host.split(".")[0] if "." in host else "", host)
    return tuple(c for n in names if len(c := _compact(n)) >= 3)


def strip_site_name(text: str, names: tuple[str, ...]) -> str:
    """``text`` without the shop's name after a separator and whatever follows it
    ("Knit Cardigan | MIXXMIX | Shop Korean fashion" -> "Knit Cardigan"); the first
    part always stays."""
    parts = re.split(r"(\s+[|–—-]\s+|\s+\|\s*)", text)
    for i in range(2, len(parts), 2):
        if _compact(parts[i]) in names:
            return "".join(parts[: i - 1]).strip()
    return text


def weigh_name(
    name: str,
    brand: str | None,
    heading: str | None,
    og_title: str | None,
    title: str | None,
    headings: tuple[str, ...] = (),
) -> tuple[str, str]:
    """(the name to keep, its source: ``visible``/``opengraph`` when changed).

    ``headings``: the texts of every ``<h1>`` when none was the page's one heading."""
    candidates = [
        (text, source)
        for raw, source in (
            (heading, "visible"),
            (og_title, "opengraph"),
            (title, "visible"),
            *((h, "visible") for h in headings),
        )
        if (text := normalize_text(raw))
    ]
    # a truncated name: the first candidate that continues it
    if _ELLIPSIS.search(name):
        stem = _ELLIPSIS.sub("", name)
        for text, source in candidates:
            head = _TITLE_SEPARATORS.split(text)[0]
            if (
                head.casefold().startswith(stem.casefold())
                and len(head) > len(stem)
                and not _ELLIPSIS.search(head)
            ):
                return head, source
    shown = normalize_text(heading) or ""
    # the heading and then words of the markup's own: a variant ("- Free size / Blue")
    # or the product-code row shown beside the heading ("Item # 101095")
    if (
        len(shown.split()) >= 2
        and not (brand and shown.casefold() == brand.casefold())
        and len(name) > len(shown)
        and name.casefold().startswith(shown.casefold())
    ):
        rest = name[len(shown) :]
        if _VARIANT_SUFFIX.match(rest) or (rest[:1].isspace() and is_code_row(rest.strip())):
            return shown, "visible"
    # the heading's words glued together in the markup ("HEART CLUBHeart Button"): as shown
    if shown and shown != name and re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", name):
        return shown, "visible"
    # the brand (or a maker's word) in front of the name in the page's own heading
    for text, source in candidates[:2] + [(h, "visible") for h in headings]:
        if text.casefold().endswith(" " + name.casefold()):
            extra = text[: -len(name)].split()
            # not a site name before a separator ("GagGifts.com: Glow in the Dark ...")
            if 1 <= len(extra) <= 3 and not re.search(r"[:|–—\-]$|\.\w", " ".join(extra)):
                return text, source
    # only the brand, or the first words of the heading (or of the title): the longer one
    short = (brand and name.casefold() == brand.casefold()) or len(_words(name)) <= 2
    for text, source in candidates if short else []:
        head = _TITLE_SEPARATORS.split(text)[0].strip()
        if _starts_with_words(head, name):
            return head, source
    # the heading repeats the name with more words of its own: the heading is what shows
    if heading and (text := normalize_text(heading)) and len(text) <= 200:
        if _words(name) < _words(text) and _starts_with_words(text, " ".join(name.split()[:2])):
            return text, "visible"
    # the brand in front, when the page's own titles put it there
    if brand and not name.casefold().startswith(brand.casefold()):
        full = f"{brand} {name}".casefold()
        for text, source in candidates:
            if text.casefold().startswith(full):
                return text[: len(full)], source
    return name, ""


def _tag_currency(tag: str | None) -> str | None:
    match = _LANG_TAG.match((tag or "").strip())
    if not match:
        return None
    language, country = match.group(1).lower(), (match.group(2) or "").upper()
    if country:
        return COUNTRY_CURRENCIES.get(country)
    return LANGUAGE_CURRENCIES.get(language)


# Compiled once (parsel's ``xpath`` compiles its query on every call).
_HTML_LANG = etree.XPath("/html/@lang", smart_strings=False)
# XPath's translate(@http-equiv, 'CONTENTLAG', 'contentlag'): those letters lowered only
_LOWER_CONTENT_LANGUAGE = str.maketrans("CONTENTLAG", "contentlag")


def _language_metas(root: Any) -> tuple[str | None, str | None]:
    """The ``content`` of the first ``<meta property="og:locale">`` and of the first
    ``<meta http-equiv="content-language">`` that have one, in one pass over the metas
    (the two XPath searches ``//meta[...]/@content`` each walked the whole tree)."""
    locale = language = None
    for meta in root.iter("meta"):
        content = meta.get("content")
        if content is None:
            continue
        if locale is None and meta.get("property") == "og:locale":
            locale = content
        equiv = meta.get("http-equiv")
        if language is None and equiv is not None:
            if equiv.translate(_LOWER_CONTENT_LANGUAGE) == "content-language":
                language = content
    return locale, language


def _first(values: Any) -> str | None:
    """The first of an attribute XPath's values, as parsel's ``.get()`` gives it."""
    return str(values[0]) if values else None


def _codes_in_data(text: str, utf8: bytes | None = None) -> list[str]:
    """``_CODE_IN_DATA.findall(text)``, three times as fast: every match starts with
    "currency" in ASCII letters of either case (no other character matches them
    case-insensitively), so the pattern is tried only where the page's UTF-8 bytes,
    ASCII-lowered (a C-speed copy; a multibyte character's bytes are all >= 0x80, so
    the ASCII text of the bytes is that of ``text``, in the same order), say so. Such a
    word's place in ``text`` is the next place, after the previous word's, of the same
    letters in the same case (a plain search, faster than decoding the bytes between).
    ``utf8``, when given, is ``text`` encoded in UTF-8 already (:func:`.tree.utf8_body`)."""
    cased = utf8 if utf8 is not None else text.encode("utf-8", "surrogatepass")
    raw = cased.lower()
    found: list[str] = []
    end = 0
    char = -1
    at = raw.find(b"currency")
    while at >= 0:
        char = text.find(cased[at : at + 8].decode("ascii"), char + 1)
        if char >= end:  # findall's matches do not overlap
            match = _CODE_IN_DATA.match(text, char)
            if match:
                found.append(match.group(1))
                end = match.end()
        at = raw.find(b"currency", at + 1)
    return found


def currency_signals(response: TextResponse) -> list[tuple[str, str]]:
    """[(ISO code, source)] the page names, strongest first (see the module doc)."""
    out: list[tuple[str, str]] = []
    root = response.selector.root
    og_locale, content_language = _language_metas(root)
    for tag in (og_locale, _first(_HTML_LANG(root)), content_language):
        code = _tag_currency(tag)
        if code:
            out.append((code, "language"))
            break
    text = response.text[:2_000_000]
    found = _codes_in_data(text, utf8_body(response, text))
    codes = Counter(c.upper() for c in found if c.upper() in ISO_CURRENCIES)
    out += [(code, "visible") for code, _ in codes.most_common(2)]
    host = (urlsplit(response.url).hostname or "").lower()
    tld = host.rsplit(".", 1)[-1]
    if tld in TLD_CURRENCIES:
        out.append((TLD_CURRENCIES[tld], "url"))
    elif tld in _GENERIC_TLDS and not out:
        lang = (_first(_HTML_LANG(root)) or "en").strip().lower()
        if not lang or lang.startswith("en"):
            out.append(("USD", "url"))
    return out


def currency_hint(
    hints: list[tuple[str | None, str]], text: str | None, response: TextResponse
) -> tuple[str | None, str]:
    """The strongest currency signal of ``hints`` (the profile's, the markup's...), then
    of the page's own (:func:`currency_signals`, read only when none of ``hints``
    serves: it searches the whole page); for a ``$`` price the strongest dollar one."""
    dollar = bool(text and "$" in text)
    return (
        _strongest(hints, dollar) or _strongest(currency_signals(response), dollar) or (None, "")
    )


def _strongest(
    signals: Iterable[tuple[str | None, str]], dollar: bool
) -> tuple[str, str] | None:
    """The first signal that names a currency (a dollar one, for a ``$`` price)."""
    return next(
        ((code, source) for code, source in signals
         if code and (not dollar or code in DOLLAR_CURRENCIES)),
        None,
    )


def page_title(response: TextResponse) -> str | None:
    """The first text node of a ``<title>`` (XPath ``//title/text()``), normalized:
    lxml's C-level search for the tag, not a whole-tree XPath (nor its look-ahead past
    the head: :mod:`.first_tags`)."""
    for title in tags_in_order(response.selector.root, "title"):
        if title.text is not None:
            return normalize_text(title.text)
        for child in title:  # a text node after a comment
            if child.tail is not None:
                return normalize_text(child.tail)
    return None
