"""The quote of one quote page: its evidence gathered (:mod:`.evidence`), then decided.

For each field the most trusted source with a value wins; within it, the value
nearest the page's heading. The price is strict: when two different prices are
equally trusted and equally near the heading the page gives no quote
(``conflicting_prices``); three or more at one rank are a listing's (an overview
of instruments), and that source is passed over.

The currency comes from the data (``currency`` fields, ``priceCurrency``, a
"Currency" label), else from the price as shown (``€``, ``USD``; a bare ``$`` is
the exchange's dollar, else the US dollar), else from a currency code beside the
price, else from the exchange (``NASDAQ`` -> USD) or the symbol's suffix
(``SAP.DE`` -> EUR), else from the page's language and country (``de-CH`` -> CHF),
else from the site profile. ``as_of`` from the data, a time label (``As of``,
``Stand``, ``Mis à jour``), a ``<time datetime>`` beside the price, else the fetch
time (provenance ``fetch``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from parsel import Selector

from crawler.extraction.normalize.currency import (
    DOLLAR_CURRENCIES,
    ISO_CURRENCIES,
    currency_from_text,
)
from crawler.extraction.weigh import COUNTRY_CURRENCIES, LANGUAGE_CURRENCIES

from .evidence import AMOUNTS, Candidate, Evidence, add_change_after, add_heading, add_visible
from .header import CONFLICT, add_portal_header, agree, header_price, more_precise
from .markets import Market, exchange_in_text, market_of_exchange, market_of_symbol
from .numbers import infer_style, style_for_language
from .pairs import PageTree, chosen_date, label_pairs, named_elements, symbol_attributes, words_text
from .result import QuoteExtraction
from .structured import meta_fields, page_quotes, pick_quote, product_markup
from .times import from_epoch, parse_as_of, zone_named

_COUNTRY_ZONES = {
    "DE": "Europe/Berlin", "AT": "Europe/Vienna", "CH": "Europe/Zurich", "FR": "Europe/Paris",
    "BE": "Europe/Brussels", "NL": "Europe/Amsterdam", "ES": "Europe/Madrid",
    "IT": "Europe/Rome", "PT": "Europe/Lisbon", "GB": "Europe/London", "IE": "Europe/Dublin",
    "SE": "Europe/Stockholm", "NO": "Europe/Oslo", "DK": "Europe/Copenhagen",
    "FI": "Europe/Helsinki", "PL": "Europe/Warsaw", "JP": "Asia/Tokyo", "KR": "Asia/Seoul",
    "HK": "Asia/Hong_Kong", "SG": "Asia/Singapore", "IN": "Asia/Kolkata", "CN": "Asia/Shanghai",
    "US": "America/New_York", "BR": "America/Sao_Paulo",
    # languages of one country (a page that names no country): Japanese, Korean, Hindi
    "ja": "Asia/Tokyo", "ko": "Asia/Seoul", "hi": "Asia/Kolkata",
}
_LANG = re.compile(r"^([a-z]{2,3})(?:[-_]([a-z]{2}))?", re.I)
_TIME = re.compile(r"\d{1,2}[:h]\d{2}")
_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}|\d{4}|[A-Za-z]{3}")
_ISO_NEAR = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")


def page_language(root: Any) -> str | None:
    lang = root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang")
    if lang:
        return str(lang).strip() or None
    for meta in root.iter("meta"):
        kind = (meta.get("property") or meta.get("http-equiv") or "").lower()
        if kind in ("og:locale", "content-language") and meta.get("content"):
            return str(meta.get("content")).strip()
    return None


def _country(language: str | None) -> tuple[str, str]:
    match = _LANG.match(language or "")
    if not match:
        return "", ""
    return match.group(1).lower(), (match.group(2) or "").upper()


def pick(evidence: Evidence, field: str, strict: bool = False,
         candidates: list[Candidate] | None = None) -> Candidate | str | None:
    """The field's value (see the module's doc); ``CONFLICT`` when ``strict`` and two values
    disagree at the winning rank. Amounts that agree once rounded are one value, the more
    precise one."""
    if candidates is None:
        candidates = evidence.of(field)

    def distinct(group: list[Candidate]) -> int:
        if field in AMOUNTS:
            best = more_precise(group[0], group)
            if all(agree(c.value, best.value) for c in group):
                group[:] = [best]
                return 1
        return len({str(c.value).upper() if field == "symbol" else c.value for c in group})

    for rank in sorted({c.rank for c in candidates}):
        group = [c for c in candidates if c.rank == rank]
        own = [c for c in group if not c.listed]
        if not own and distinct(group) > 1:
            continue  # an overview's values (a table of instruments): not the page's
        group = own or group
        nearest = max(c.closeness for c in group)
        group = sorted((c for c in group if c.closeness == nearest), key=lambda c: c.order)
        values = distinct(group)
        if values == 1 or not strict:
            return group[0]
        if values >= 3 or field != "price":
            continue  # several instruments' values at this rank (or symbols that disagree)
        return CONFLICT
    return None


def _add_structured(evidence: Evidence, root: Any, named: list[str]) -> None:
    picked = pick_quote(page_quotes(root), named)
    if picked is not None:
        fields, source = picked
        for field, value in fields.items():
            evidence.add(field, value, source)
    for field, value in meta_fields(root).items():
        evidence.add(field, value, "meta")


def _add_profile(evidence: Evidence, selector: Selector, profile: Any) -> None:
    for field, query in profile.quote_fields.items():
        values = [v for v in (" ".join(t.split()) for t in query.getall(selector)) if v]
        if values:
            evidence.add(field, values[0], "profile")


def _market(exchange: str | None, symbol: str) -> tuple[Market | None, str]:
    market = market_of_exchange(exchange)
    if market is not None:
        return market, "exchange"
    return market_of_symbol(symbol), "exchange"


def _currency(
    evidence: Evidence, price: Candidate, market: Market | None, profile: Any
) -> tuple[str | None, str, bool]:
    """The currency, its source, and whether the prices are in pence (GBX) to divide."""
    given = pick(evidence, "currency")
    if isinstance(given, Candidate):
        return given.value, given.source, False
    text = price.text or ""
    if price.hint and price.hint not in ISO_CURRENCIES:
        text = f"{price.hint} {text}"  # a sign the label or the column names: "NAV (₹)"
    if re.search(r"GBX|GBp|(?<=\d)p\b", text):
        return "GBP", price.source, True
    _, country = _country(evidence.language)
    hint = market.currency if market else COUNTRY_CURRENCIES.get(country)
    code = currency_from_text(text, hint) if text else None
    if code is None and "$" in text:
        code = hint if hint in DOLLAR_CURRENCIES else "USD"
    if code is not None:
        return code, price.source, False
    if price.hint in ISO_CURRENCIES:
        return price.hint, "label", False
    element = price.element
    for _ in range(3):
        element = element.getparent() if element is not None else None
        if element is None:
            break
        near = words_text(element)
        if len(near) >= 400:
            continue
        codes = {c for c in _ISO_NEAR.findall(near) if c in ISO_CURRENCIES}
        if len(codes) == 1:
            return codes.pop(), "visible", False
    if market is not None:
        return market.currency, "exchange", False
    language, country = _country(evidence.language)
    by_language = COUNTRY_CURRENCIES.get(country) or LANGUAGE_CURRENCIES.get(language)
    if by_language:
        return by_language, "language", False
    if profile is not None and profile.currency:
        return profile.currency, "profile", False
    return None, "", False


def _as_of(
    evidence: Evidence, price: Candidate, fetched: dt.datetime, market: Market | None
) -> tuple[dt.datetime, str]:
    zone = zone_named(market.zone) if market else None
    if zone is None:
        language, country = _country(evidence.language)
        zone = zone_named(_COUNTRY_ZONES.get(country) or _COUNTRY_ZONES.get(language, ""))
    candidates = sorted(evidence.of("as_of"), key=lambda c: (c.rank, -c.closeness, c.order))
    labelled = sorted((c for c in candidates if c.source == "label"), key=lambda c: c.order)
    apart = not any(_TIME.search(str(c.value)) and _DATE.search(str(c.value)) for c in labelled)
    if len(labelled) > 1 and apart and not any(c.rank < labelled[0].rank for c in candidates):
        # "Fecha: 10/03/2025 · Hora: 17:35:00": a date and a time under two labels
        joined = " ".join(str(c.value) for c in labelled[:3])
        when = parse_as_of(joined, fetched, evidence.language, zone)
        if when is not None:
            return when, "label"
    for candidate in candidates:
        value = candidate.value
        when = from_epoch(value) if not isinstance(value, str) else (
            parse_as_of(value, fetched, evidence.language, zone)
        )
        if when is None and isinstance(value, str) and value.strip().isdigit():
            when = from_epoch(int(value.strip()))
        if when is not None:
            return when, candidate.source
    if price.element is not None:
        box = price.element
        for _ in range(3):
            box = box.getparent() if box.getparent() is not None else box
        for element in box.iter("time"):
            when = parse_as_of(element.get("datetime") or words_text(element), fetched,
                               evidence.language, zone)
            if when is not None:
                return when, "visible"
    return fetched, "fetch"


def _price(evidence: Evidence, taken: set[Any], portal: Any) -> Candidate | str | None:
    """The price: the page's data (a profile, structured data, meta tags) first; else the
    price beside the name and the symbol (:func:`.header.header_price`); else the most
    trusted label or element; else a fund's net asset value; else a close. The same value
    shown more precisely elsewhere is taken in its precise form."""
    prices = evidence.of("price")
    price = pick(evidence, "price", True, [c for c in prices if c.rank <= 2])
    if price is None:
        price = header_price(evidence, taken, portal)
    if price is None:
        price = pick(evidence, "price", True, [c for c in prices if c.rank > 2])
    if price is None:
        price = pick(evidence, "nav", strict=True)  # a fund's
    if price is None:
        price = pick(evidence, "close", strict=True)
    if isinstance(price, Candidate) and price.rank > 2:
        price = more_precise(price, [c for c in prices if c.rank > 2])
    return price


def decide(
    evidence: Evidence, root: Any, url: str, fetched: dt.datetime, profile: Any,
    taken: set[Any] | None = None, portal: Any = None,
) -> dict[str, Any] | str:
    """The page's quote, or the reason it has none (a key of ``REJECTED_REASONS``)."""
    if product_markup(root) and not (profile is not None and profile.is_quote is not None):
        return "product_page"  # a page that says it is a product is none (unless a profile says)
    symbol = pick(evidence, "symbol", strict=True)
    if isinstance(symbol, Candidate):
        evidence.keep_symbol(str(symbol.value))  # widgets of other instruments' quotes
    price = _price(evidence, taken or set(), portal)
    if price is None and symbol is None:
        return "no_quote"
    if price == CONFLICT:
        return "conflicting_prices"
    if not isinstance(price, Candidate):
        return "no_price"
    if not isinstance(symbol, Candidate):
        return "no_symbol"
    if price.element is not None and not evidence.of("change"):
        add_change_after(evidence, price.element)
    quote: dict[str, Any] = {"url": url, "symbol": str(symbol.value)}
    provenance: dict[str, str] = {"symbol": symbol.source}
    for field in ("name", "exchange", "change", "change_percent", "previous_close", "open",
                  "day_low", "day_high", "volume", "market_cap"):
        found = pick(evidence, field)
        if isinstance(found, Candidate):
            quote[field], provenance[field] = found.value, found.source
    if quote.get("exchange") is None:
        top = [evidence.tree.heading, *evidence.tree.after_heading(6)]
        header = " ".join(words_text(e) for e in top if e is not None)[:600]
        exchange = exchange_in_text(header)
        if exchange:
            quote["exchange"], provenance["exchange"] = exchange, "visible"
    quote["price"], provenance["price"] = price.value, price.source
    market, _ = _market(quote.get("exchange"), quote["symbol"])
    currency, source, pence = _currency(evidence, price, market, profile)
    if currency is not None:
        quote["currency"], provenance["currency"] = currency, source
    if pence:
        for field in ("price", "change", "previous_close", "open", "day_low", "day_high"):
            if quote.get(field) is not None:
                quote[field] = quote[field] / 100
    low, high = quote.get("day_low"), quote.get("day_high")
    if low is not None and high is not None and low > high:
        for field in ("day_low", "day_high"):
            del quote[field], provenance[field]
    when, source = _as_of(evidence, price, fetched, market)
    quote["as_of"] = when.isoformat(timespec="seconds")
    provenance["as_of"] = source
    quote["provenance"] = provenance
    return quote


