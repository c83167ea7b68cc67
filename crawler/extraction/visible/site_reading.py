"""The visible page read with its site's evidence (:mod:`crawler.extraction.evidence`):
the stock statements a page makes, the visible twins of its structured values, and
the fields read where the site shows them."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from lxml.etree import _Element

from ..evidence import SiteEvidence, statement_text
from ..normalize.availability import availability_from_text
from ..normalize.price import parse_price
from .availability import stock_elements
from .dom import visible_text
from .index import PageIndex
from .price_text import MONEY_TEXT
from .sitepaths import element_at, element_path

#: Elements after the heading whose own short texts are stock statements (as the
#: stock reader's window, :func:`.availability.read_availability`).
_WINDOW = 200


def template_test(site: SiteEvidence) -> Callable[[_Element, str], bool] | None:
    """A test of (element, its text): a statement of the site's template; None when the
    site has none (the readers then test nothing)."""
    template = site.template()
    if not template:
        return None

    def is_template(el: _Element, text: str) -> bool:
        paths = template.get(statement_text(text))
        return paths is not None and element_path(el) in paths

    return is_template


def stock_statements(idx: PageIndex, h1_pos: int) -> list[tuple[str, str, str]]:
    """(path, text, state) of every stock statement the stock reader may read: the
    stock elements, and the short own texts after the heading that name a state, outside
    other products' cards and the site's header, footer and navs."""
    found: list[tuple[_Element, str]] = [(el, visible_text(el)) for el in stock_elements(idx)]
    if h1_pos >= 0:
        for pos in idx.content_after(h1_pos, _WINDOW):
            el = idx.elements[pos]
            text = el.text
            if text and not text.isspace() and len(text) <= 60:
                found.append((el, text))
    out = []
    for el, text in found:
        state = availability_from_text(text) if len(text) <= 120 else None
        if state is not None:
            out.append((element_path(el), statement_text(text), state))
    return out


def twins(idx: PageIndex, price: Decimal | None, stock: str | None) -> list[tuple[str, str]]:
    """(field, path) of the first visible element (outside other products' cards and
    the site's header, footer and navs) that shows the structured price, and of the
    first that states the structured stock state."""
    out: list[tuple[str, str]] = []
    want_price, want_stock = price is not None, stock is not None
    for el, carded in zip(idx.elements, _excluded(idx), strict=True):
        if carded or not (want_price or want_stock):
            if not (want_price or want_stock):
                break
            continue
        text = el.text
        if not text or text.isspace() or len(text) > 60:
            continue
        if want_price and (match := MONEY_TEXT.search(text)):
            if parse_price(match.group(0)) == price:
                out.append(("price", element_path(el)))
                want_price = False
                continue
        if want_stock and availability_from_text(text) == stock:
            out.append(("availability", element_path(el)))
            want_stock = False
    return out


def _excluded(idx: PageIndex) -> list[bool]:
    return [idx.section[p] or idx.in_card(p) for p in range(len(idx.elements))]


def read_at(root: _Element, idx: PageIndex, path: str, field: str) -> tuple[object, str] | None:
    """(value, text) of ``field`` shown by the element at ``path`` (a price, a stock
    state), or None when the page has no such element or it shows none."""
    el = element_at(root, path)
    if el is None or el not in idx.order or idx.is_excluded(el):
        return None
    text = visible_text(el)
    if field == "price":
        match = MONEY_TEXT.search(text)
        amount = parse_price(match.group(0)) if match else None
        return (amount, match.group(0)) if match and amount is not None and amount > 0 else None
    state = availability_from_text(text) if len(text) <= 120 else None
    return (state, text) if state is not None else None
