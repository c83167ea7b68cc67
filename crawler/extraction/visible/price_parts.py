"""The part of a price element a shopper pays, when the element writes several
amounts each in a child of its own (``<div class=price><span class=old>$80.00</span>
<span class=new>$60.00</span></div>``).

Class: price boxes whose list and sale prices are plain children of the one element
marked as the price, told apart by the children's own class words (``old``,
``regular``, ``compare``... against ``new``, ``sale``, ``final``...), by a strike-through
(tag or inline style), or only by the figures the box also shows: a saving ("Save
$20.00", "-$20.00") or a discount ("-25%") that is the difference between the two.
Without any such evidence nothing is decided here (the element's text is read as
before: its first amount).
"""

from __future__ import annotations

import re
from decimal import Decimal

from lxml.etree import _Element

from ..normalize.price import parse_price
from .dom import SKIPPED_TAGS, is_hidden, visible_text
from .price_text import MONEY_TEXT

# Wording beside an amount that makes it something other than the price paid
# (classes: B2B shops showing net and gross prices; groceries' unit prices; instalment
# and deposit offers), in the languages of the stock and buy words. Only ever asked
# whether it is found: the words, each after a word boundary, open with a letter of
# _NOT_PAID_STARTS, tested once at each boundary (a tenth of the time of forty
# alternatives tried at every position: tests/unit/test_extraction_phrase_starts.py).
_NOT_PAID_STARTS = "abcdehijmnoprszбз"
_NOT_PAID_WORDS = (
    r"\b(?=[" + _NOT_PAID_STARTS + r"])(?:"
    r"excl\.?(?:uding|usive)?\s*(?:of\s*)?(?:vat|tax|taxes|gst|mwst|btw|iva|tva|moms)\b|"
    r"ex\.?\s*(?:vat|gst|tax|moms)\b|plus (?:vat|tax)\b|"
    r"zzgl\.?|netto\b|net price\b|prix ht\b|ht\b|hors tax|sin iva\b|"
    r"bez (?:dph|vat|pdv)\b|sans tva\b|ohne mwst|bez nds\b|без ндс\b|"
    r"per (?:kg|g|100 ?g|l|litre|liter|100 ?ml|ml|m|m2|m²|unit|piece|each|item)\b|"
    r"je (?:kg|liter|100 ?g|stück)\b|za (?:1 )?(?:kg|l|szt)\b|за (?:1 )?(?:кг|л|шт)\b|"
    r"payments? of\b|per month\b|monthly\b|a month\b|mtl\.|"
    r"monatlich\b|cuotas?\b|parcelas?\b|mensualit|par mois\b|instal+ments?\b|"
    r"raty\b|rate da\b|en \d+ fois\b|deposit\b|anzahlung\b|acompte\b|down payment\b)"
)
NOT_PAID = re.compile(
    r"\+\s*(?:vat|mwst|btw|iva|tva)\b|"
    r"/\s*(?:kg|100 ?g|l|100 ?ml|m²|m2|m|st|stk|szt|шт|ud)\b|/\s*mo(?:nth)?\b|" + _NOT_PAID_WORDS,
    re.I,
)
# A part's class words (whole words of its class and id) that make it the list price...
_LIST_WORDS = re.compile(
    r"(?:^|[\s_-])(?:old|was|before|regular|original|compare|compared|list|strike|striked|"
    r"strikethrough|crossed|rrp|msrp|retail|initial|prev|previous|uvp|alt|antes|anterior)"
    r"(?:$|[\s_-])",
    re.I,
)
# ... or the sale price
_SALE_WORDS = re.compile(
    r"(?:^|[\s_-])(?:new|now|sale|special|final|current|offer|promo|actual|reduced|"
    r"discounted|selling|neu|nuevo|oferta|promocion|promotion)(?:$|[\s_-])",
    re.I,
)
# A saving: its class words, or its text ("Save $20.00", "You save", "-$20.00").
_SAVING_WORDS = re.compile(r"(?:^|[\s_-])(?:save|saving|savings|you-?save)(?:$|[\s_-])", re.I)
_SAVING_TEXT = re.compile(
    r"^\W*(?:save|you save|saving|sparen|sie sparen|ersparnis|économisez|ahorra|ahorras|"
    r"ahorro|risparmi|risparmio|oszczędzasz|economize|economia|bespaar|besparing|"
    r"экономия|tasarruf|節省|节省|割引|할인)\b|^\s*[-−–]\s*\D{0,4}\d",
    re.I,
)
_PERCENT = re.compile(r"(\d{1,2})(?:[.,]\d+)?\s?%")
_STRUCK_TAGS = frozenset({"del", "s", "strike"})


