"""Blocks of their own that a price may sit in, not the page's product's: a small card
linking to another page, a block with a heading of its own."""

from __future__ import annotations

import re

from lxml.etree import _Element

from .dom import visible_text

# Links that do something (or ask) rather than name another product.
_ACTION_LABEL = re.compile(
    r"\?\s*$|^\s*(?:add|see|view|notify|don'?t|do not|find|write|read|share|tell|learn|shop|"
    r"compare|sign|log|check|get|ask|email|print|save|more|show|size|free)\b",
    re.I,
)
# A link out of a block to another page (a product card's title or image link).
_NOT_CARD_LINK = re.compile(r"^\s*(?:#|javascript:|mailto:)|cart|basket|wish|review|compare", re.I)

def in_card(price: _Element, h1: _Element) -> bool:
    """The price sits in a block of its own that links to another page by a name or an
    image (a product card, a table row of a listing, a search result), not under the
    page heading: the blocks from the price up to the one holding the heading."""
    return card_block(price, h1) is not None


def card_block(price: _Element, h1: _Element) -> _Element | None:
    """The block of :func:`in_card` (the smallest that links away), or None."""
    h1_ancestors = set(h1.iterancestors())
    for depth, block in enumerate((price, *price.iterancestors())):
        if block in h1_ancestors or block.tag in ("body", "html") or depth > 4:
            return None
        # a card is small: a name, a price, a stock word, a button
        if len(visible_text(block)) > 300:
            return None
        for link in block.iter("a"):
            href = link.get("href") or ""
            if not href or _NOT_CARD_LINK.search(href):
                continue
            label = visible_text(link)
            if link.find(".//img") is not None or (
                len(label.split()) >= 3 and not _ACTION_LABEL.search(label)
            ):
                return block
    return None


def in_titled_block(price: _Element, h1: _Element) -> bool:
    """The price sits in a block with a heading of its own (a featured product,
    a bundle offer...), not under the page heading."""
    h1_ancestors = set(h1.iterancestors())
    block = price
    for ancestor in price.iterancestors():
        if ancestor in h1_ancestors:
            break
        block = ancestor
    else:
        return False
    for el in block.iter():  # a titled block starts with its title: a heading before the price
        if el is price:
            return False
        if el.tag in ("h2", "h3", "h4") and visible_text(el):
            return True
    return False
