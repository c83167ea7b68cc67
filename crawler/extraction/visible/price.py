"""The selling price shown right after the heading, outside any grid of cards.

In its price box a sale price (``ins``, ``.special-price``, ``.sale-price``...)
beats list prices (``del``, ``s``, ``.old-price``, ``.was-price``,
``.regular-price``...); prices in blocks of their own (product cards, titled
blocks) are not the page's. Without any price element, money written in the
text right after the heading.
"""

from __future__ import annotations

import re
from decimal import Decimal

from lxml.etree import _Element

from ..normalize.price import parse_price
from ..normalize.text import normalize_text
from .dom import is_inside, visible_text
from .index import PageIndex
from .price_blocks import in_card as _in_card
from .price_blocks import in_titled_block as _in_titled_block
from .price_marks import SALE_CLASS
from .price_paid import discounted, element_tax, not_paid, tax_of, taxed_amount
from .price_parts import NOT_PAID, sale_part
from .price_text import (
    LIST_BEFORE,
    MONEY_TEXT,
    SALE_LABEL,
    paid_amount,
    price_text,
    price_value,
    text_without,
)
from .shipping import is_shipping_cost, labels_shipping

# A second amount right after a price: "<span>$12.97</span> - $24.99", "10 € bis 20 €".
_RANGE_AFTER = re.compile(
    r"\s*(?:-|–|—|to|bis|à|a|до|–)\s*\S{0,4}\s?\d(?![\d.,]*\s?%)", re.I
)  # (not a discount badge: "-25%")
# Where a range's text splits into its two ends.
_RANGE_SPLIT = re.compile(r"\s*(?:-|–|—|\bto\b|\bbis\b|\bà\b|\ba\b|до)\s*(?=\S{0,4}\s?\d)", re.I)
# A label right before a price that makes it a list price ("List Price: $1,299.00").
_LIST_LABEL = re.compile(
    r"(?:list price|was|before|rrp|msrp|srp|uvp|statt|vorher|antes|normal|"
    r"precio (?:normal|de lista|anterior|regular)|prix (?:barré|initial|de référence)|de)"
    r"\s*:?",
    re.I,
)
_HARD_LIST_TAGS = frozenset({"del", "s", "strike"})
_HARD_LIST_CLASS = re.compile(
    r"old-?price|price-?old|\bold\b|was-?price|price-?was|\bwas\b|list-?price|price-?list|"
    r"compare-?at|price--?compare|compare-?price|strike|crossed|price-?before|"
    r"original-?price|price--?original|rrp|msrp|retail-?price|"
    r"precio-?(?:anterior|normal|lista|antes)|streichpreis|alter-?preis|prix-?barr|"
    # more shops' names for the struck price (class: list prices in every language)
    r"prev(?:ious)?[-_]?price|price[-_]?prev|price[-_]?origin|stara[-_]?cena|cena[-_]?przed|"
    r"eski[-_]?fiyat|prezzo[-_]?(?:barrato|pieno)|pre[çc]o[-_]?(?:antigo|de)\b|"
    r"precio[-_]?tachado|price[-_]?del\b",
    re.I,
)
_SOFT_LIST_CLASS = re.compile(r"regular-?price|price--?regular|price-item--regular", re.I)

_MAX_H1_TO_PRICE = 400  # elements of the product's own between its heading and its price
_MAX_LIST_TO_SALE = 12  # elements between a lone list price and the selling price
_MAX_ROW_WORDS = 40  # characters beside the amount in a price row written as text


def _class_tokens(el: _Element) -> str:
    """Class tokens, minus state modifiers such as ``with-list-price`` or ``has-sale``."""
    return " ".join(
        t for t in (el.get("class") or "").split() if not t.startswith(("with-", "has-", "is-"))
    )


def _marks_list(el: _Element) -> bool:
    """The element's tag or class marks a list price (``del``, ``.old-price``)."""
    return el.tag in _HARD_LIST_TAGS or bool(_HARD_LIST_CLASS.search(_class_tokens(el)))


def _is_hard_list(el: _Element, box: _Element) -> bool:
    for a in [el, *el.iterancestors()]:
        if _marks_list(a):
            return True
        if (a.get("data-price-type") or "").lower() == "oldprice":
            return True
        if a is not el and _list_label(a.text):
            return True  # <p>List Price: <span class=price>$1,299.00</span></p>
        previous = a.getprevious()
        if (
            previous is not None
            and not len(previous)
            and _list_label((previous.text or "") + " " + (previous.tail or ""))
        ):
            return True  # <span>Was</span> <span class=price>$10</span>
        if a is box:
            break
    return False


