"""Everything one quote page says about its quote, as candidates of known trust.

Each source adds :class:`Candidate` values, typed by :mod:`.values`, with the
source's rank (lower is trusted more):

=====  ==================  ===============================================================
rank   source              what
=====  ==================  ===============================================================
0      ``profile``         the site profile's selectors (``quote.fields``)
1      ``structured``,     the page's own quote object in JSON-LD or in embedded state
       ``embedded``        (:mod:`.structured`)
2      ``meta``            ``<meta>`` tags (``tickerSymbol``, ``price``, ``priceCurrency``)
3      ``label``           a label of the vocabulary and its value (:func:`.pairs.label_pairs`)
4      ``attribute``       an element named for the field (:func:`.pairs.named_elements`)
5      ``title``           the heading or the title: ``Apple Inc. (AAPL)``, ``NASDAQ: AAPL``
6      ``url``             the address: ``/quote/AAPL``, ``?symbol=AAPL``
7      ``visible``         the first amount after the heading, the signed numbers after it
=====  ==================  ===============================================================

Within a rank the value nearest the page's heading wins (:meth:`.pairs.PageTree.closeness`):
the page's own quote, not a related instrument's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from .markets import market_of_exchange
from .numbers import NumberStyle, find_numbers, has_scale
from .pairs import Found, PageTree, words_text
from .values import (
    is_value_text,
    to_amount,
    to_count,
    to_currency,
    to_percent,
    to_range,
    to_symbol,
    to_text,
)
from .vocabulary import field_of_label, label_prefix, tokens

_DIGIT = re.compile(r"\d")
RANKS = {"profile": 0, "structured": 1, "embedded": 1, "meta": 2, "label": 3, "attribute": 4,
         "title": 5, "url": 6, "visible": 7}
AMOUNTS = ("price", "close", "previous_close", "open", "day_low", "day_high", "market_cap")
_TICKER = r"[A-Z0-9^][A-Z0-9.\-^=]{0,14}"
_PAREN_SYMBOL = re.compile(
    r"[(（]\s*(?:([A-Za-z][\w .]{0,20}?)\s?:\s?)?(" + _TICKER + r")\s*[)）]"
)
_EXCHANGE_PREFIX = re.compile(r"(?<![\w])([A-Z][A-Za-z]{1,15})\s?:\s?(" + _TICKER + r")(?![\w])")
_URL_SYMBOL = re.compile(r"^[A-Za-z0-9^][A-Za-z0-9.\-^=]{0,14}$")
_URL_KEYS = ("symbol", "s", "ticker", "sym", "code", "instrument", "q")
_GENERIC_SEGMENTS = frozenset(
    "quote quotes stock stocks symbol symbols ticker market markets index html htm php aspx "
    "equity equities shares share aktie aktien cours action actions fund etf chart overview "
    "summary profile kurs kurse cotizacion cotizaciones acciones azioni quotazioni valores "
    "valor ficha".split()
)


@dataclass
class Candidate:
    field: str
    value: Any
    source: str
    closeness: int = 0
    order: int = 0
    element: Any = None
    text: str | None = None  # the text the value was read from (a currency sign's place)
    hint: str | None = None  # a currency code the label named
    listed: bool = False  # in a table or list of several rows: an overview's, not the page's
    aside: bool = False  # in a table, a range marker, a snapshot block, above the heading

    @property
    def rank(self) -> int:
        return RANKS[self.source]



class Evidence:
    """The candidates of one page, typed with its number style and language."""

    def __init__(self, tree: PageTree, style: NumberStyle | None, language: str | None) -> None:
        self.tree = tree
        self.style = style
        self.language = language
        self.candidates: list[Candidate] = []

    def add(self, field: str, raw: Any, source: str, element: Any = None,
            hint: str | None = None, before_label: bool = False,
            scale: int | None = None) -> None:
        """Type ``raw`` for ``field`` and keep it when it is a value (a pseudo-field, a day's
        range or a change with its percent, gives the fields it holds)."""
        closeness = self.tree.closeness(element)
        order = self.tree.order.get(element, 0)
        text = raw if isinstance(raw, str) else None
        listed = element is not None and in_listing(self.tree, element)
        aside = before_label or (
            element is not None and source != "title" and is_aside(self.tree, element)
        )

        def keep(name: str, value: Any) -> None:
            if value is not None and scale and isinstance(raw, str) and not has_scale(raw):
                value = value * 10**scale if isinstance(value, int) else value.scaleb(scale)
            if value is not None:
                self.candidates.append(Candidate(name, value, source, closeness, order, element,
                                                 text, hint, listed, aside))

        style, language = self.style, self.language
        if field in AMOUNTS or field == "nav":
            keep(field, to_amount(raw, style, language))
        elif field == "change":
            keep("change", to_amount(raw, style, language, signed=True))
            if isinstance(raw, str) and "%" in raw:
                keep("change_percent", to_percent(raw, style, language))
        elif field == "change_percent":
            keep(field, to_percent(raw, style, language))
        elif field == "volume":
            keep(field, to_count(raw, style, language))
        elif field == "day_range":
            bounds = to_range(raw, style, language)
            if bounds is not None:
                keep("day_low", bounds[0])
                keep("day_high", bounds[1])
        elif field == "symbol":
            symbol, exchange = to_symbol(raw)
            keep("symbol", symbol)
            keep("exchange", exchange)
        elif field in ("name", "exchange"):
            keep(field, to_text(raw, 120))
        elif field == "currency":
            keep(field, to_currency(raw))
        elif field == "as_of":
            keep(field, raw if isinstance(raw, int | float | str) else None)

    def add_found(self, found: list[Found]) -> None:
        for item in found:
            self.add(item.field, item.text, item.source, item.element, item.hint,
                     item.before_label, item.scale)

    def keep_symbol(self, symbol: str) -> None:
        """Drop the values of elements that say they are another symbol's (``data-symbol``,
        ``data-ticker`` on them or around them): a live-quote widget of another instrument."""
        wanted = symbol.upper()
        kept = []
        for candidate in self.candidates:
            named = _named_symbol(candidate.element)
            if named is None or named.upper() == wanted or candidate.field == "symbol":
                kept.append(candidate)
        self.candidates = kept

    def of(self, field: str) -> list[Candidate]:
        return [c for c in self.candidates if c.field == field]


def _named_symbol(element: Any, depth: int = 3) -> str | None:
    if element is None:
        return None
    for level, node in enumerate((element, *element.iterancestors())):
        if level > depth:
            return None
        named = node.get("data-symbol") or node.get("data-ticker")
        if named:
            return str(named).strip()
    return None


def heading_symbols(text: str) -> list[tuple[str, str | None]]:
    """Symbols a heading or title names: ``Apple Inc. (AAPL)``, ``(XETRA:SAP)``,
    ``NASDAQ: AAPL``; with the exchange when it is written with it."""
    found: list[tuple[str, str | None]] = []
    for match in _PAREN_SYMBOL.finditer(text):
        symbol = match.group(2)
        if any(ch.isalpha() for ch in symbol) or len(symbol) >= 4:
            found.append((symbol, match.group(1)))
    for match in _EXCHANGE_PREFIX.finditer(text):
        found.append((match.group(2), match.group(1)))
    return found


def url_symbols(url: str) -> list[str]:
    """Symbols an address may name: a query's ``symbol=``, ``s=``... or its last path
    segments (``/quote/AAPL``, ``/aktie/SAP.html``), ticker-shaped ones only."""
    parts = urlsplit(url)
    found = [
        value.strip()
        for key, value in parse_qsl(parts.query)
        if key.lower() in _URL_KEYS and _URL_SYMBOL.match(value.strip())
    ]
    segments = [unquote(s) for s in parts.path.split("/") if s]
    for segment in reversed(segments[-2:]):
        stem = re.sub(r"\.(?:html?|php|aspx?|jsp)$", "", segment, flags=re.I)
        # "AAPL:NASDAQ", "NASDAQ:AAPL": the part that is not an exchange
        pieces = [p for p in stem.split(":") if p and market_of_exchange(p) is None]
        stem = pieces[0] if len(pieces) == 1 else stem
        if _URL_SYMBOL.match(stem) and stem.lower() not in _GENERIC_SEGMENTS:
            found.append(stem)
    return found


def add_heading(evidence: Evidence, url: str) -> list[str]:
    """Symbol, exchange and name from the heading and the title; symbols the address names
    that the page shows too. Returns every symbol the page names (for
    :func:`.structured.pick_quote`)."""
    tree = evidence.tree
    named: list[str] = []
    title = next((e for e in tree.root.iter("title")), None)
    texts = [(tree.words(tree.heading), tree.heading)] if tree.heading is not None else []
    if title is not None:
        texts.append((words_text(title), None))
    for text, element in texts:
        for symbol, exchange in heading_symbols(text):
            evidence.add("symbol", symbol, "title", element)
            if exchange:
                evidence.add("exchange", exchange, "title", element)
            named.append(symbol)
    if tree.heading is not None:
        name = tree.words(tree.heading)
        name = _PAREN_SYMBOL.sub(" ", name)
        name = _EXCHANGE_PREFIX.sub(" ", name)
        name = " ".join(name.replace("|", " ").split()).strip(" -–—:·")
        if name and name.upper() not in {symbol.upper() for symbol in named}:
            evidence.add("name", name, "title", tree.heading)
    shown = " ".join(text for text, _ in texts)
    for symbol in url_symbols(url):
        # a ticker-shaped part of the address, written as a ticker there or on the page
        if symbol.isupper() or re.search(rf"(?<![\w]){re.escape(symbol.upper())}(?![\w])", shown):
            evidence.add("symbol", symbol.upper() if not symbol.isdigit() else symbol, "url")
            named.append(symbol)
    return named


def add_visible(evidence: Evidence, taken: set[Any], limit: int = 40) -> None:
    """The first amount after the heading: a price shown without a label or a name."""
    for element in evidence.tree.after_heading(limit):
        if element in taken or in_listing(evidence.tree, element):
            continue
        text = evidence.tree.inline(element)
        if not text or len(text) > 32 or len(element) > 3:
            continue
        numbers = find_numbers(text, evidence.style, evidence.language)
        plain = [n for n in numbers if not n.percent and not n.signed]
        if len(numbers) != 1 or len(plain) != 1 or not is_value_text(text, numbers):
            continue
        if _labelled(evidence, element):
            return  # a value under a label the vocabulary does not know ("상한가", "売気配")
        evidence.add("price", text, "visible", element)
        return


def _labelled(evidence: Evidence, element: Any) -> bool:
    """Is ``element`` a value under a label (one the vocabulary may not know): a ``<dd>``
    after its ``<dt>``, a cell after a label cell, or the value of one of several alike
    items that each pair a text with a number (``<li><span>상한가</span><b>53,500</b></li>``)?"""
    tree = evidence.tree
    previous = element.getprevious()
    while previous is not None and not isinstance(previous.tag, str):
        previous = previous.getprevious()
    parent = element.getparent()
    if previous is not None:
        if previous is tree.heading:
            return False
        before = (tree.words(previous) + " " + (previous.tail or "")).strip()
    else:
        before = ((parent.text or "") if parent is not None else "").strip()
    if not before or len(before) > 40:
        return False
    numbers = find_numbers(before, evidence.style, evidence.language)
    if numbers and is_value_text(before, numbers):
        return False  # a number before it, not a label
    label_cell = previous is not None and previous.tag == element.tag == "td"
    if previous is not None and (previous.tag in ("dt", "th") or label_cell):
        return True
    grand = parent.getparent() if parent is not None else None
    if grand is None:
        return False
    alike = [c for c in grand if isinstance(c.tag, str) and c.tag == parent.tag
             and c.get("class") == parent.get("class") and _DIGIT.search(tree.inline(c))]
    return len(alike) >= 2


def add_change_after(evidence: Evidence, price_element: Any, limit: int = 8) -> None:
    """A change shown right after the price without a label: the first of the next
    elements whose text is a signed number or a percent (``-12,34 € (-0,99 %)``)."""
    tree = evidence.tree
    start = tree.order.get(price_element)
    if start is None:
        return
    for after in tree.elements[start + 1 : start + 1 + limit]:
        text = tree.inline(after)
        if not text or len(text) > 40 or in_listing(tree, after):
            continue
        found = find_numbers(text, evidence.style, evidence.language)
        signed = bool(found) and (found[0].signed or found[0].percent)
        if signed and is_value_text(text, found):
            evidence.add("change", text, "visible", after)
            if any(n.percent for n in found):
                evidence.add("change_percent", text, "visible", after)
            return


_ASIDE_NAMES = frozenset(
    "range ranges marker slider bar gauge spanne fourchette rango faixa ticker tickers "
    "marquee strip".split()
)


def is_aside(tree: PageTree, element: Any) -> bool:
    """Not the page's main quote block: above the heading (a ticker strip of indices, the
    navigation), in a table's cell, or in a range marker (an element, or one of its three
    parents, named ``range``, ``marker``, ``slider``...)."""
    heading = tree.heading
    if heading is not None and tree.order.get(element, 0) < tree.order[heading]:
        return element not in set(heading.iterancestors())
    for level, node in enumerate((element, *element.iterancestors())):
        if level > 3 or node.tag in ("body", "main", "article", "html"):
            break
        if node.tag in ("td", "th"):
            return True
        names = tuple(v for v in (node.get("class"), node.get("id")) if v)
        if names and _ASIDE_NAMES.intersection(tokens(names)):
            return True
    return False


def in_listing(tree: PageTree, element: Any) -> bool:
    """:func:`_in_listing`, once per element."""
    found = tree.listed.get(element)
    if found is None:
        found = tree.listed[element] = _in_listing(tree, element)
    return found


def _in_listing(tree: PageTree, element: Any, depth: int = 5) -> bool:
    """Inside a row of an overview: a table of several rows, or one of three or more
    siblings of the same tag and class (list items, ``<div class="row">`` cards), each
    with a number in it (a list of instruments and their prices, not a list of labels)."""
    for level, node in enumerate((element, *element.iterancestors())):
        if level > depth or node.tag in ("body", "main", "article", "html"):
            return False
        if node.tag == "tr":
            table = node.getparent()
            siblings = list(table) if table is not None else []
            rows = [c for c in siblings if isinstance(c.tag, str) and c.tag == "tr"]
            if len(rows) >= 3 and not _label_rows(rows):
                return True
            continue
        parent = node.getparent()
        if parent is None:
            return False
        alike = [
            c for c in parent
            if isinstance(c.tag, str) and c.tag == node.tag and c.get("class") == node.get("class")
            and _DIGIT.search(tree.inline(c)) is not None
        ]
        if len(alike) >= 3 and not _label_rows(alike):
            return True
    return False


def _label_rows(rows: list[Any]) -> bool:
    """Rows that begin with labels of the vocabulary: a quote's data, not an overview."""
    labelled = 0
    for row in rows[:8]:
        first = next((c for c in row.iter() if c is not row and (c.text or "").strip()), None)
        words = (first.text if first is not None else row.text) or ""
        if field_of_label(words.strip())[0] is not None or label_prefix(words.strip())[0]:
            labelled += 1
    return labelled * 2 > min(len(rows), 8)
