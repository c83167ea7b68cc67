"""The page's main quote block: the price a person reads beside the name and the symbol.

Two classes of pages:

* a header line ``Name (EXCHANGE: SYMBOL) price change %change`` (older portals, in
  one element or in a block around the heading): :func:`add_portal_header` reads the
  symbol, the exchange, the name, the price and the change from it;
* a heading (``h1``) with the price right after it: :func:`header_price` walks the
  elements after the heading and takes the first amount there when it is a price
  (named, labelled as the current price, or shown bare), passing over changes and
  times. It wins over the page's other prices of the same kind of source and of lower
  trust: a day's range marker, a snapshot block, a table, a ticker strip above the
  heading. A second, different price beside it is a real tie (``CONFLICT``); a
  labelled value of another field (a previous close, an open) ends the header.

:func:`agree` tells the same value shown twice with different rounding (``187.4`` and
``187.44``, ``2,891`` and ``2,890.5``); :func:`more_precise` takes the precise one.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .evidence import _PAREN_SYMBOL, Candidate, Evidence
from .markets import market_of_exchange
from .numbers import find_numbers
from .pairs import MAX_LABEL, MAX_VALUE, words_text
from .values import is_value_text
from .vocabulary import field_of_label, label_prefix

CONFLICT = "conflict"
_HEADER_TAGS = ("h1", "h2", "h3", "div", "header", "p", "span", "section")
_NOT_HEADER_FIELDS = ("symbol", "name", "exchange", "currency", "as_of")


def agree(first: Any, second: Any) -> bool:
    """The same value written twice, one of them rounded: the difference is at most half a
    unit of the last decimal place of the less precise one."""
    if not isinstance(first, Decimal) or not isinstance(second, Decimal):
        return bool(first == second)
    places = min(_places(first), _places(second))
    return abs(first - second) <= Decimal(5).scaleb(-places - 1)


def _places(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def more_precise(chosen: Candidate, others: list[Candidate]) -> Candidate:
    """``chosen``, or another candidate of the same value written with more decimals."""
    best = chosen
    for other in others:
        if (other.element is not None and other is not chosen and not other.listed
                and isinstance(other.value, Decimal) and isinstance(best.value, Decimal)
                and _places(other.value) > _places(best.value) and agree(other.value, best.value)):
            best = other
    return best


def add_portal_header(evidence: Evidence) -> Any:
    """Symbol, exchange, name, price and change of a ``Name (EXCHANGE: SYMBOL) price change
    %change`` header; returns its element, or None."""
    tree = evidence.tree
    found = None
    if tree.heading is not None:  # the heading, the block around it, and what follows it
        ancestors = list(tree.heading.iterancestors())[:2]
        near = [*reversed(ancestors), tree.heading, *tree.after_heading(40)]
    else:
        near = tree.elements[:4000]
    for element in near:
        if element.tag not in _HEADER_TAGS or len(element) > 8 \
                or tree.size.get(element, 0) > MAX_LABEL + 2 * MAX_VALUE:
            continue
        text = tree.words(element)
        match = _PAREN_SYMBOL.search(text)
        if match is None or not match.group(1) or match.start() == 0:
            continue
        exchange = match.group(1).strip()
        if not exchange.isupper() and market_of_exchange(exchange) is None:
            continue  # "(Model: X100)": not an exchange and a symbol
        rest = text[match.end():].strip()
        numbers = find_numbers(rest, evidence.style, evidence.language)
        if not numbers or numbers[0].signed or numbers[0].percent or len(numbers) > 3:
            continue
        if not is_value_text(rest, numbers):
            continue
        found = (element, text[: match.start()].strip(" -–—:·|"), match, rest, numbers)
        break  # document order: the outermost first, its innermost match is the same text
    if found is None:
        return None
    element, name, match, rest, numbers = found
    evidence.add("symbol", match.group(2), "title", element)
    evidence.add("exchange", match.group(1).strip(), "title", element)
    if name and tree.heading is None:
        evidence.add("name", name, "title", element)
    evidence.add("price", rest[numbers[0].start : numbers[0].end], "title", element)
    for number in numbers[1:]:
        part = rest[number.start : number.end]
        evidence.add("change_percent" if number.percent else "change", part, "title", element)
    return element


def header_price(
    evidence: Evidence, taken: set[Any], portal: Any = None, limit: int = 24
) -> Candidate | str | None:
    """The price beside the name and the symbol (see the module's doc), ``CONFLICT``, or
    None when the header shows none."""
    prices = [c for c in evidence.of("price") if c.rank >= 3 and not c.listed]
    if portal is not None:
        own = [c for c in prices if c.element is portal and c.source == "title"]
        if own:
            return own[0]
    tree = evidence.tree
    heading = tree.heading
    if heading is None:
        return None
    by_element: dict[Any, Candidate] = {}
    for candidate in sorted(prices, key=lambda c: c.rank):
        if candidate.element is not None and not candidate.aside:
            by_element.setdefault(candidate.element, candidate)
    inside = set(heading.iterdescendants())
    found: Candidate | None = None
    for element in tree.after_heading(limit):
        if element in inside:
            continue
        text = tree.inline(element)
        if not text or not any(ch.isdigit() for ch in text):
            continue
        beside = by_element.get(element)
        if beside is not None:
            if found is None:
                found = beside
            elif not agree(found.value, beside.value):
                return CONFLICT  # two prices beside the name: which is the quote's is unknown
            continue
        if any(any(ch.isdigit() for ch in tree.inline(child)) for child in element
               if isinstance(child.tag, str)):
            continue  # a block: its parts come next
        numbers = find_numbers(text, evidence.style, evidence.language)
        if not numbers or len(text) > MAX_VALUE:
            continue
        field = field_of_label(words_text(element))[0] or label_prefix(text)[0]
        if field in _NOT_HEADER_FIELDS:
            continue  # a time, a symbol, a currency: still the header
        if numbers[0].signed or numbers[0].percent:
            continue  # the change
        if element in taken or field is not None:
            break  # a labelled value of another field: the header is over
        if found is None:
            return None  # a bare amount the page does not say is a price
        if is_value_text(text, numbers) and not agree(found.value, numbers[0].value):
            return CONFLICT
        break
    return found