def sale_part(el: _Element) -> str | None:
    """The text of the part of ``el`` the shopper pays, when ``el`` writes two or more
    amounts in children of its own and the evidence in the module doc picks one;
    else None."""
    parts = _parts(el)
    if len(parts) < 2:
        return None
    saving = [p for p in parts if _is_saving(p, el)]
    struck = [p for p in parts if p not in saving and _is_list(p, el)]
    paid = [p for p in parts if p not in saving and p not in struck]
    marked = [p for p in paid if _has_words(p, el, _SALE_WORDS)]
    if marked:
        return visible_text(marked[0])
    if len(paid) == 1 and (struck or saving):
        return visible_text(paid[0])
    if len(paid) == 2:
        return _by_difference(el, paid, saving)
    return None


def _parts(el: _Element, depth: int = 0) -> list[_Element]:
    """The innermost shown children (down to three levels) that write one amount each;
    empty when ``el`` also writes an amount outside them, or a part is not paid."""
    found: list[_Element] = []
    for child in el:
        if not isinstance(child.tag, str) or child.tag in SKIPPED_TAGS or is_hidden(child):
            continue
        count = len(MONEY_TEXT.findall(visible_text(child)))
        if count == 1:
            found.append(child)
        elif count > 1:
            if depth >= 2:
                return []
            inner = _parts(child, depth + 1)
            if not inner:
                return []
            found.extend(inner)
    if depth == 0 and any(NOT_PAID.search(visible_text(p)) for p in found):
        return []  # a net or unit price beside the gross one: the reader of NOT_PAID's
    return found


def _above(part: _Element, el: _Element) -> list[_Element]:
    """``part`` and its ancestors below ``el``."""
    out = [part]
    for a in part.iterancestors():
        if a is el:
            break
        out.append(a)
    return out


def _has_words(part: _Element, el: _Element, words: re.Pattern[str]) -> bool:
    return any(
        words.search(f"{a.get('class') or ''} {a.get('id') or ''}") for a in _above(part, el)
    )


def _is_list(part: _Element, el: _Element) -> bool:
    for a in _above(part, el):
        if a.tag in _STRUCK_TAGS or "line-through" in (a.get("style") or ""):
            return True
    return _has_words(part, el, _LIST_WORDS)


def _is_saving(part: _Element, el: _Element) -> bool:
    return bool(_SAVING_TEXT.search(visible_text(part))) or _has_words(part, el, _SAVING_WORDS)


def _amount(part: _Element) -> Decimal | None:
    match = MONEY_TEXT.search(visible_text(part))
    return parse_price(match.group(0)) if match else None


def _by_difference(el: _Element, paid: list[_Element], saving: list[_Element]) -> str | None:
    """The lower of two amounts when the box's saving is their difference, or its
    discount percentage (in the box or a short badge right after it) takes the higher
    to the lower (to a cent's rounding)."""
    first, second = (_amount(p) for p in paid)
    if first is None or second is None or first == second:
        return None
    high, low = max(first, second), min(first, second)
    lower = visible_text(paid[0] if first == low else paid[1])
    for part in saving:
        amount = _amount(part)
        if amount is not None and abs(amount - (high - low)) <= Decimal("0.01"):
            return lower
    # the box's own figures, and a short badge right after it ("<div>-25%</div>")
    following = el.getnext()
    badge = visible_text(following) if following is not None else ""
    evidence = visible_text(el) + (" " + badge if len(badge) <= 20 else "")
    for match in _PERCENT.finditer(evidence):
        percent = Decimal(match.group(1))
        if 0 < percent < 100 and abs(high * (100 - percent) / 100 - low) <= high / 100:
            return lower
    return None