def _list_label(text: str | None) -> bool:
    text = (text or "").strip()
    return bool(text) and len(text) <= 25 and _LIST_LABEL.fullmatch(text) is not None


def _has_class(el: _Element, box: _Element, pattern: re.Pattern[str]) -> bool:
    for a in [el, *el.iterancestors()]:
        if a.tag == "ins" and pattern is SALE_CLASS:
            return True
        if pattern.search(_class_tokens(a)) or (
            pattern is SALE_CLASS and (a.get("data-price-type") or "") == "finalPrice"
        ):
            return True
        if a is box:
            break
    return False


def _price_box(first: _Element) -> _Element:
    """The small block around the first price: climbs while it stays price-sized."""
    box = first
    for _ in range(3):
        parent = box.getparent()
        if parent is None or parent.tag in ("body", "html", "form", "main"):
            break
        if len(visible_text(parent)) > 160 or parent.find(".//h1") is not None:
            break
        box = parent
    return box


def select_price(
    idx: PageIndex, h1: _Element, h1_pos: int
) -> tuple[Decimal | None, str | None, bool]:
    def usable(p: _Element) -> bool:
        # not another product's: asked of the prices near the heading only (a card's
        # test reads the text of the blocks around the price)
        return p not in idx.in_grid and not idx.is_excluded(p) and not _in_card(p, h1)

    # the distance from the heading counts the product's own content only: strips of
    # other products between (sponsored, "also bought") do not push its price away
    near = set(idx.content_after(h1_pos, _MAX_H1_TO_PRICE))
    candidates = [
        p for p in idx.prices if idx.order[p] in near and usable(p) and not _in_titled_block(p, h1)
    ]
    if not candidates:
        # Some themes put the price above the heading, in the same small block.
        parent = h1.getparent()
        before = [
            p
            for p in idx.prices
            if 0 < h1_pos - idx.order[p] <= 30
            and parent is not None
            and is_inside(p, parent)
            and usable(p)
            and not _in_titled_block(p, h1)
        ]
        candidates = before[-1:]
    # not what the shopper pays: a net price beside the gross one, a unit price, an
    # instalment, a deposit (kept only when nothing else is shown)
    candidates = [p for p in candidates if not not_paid(p)] or candidates
    # where a VAT-included price is shown beside a net one, it is paid (:mod:`.price_paid`)
    gross = [p for p in candidates if element_tax(p) == "gross"]
    if gross:
        candidates = gross + [p for p in candidates if p not in gross]
    elif candidates and all(not_paid(p) for p in candidates):
        # only a net price marked up: the VAT-included one written right after it
        written = _written_after(idx, idx.order[candidates[-1]], candidates[-1], gross=True)
        if written is not None:
            return written[0], written[1], True
    # a shipping cost is never the product's price, even when nothing else is shown
    candidates = [p for p in candidates if not is_shipping_cost(p)]
    if candidates:
        box = _price_box(candidates[0])
        in_box = [p for p in candidates if p is box or is_inside(p, box)] or candidates[:1]
        boxes = {p: box for p in in_box}
        if all(_is_hard_list(p, box) for p in in_box):
            rest = text_without(box, in_box)
            match = MONEY_TEXT.search(rest)
            if match and parse_price(match.group(0)) is not None:
                # "<s>2 157,00 €</s> <strong>1 626,00 €</strong>": the unmarked amount
                return parse_price(match.group(0)), match.group(0), True
            # Only a struck list price in the first box ("Normal: <s>$59.990</s>"): the
            # selling price is the next one, in a block of its own right after it.
            last = idx.order[in_box[-1]]
            after = [
                p
                for p in candidates
                if p not in boxes and 0 < idx.order[p] - last <= _MAX_LIST_TO_SALE
            ]
            if after:
                box2 = _price_box(after[0])
                for p in after:
                    if p is box2 or is_inside(p, box2):
                        in_box.append(p)
                        boxes[p] = box2
            else:
                # no price element after the struck one: a short block right after it
                # that writes an amount ("<s>$420</s> ... Special 294 元"; class: plain
                # pages that mark up only the list price)
                written = _written_after(idx, last, box)
                if written is not None:
                    return written[0], written[1], True
        hard = {p for p in in_box if _is_hard_list(p, boxes[p])}
        sale = [p for p in in_box if p not in hard and _has_class(p, boxes[p], SALE_CLASS)]
        regular = [
            p for p in in_box if p not in hard and not _has_class(p, boxes[p], _SOFT_LIST_CLASS)
        ]
        soft = [p for p in in_box if p not in hard]
        for group in (sale, regular, soft):
            texts = [(p, _paid_text(p)) for p in group]
            # a zero amount ("Special price: $0.00") is a template, never a selling price
            parsed = [(p, t, v) for p, t in texts if (v := parse_price(t)) is not None and v > 0]
            if parsed:
                values = {v for _, _, v in parsed}
                el, text, value = parsed[0]
                beyond = _text_after(el)
                if _RANGE_AFTER.match(beyond):
                    # "$12.97 - $24.99": a range, no single price (the text says a price shows)
                    return None, normalize_text(f"{text}{beyond}"), False
                if range_ends(text) is not None:
                    return None, text, False  # the same range written in one element
                shown = price_text(el) if text == el.get("content") else text
                if len(parsed) == 2 and group is regular and not sale:
                    # two unmarked prices in one box: the lower when the page says it is
                    # the other reduced ("£80.00 £60.00 Sale")
                    high, low = max(values), min(values)
                    evidence = visible_text(box) + " " + _text_after(box)[:80]
                    if discounted(high, low, evidence):
                        el, text, value = next(x for x in parsed if x[2] == low)
                        return value, text, True
                if len(parsed) == 1 and el is in_box[-1]:
                    lower = _reduced_after(idx, el, box, candidates, value)
                    if lower is not None:
                        return lower[0], lower[1], True
                return value, shown or el.get("content"), len(values) == 1
        return None, None, False
    if any(map(usable, idx.prices)):
        # the site marks prices up, and none follows the heading (prices marked up only
        # in other products' cards say nothing of how the page marks its own)
        return None, None, False
    # No price element at all: look for money written in the text right after the heading.
    found: list[tuple[int, str, Decimal, bool, str | None]] = []
    for pos in idx.content_after(h1_pos, 60):
        el = idx.elements[pos]
        if el.tag in _HARD_LIST_TAGS or idx.is_excluded(el):
            continue
        own = normalize_text(_own_text(el)) or ""
        match = MONEY_TEXT.search(own)
        taxed = taxed_amount(own) if match else None  # "£10.00 (£12.00 inc VAT)"
        if taxed is not None:
            match = next(m for m in MONEY_TEXT.finditer(own) if m.group(0) == taxed)
        if match and "line-through" in (el.get("style") or ""):
            continue  # a list price struck by its own style
        if match and LIST_BEFORE.search(own[: match.start()]):
            continue  # "MSRP $25", "Was $40" written in a text: a list price
        if match and len(own) - len(match.group(0)) > _MAX_ROW_WORDS:
            continue  # an amount inside a sentence (an article, a description), no price row
        if match and labels_shipping(own[: match.start()]):
            continue  # "Shipping: $5.99", "Free shipping over $50"
        if (
            match
            and not any(a.tag in _HARD_LIST_TAGS for a in el.iterancestors())
            and (not _in_card(el, h1))
        ):
            amount = parse_price(match.group(0))
            if amount is not None:
                if found and pos - found[0][0] > _MAX_LIST_TO_SALE:
                    break
                label, suffix = own[: match.start()], own[match.end() :]
                found.append((
                    pos, match.group(0), amount, bool(SALE_LABEL.match(label)),
                    tax_of(label, suffix),
                ))
                if len(found) == 1 and found[0][3]:
                    break
    if found:
        # "$64.95 … Now $52.00": the amount labelled as the current one wins; "100,00 €
        # netto" then "119,00 € brutto": the VAT-included one
        paid = [f for f in found if f[4] != "net"] or found
        _, text, amount, _, _ = next(
            (f for f in paid if f[4] == "gross"), next((f for f in paid if f[3]), paid[0])
        )
        return amount, text, True
    return None, None, False


