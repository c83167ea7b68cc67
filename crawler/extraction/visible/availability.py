"""Stock as the page shows it: a stock element or stock wording after the
heading, a buy button, and "cannot be bought online" notices."""

from __future__ import annotations

import re
from collections.abc import Callable

from lxml.etree import _Element

from ..normalize.availability import STATE_PATTERNS as _STATE_WORDS
from ..normalize.availability import availability_from_text, availability_states
from ..normalize.text import normalize_text
from .buy import ADD_TO_CART_ATTR, is_buy_control
from .dom import CachedSearch, classes, visible_text
from .index import PageIndex, register_class_test
from .price_blocks import card_block
from .stock_rows import STOCK_LABEL, stock_row
from .stock_scope import about_this_product, states_a_variant

_STOCK_CLASS = CachedSearch(
    re.compile(r"stock|availability|inventory|delivery-(?:information|status)", re.I)
)
register_class_test(_STOCK_CLASS.search)


def stock_elements(idx: PageIndex) -> list[_Element]:
    """The dedicated stock elements (``.stock``, ``.availability``, ``itemprop=
    availability``...), outside other products' cards and rows of tables of several."""
    marked_stock = idx.with_class(_STOCK_CLASS.search)
    found = []
    for pos in idx.positions(idx.by_itemprop.get("availability", []), marked_stock):
        el, cls = idx.elements[pos], idx.classes[pos]
        if el.get("itemprop") == "availability" or _STOCK_CLASS.search(cls):
            if idx.is_excluded(el) or el.tag in ("link", "meta", "input", "body", "html"):
                continue
            if not _in_table_row(el):  # one variant's or seller's row of several: its own
                found.append(el)
    return found


def read_availability(
    idx: PageIndex,
    h1_pos: int,
    name: str | None = None,
    buy_pos: int = -1,
    template: Callable[[_Element, str], bool] | None = None,
) -> tuple[str | None, bool]:
    """(the stock state the page shows for its product, said by a dedicated stock
    element): a stock element, else stock wording in short texts after the heading;
    none of it about a delivery option, another seller or one variant
    (:mod:`.stock_scope`). ``name``: the product's heading; ``buy_pos``: the position
    of the page's enabled buy control (-1: none): loose wording farther than
    :data:`_NEAR_BUY` elements after it is not about this product (a shopper reads the
    enabled button, and the stock wording beside it, as this product's stock).
    ``template``: a test of (element, text) that names the site's template statements
    (:mod:`..evidence`), which are not the product's."""
    # The one precedence of this product's stock (a shopper's reading): its buy control
    # enabled says it can be bought (``InStock``, decided in ..merge._judge_availability
    # when nothing here names a state), unless wording in the buy area (a stock element,
    # short texts after the heading and near the buy control) says that this product is
    # out of stock; wording about a channel, a seller, an image, a variant not chosen or
    # another product's card is not about it (.stock_scope, _in_other_card), and a
    # channel's clause is set aside whole while the buy control sells the product
    # (``sold``). No buy control and wording of unavailability: that state.
    sold = buy_pos >= 0
    # 1. a dedicated stock element
    for el in stock_elements(idx):
        cls = idx.classes[idx.order[el]]
        shown = visible_text(el)
        if template is not None and template(el, shown):
            continue  # the site's template says it on most pages: not this product's
        # "Store pickup: not available" is no stock state
        text = _CONDITIONAL.sub(" ", about_this_product(shown, sold))
        said = availability_states(text) if len(text) <= 120 else []
        if said and states_a_variant(text, name):
            continue  # "Size XL: sold out": one variant's stock
        marked = _stock_class_state(cls)
        if not said:
            if (
                marked
                and not _MESSAGE_BOX.search(cls)
                and (not text.strip() or any(c.isalpha() for c in text))
            ):
                return marked, True
            continue
        found = said[0]
        # Clear only when the wording names one state and the element's own
        # state class (WooCommerce's "available-on-backorder", "out-of-stock")
        # does not contradict it; otherwise structured data decides.
        ambiguous = len(set(said) - {"LimitedAvailability"} or said) > 1 or bool(
            marked and not _compatible(marked, found)
        )
        if marked and not _compatible(marked, found):
            found = marked
        return found, not ambiguous
    # 2. stock wording in short texts after the heading
    if h1_pos >= 0:
        after = idx.content_after(h1_pos, 200)  # other products' strips not counted
        if buy_pos > h1_pos:
            after = [p for p in after if p < buy_pos + _NEAR_BUY]
        for el in (idx.elements[p] for p in after):
            if el.tag in ("button", "input"):
                label = visible_text(el) or el.get("value") or ""
                said_by_button = availability_from_text(label)
                if said_by_button in ("OutOfStock", "PreOrder", "BackOrder", "Discontinued") and (
                    ADD_TO_CART_ATTR.search(classes(el))
                    or _only_stock_words(label)
                    or (el.get("disabled") is not None and not _is_option(el))
                ):
                    # the buy button itself says so: classed as the buy button, its whole
                    # label is the state ("Sold out", "Notify me", "Agotado"), or disabled
                    # and no option of a variant picker (a size button's "M - sold out"
                    # says the stock of one size)
                    return said_by_button, True
            text = el.text
            if not text or text.isspace():
                # no text of its own (the button was read above), or only the spaces
                # between tags: no stock wording, and nothing the searches could match
                continue
            if len(text) > 400:
                continue  # no short text (the normalized one would be over 60 as well)
            # the clauses about something else dropped (only where a state is named: the
            # state wording is remembered per string, the clause patterns are not)
            names_state = availability_from_text(text) is not None
            if names_state:
                own = normalize_text(_CONDITIONAL.sub(" ", about_this_product(text, sold)))
            else:
                own = normalize_text(text)
            if own and len(own) > 60:
                # a stock line that opens a longer text: its first sentence ("Currently
                # unavailable. We don't know when or if this item will be back in
                # stock."; class: buy areas whose unavailability line goes on to explain)
                own = _first_sentence(own)
            if not own or len(own) > 60:
                continue
            if template is not None and template(el, text):
                continue
            if not names_state and STOCK_LABEL.match(own) is None:
                continue  # no stock wording, nor a stock row's label (its table not read)
            in_rows = _in_table_row(el)
            stated = stock_row(el, own, in_rows)
            if stated is not None:
                return stated, True
            if not in_rows and names_state:
                said_nearby = availability_from_text(own)
                if (
                    said_nearby
                    and not _in_option(el)
                    and not states_a_variant(own, name)
                    and not _labelled_option(el, own)
                    and not _in_other_card(el, idx, h1_pos, buy_pos)
                ):
                    # (not one option's stock: "M - sold out" is not the product's; nor
                    # another product's card's: its "Only 1 left")
                    return said_nearby, False
    return None, False