def extract_quote_page(
    selector: Selector, url: str, fetched: dt.datetime, profile: Any = None
) -> QuoteExtraction:
    """The quote of an HTML page (``selector``: its parsed tree), or why it has none."""
    result = QuoteExtraction()
    root = selector.root
    if profile is not None and profile.is_quote is not None and not profile.is_quote.getall(
        selector
    ):
        return result.reject("not_a_quote_page")
    language = page_language(root)
    tree = PageTree(root)
    style = style_for_language(language)
    if style is None:
        style = infer_style(" ".join(words_text(e) for e in tree.after_heading(80))[:20000])
    evidence = Evidence(tree, style, language)
    named: list[str] = []
    taken: set[Any] = set()
    portal: list[Any] = []

    def heading() -> None:
        named.extend(add_heading(evidence, url))
        portal.append(add_portal_header(evidence))
        for symbol, element in symbol_attributes(tree):
            evidence.add("symbol", symbol, "attribute", element)

    def shown() -> None:
        found = label_pairs(tree) + named_elements(tree)
        evidence.add_found(found)
        taken.update(item.element for item in found)
        # a fund's NAV date chosen in a list of dates (a page naming a symbol)
        chosen = chosen_date(root) if evidence.of("symbol") else None
        if chosen is not None:
            around = set(chosen[1].iterancestors())  # "NAV as on" and every date of the list
            evidence.candidates = [c for c in evidence.candidates
                                   if c.field != "as_of" or c.element not in around]
            if not evidence.of("as_of"):
                evidence.add("as_of", chosen[0], "label", chosen[1])

    steps = [("heading", heading), ("structured", lambda: _add_structured(evidence, root, named)),
             ("labels", shown)]
    if profile is not None and profile.quote_fields:
        steps.insert(0, ("profile", lambda: _add_profile(evidence, selector, profile)))
    for name, step in steps:
        try:
            step()
        except Exception as exc:  # one source's failure costs its own fields only
            result.errors.append((f"quotes/{name}", f"{type(exc).__name__}: {exc}"))
    try:
        add_visible(evidence, taken)  # the least trusted: it decides only where none else did
    except Exception as exc:
        result.errors.append(("quotes/visible", f"{type(exc).__name__}: {exc}"))
    if len(result.errors) == len(steps):
        return result.reject("failed")
    decided = decide(evidence, root, url, fetched, profile, taken, portal[0] if portal else None)
    if isinstance(decided, str):
        return result.reject(decided)
    result.quotes.append(decided)
    return result


__all__ = ["AMOUNTS", "extract_quote_page", "page_language"]