def _text_after(el: _Element) -> str:
    """The text right after a price element: its tail, and the next element's text
    when the tail is only a dash or a word of a range ("<span>$42.00</span> &ndash;
    <span>$45.00</span>": WooCommerce's variable products)."""
    tail = el.tail or ""
    following = el.getnext()
    if following is None or len(tail) > 12 or any(ch.isdigit() for ch in tail):
        return tail
    return tail + visible_text(following)[:40]


def _own_text(el: _Element) -> str:
    """The text an element writes itself, and an amount written right after a label
    child of its ("<p><strong>Precios:</strong> $3.340</p>": plain pages that bold
    the label of a details row and write the value after it)."""
    parts = [el.text or ""]
    for child in el:
        label = (child.text or "").strip()
        if child.tail and len(child) == 0 and 0 < len(label) <= 30 and label[-1] in ":：":
            parts.append(f"{label} {child.tail}")
    return " ".join(parts) if len(parts) > 1 else parts[0]


def _paid_text(price: _Element) -> str:
    """The amount a price element shows that the shopper pays: its machine copy
    (``itemprop=price content``), the part of it :func:`.price_parts.sale_part` picks,
    else its text (with a "Was X Now Y" read by :func:`.price_text.paid_amount`)."""
    part = None
    if len(price) and not price.get("content"):
        part = sale_part(price)
        if part is None:
            part = _unstruck_text(price)
    if part is not None:
        return part
    value = price_value(price)
    return taxed_amount(value) or paid_amount(value)  # "Net €10.00 Gross €12.30"