def _in_other_card(el: _Element, idx: PageIndex, h1_pos: int, buy_pos: int) -> bool:
    """``el`` sits in another product's card (a small block linking to another page by
    an image or a name, :func:`.price_blocks.in_card`; class: recommendation cards that
    the page's records do not hold, one card alone or a strip under a heading of its
    own, each with its "Only 1 left in stock"), and not in the block of this page's
    buy control (a buy box that links to its seller's page)."""
    block = card_block(el, idx.elements[h1_pos])
    if block is None:
        return False
    buy = idx.elements[buy_pos] if buy_pos >= 0 else None
    return buy is None or not (buy is block or any(a is block for a in buy.iterancestors()))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！])")


def _first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text, maxsplit=1)[0]


_OPTION_TAGS = frozenset({"button", "input", "label", "a"})
# Elements after an enabled buy control within which stock wording is still its
# product's ("Add to cart" then "Only 2 left", a delivery estimate, a stock line).
_NEAR_BUY = 40


def _in_option(el: _Element) -> bool:
    """``el`` is, or is inside, an option of a variant picker (:func:`_is_option`):
    a button, input, label or link at most two levels up."""
    for depth, node in enumerate((el, *el.iterancestors())):
        if depth > 2:
            return False
        if node.tag in _OPTION_TAGS:
            return _is_option(node)
    return False


def _is_option(control: _Element) -> bool:
    """The control is one option of a variant picker: one of several sibling controls
    of its tag, bare or each in a wrapper of its own (``<div class=sizes><button>S
    </button><button disabled>M - sold out</button>``; class: size and colour pickers
    that say each option's stock on its button)."""
    tag = control.tag
    parent = control.getparent()
    if parent is None:
        return False
    others = [c for c in parent if c.tag == tag and c is not control]
    if not others:
        grand = parent.getparent()
        if grand is None or len(parent) > 2:
            return False
        wrappers = [c for c in grand if c.tag == parent.tag and c is not parent]
        others = [found for w in wrappers[:_MOST_OPTIONS] if (found := w.find(tag)) is not None]
    if len(others) >= _MOST_OPTIONS:
        return False  # a list of links or buttons of its own, no picker
    # the other options name variants in short labels ("S", "Red", "42 EU"): none is a
    # buy control or an action (a disabled "Temporarily out of stock" button beside
    # "Add to wish list" is the buy button's state)
    return bool(others) and all(_names_an_option(o) for o in others)


# A size's label: a number ("39", "10.5", "EU 42") or a letter size ("S", "XL").
_SIZE_LABEL = re.compile(r"(?:[A-Za-z]{0,3}\s?\d{1,3}(?:[.,/]\d{1,2})?|X{0,3}[SML]|XXL|\d?XL)")


def _label_of(text: str) -> str:
    """The text without its stock words and separators ("39 - sold out" → "39")."""
    for state in availability_states(text):
        text = _STATE_WORDS[state].sub(" ", text)
    return text.strip(" -–—:|()")


def _labelled_option(el: _Element, own: str) -> bool:
    """``el`` writes a variant's label and its state ("39 sold out") and is one of
    several sibling elements of its tag that name variants ("38", "40"; class: size
    pickers built from plain ``span``/``li`` elements). A stock line alone ("In stock"
    in a list of details) is no option."""
    if el.tag not in ("span", "li", "div") or not _SIZE_LABEL.fullmatch(_label_of(own)):
        return False
    parent = el.getparent()
    if parent is None:
        return False
    others = [c for c in parent if c.tag == el.tag and c is not el]
    return 0 < len(others) < _MOST_OPTIONS and all(_names_an_option(o) for o in others)


# The longest label of an option of a variant picker ("Extra Large", "42 EU", "Navy Blue"),
# and more options than a picker shows (shoe sizes in halves, a palette of colours).
_OPTION_LABEL = 20
_MOST_OPTIONS = 60
# A control's label that asks to do something rather than names a variant.
_ACTION = re.compile(
    r"^\W*(?:add|save|wish|notify|share|compare|remove|email|ask|find|buy|view|see)\b", re.I
)


def _names_an_option(control: _Element) -> bool:
    label = visible_text(control) or control.get("value") or ""
    return len(label) <= _OPTION_LABEL and not _ACTION.match(label) and not is_buy_control(control)


def _only_stock_words(label: str) -> bool:
    """The label is a stock phrase and nothing else ("Sold out", "Notify me")."""
    rest = label
    for state in availability_states(label):
        rest = _STATE_WORDS[state].sub(" ", rest)
    return bool(label.strip()) and not re.sub(r"[\W_]+", "", rest)


def _in_table_row(el: _Element) -> bool:
    """Inside one row of a table of several (variants, sellers, offers: each row says its
    own stock; class: comparison and marketplace pages listing offers in a table)."""
    node: _Element | None = el
    for _ in range(6):  # the element and its five nearest ancestors
        if node is None:
            return False
        parent = node.getparent()
        if node.tag == "tr":
            return parent is not None and sum(1 for c in parent if c.tag == "tr") >= 2
        node = parent
    return False


# A sentence that opens with a condition ("If sold out, select a size to join the
# waitlist"): its condition names no state of the product ("we'll ship when it's
# available" is no such opening and stays a backorder).
_CONDITIONAL = re.compile(
    r"(?:^|(?<=[.!?]))\s*(?:if|in case|should (?:it|this|the|an?)\b[\w ]{0,20}?\bbe)\b"
    r"[^.,;:|!?]*",
    re.I,
)
_BACK_IN_STOCK = re.compile(r"back-?in-?stock|backinstock|restock")
# Message boxes and alerts are templates filled in by scripts: their class is no state.
_MESSAGE_BOX = re.compile(r"alert|message|msg|notice|notification|modal|popup|toast", re.I)


def _stock_class_state(cls: str) -> str | None:
    # a "back-in-stock" block is the form that offers to tell when it is back: its
    # class names no state (its words do: "Notify me when it is back in stock")
    lowered = _BACK_IN_STOCK.sub(" ", cls.lower())
    if re.search(r"out-?of-?stock|outofstock|sold-?out|unavailable", lowered):
        return "OutOfStock"
    if re.search(r"back-?order", lowered):
        return "BackOrder"
    if re.search(r"pre-?order", lowered):
        return "PreOrder"
    if re.search(r"\bin-?stock\b|\binstock\b", lowered):
        return "InStock"
    return None


def _compatible(marked: str, said: str) -> bool:
    return marked == said or {marked, said} == {"InStock", "LimitedAvailability"}


# The shop says this product is sold in its stores only: no online stock state applies.
_NOT_SOLD_ONLINE = re.compile(
    r"\b(?:can ?not|can't|may not) be (?:purchased|bought|ordered) online|"
    r"\bcan only be (?:purchased|bought) (?:at|in) (?:one of )?our (?:retail )?"
    r"(?:stores?|shops?|locations?)",
    re.I,
)


# No text shorter than this matches _NOT_SOLD_ONLINE ("can't be bought online": 22
# characters; the pattern matches character by character, case aside): not searched.
_SHORTEST_NOT_ONLINE = 22


def _says_be(text: str) -> bool:
    """The text holds " be " in any case: every match of _NOT_SOLD_ONLINE does (its
    ignored case lets "b" and "e" match only "B" and "E"), and four substring tests
    cost a tenth of the search they spare."""
    return " be " in text or " Be " in text or " BE " in text or " bE " in text


def not_sold_online(idx: PageIndex, h1_pos: int) -> bool:
    """Wording after the heading, outside other products' blocks, saying the product
    cannot be bought online."""
    if h1_pos < 0:
        return False
    search, after = _NOT_SOLD_ONLINE.search, h1_pos + 1
    for el, in_section in zip(idx.elements[after:], idx.section[after:], strict=True):
        if in_section:
            continue  # in an excluded block (see below): never read
        if len(el):
            own = " ".join([el.text or ""] + [tail for c in el if (tail := c.tail)])
        else:  # no child: its own text alone (the same string, without the list)
            own = el.text
            if not own:
                continue
        if (
            len(own) >= _SHORTEST_NOT_ONLINE
            and _says_be(own)
            and search(own)
            and not idx.is_excluded(el)
        ):
            return True
    return False