def _unstruck_text(price: _Element) -> str | None:
    """The price element's text without the list prices inside it, when a child marked
    as one by its tag or class writes an amount and an amount is left outside it
    (``<div class=price><span class=old>$59.99</span> $49.99</div>``: a list price in a
    child whose class is no price class, the selling price the box's own text; class:
    themes that mark only the struck price)."""
    listed = [
        c
        for c in price.iterdescendants()
        if isinstance(c.tag, str) and _marks_list(c) and MONEY_TEXT.search(visible_text(c))
    ]
    if not listed:
        return None
    rest = text_without(price, listed)
    return paid_amount(rest) if MONEY_TEXT.search(rest) else None


def _written_after(
    idx: PageIndex, last: int, box: _Element, gross: bool = False
) -> tuple[Decimal, str] | None:
    """The first amount written in a short block (≤ 60 characters) among the elements
    right after a struck list price, outside its box."""
    for el in idx.elements[last + 1 : last + 1 + _MAX_LIST_TO_SALE]:
        if el is box or is_inside(el, box) or idx.is_excluded(el):
            continue
        if el.tag in _HARD_LIST_TAGS or any(a.tag in _HARD_LIST_TAGS for a in el.iterancestors()):
            continue
        text = text_without(el, [])
        if not text or len(text) > 60:
            continue
        match = MONEY_TEXT.search(text)
        if gross and match and tax_of(text[: match.start()], text[match.end() :]) != "gross":
            continue  # (after a net price: the amount marked VAT-included only)
        if match and not LIST_BEFORE.search(text[: match.start()]) and not NOT_PAID.search(text):
            amount = parse_price(match.group(0))
            if amount is not None and amount > 0:
                return amount, match.group(0)
    return None


def range_ends(text: str | None) -> tuple[Decimal, Decimal] | None:
    """(low, high) of a price range as the page shows it ("$12.97 - $24.99",
    "From $119.00 to $249.00"), else None."""
    parts = _RANGE_SPLIT.split(text or "", maxsplit=1)
    if len(parts) != 2:
        return None
    low, high = parse_price(parts[0]), parse_price(parts[1])
    if low is None or high is None or not 0 < low < high:
        return None
    return low, high


def _reduced_after(
    idx: PageIndex, el: _Element, box: _Element, candidates: list[_Element], value: Decimal
) -> tuple[Decimal, str] | None:
    """The lower price right after the one read (the next candidate within a few
    elements, outside its box) when the page says it is the first one reduced
    (:func:`.price_paid.discounted`: "£80.00 £60.00 Save £20.00")."""
    start = idx.order[el]
    after = [
        p for p in candidates
        if 0 < idx.order[p] - start <= 8 and p is not box and not is_inside(p, box)
    ]
    if not after:
        return None
    text = price_text(after[0])
    low = parse_price(text)
    if low is None or not 0 < low < value:
        return None
    # the evidence: the two boxes and the short blocks right after the second
    evidence = f"{visible_text(box)} {visible_text(after[0])}"
    for sibling in list(after[0].itersiblings())[:3]:
        if isinstance(sibling.tag, str):
            evidence += " " + visible_text(sibling)[:80]
    return (low, text) if discounted(value, low, evidence) else None
