"""Shipping costs are never the price: an amount that the words before it label a
shipping or delivery cost, or a free-shipping threshold (class: shops printing the
delivery cost or "free shipping over $50" near the price, in many languages)."""

from __future__ import annotations

import re

from lxml.etree import _Element

from .dom import visible_text
from .price_text import MONEY_TEXT

# Shipping and delivery words, in the languages of the other price words.
_SHIPPING = re.compile(
    r"\b(?:shipping|delivery|postage|versand(?:kosten)?|lieferung|livraison|frais de port|"
    r"env[íi]o|frete|spedizione|verzend(?:kosten|ing)|wysyłka|dostawa|доставка|kargo|"
    r"送料|運費|运费|配送料|배송비)",
    re.I,
)
_FREE = re.compile(r"\b(?:free|gratis|kostenlos|gratuite?|gr[áa]tis|gratuito|無料|免運|免运)", re.I)
# A threshold after a free-shipping badge: "Free shipping over $50".
_THRESHOLD = re.compile(
    r"\b(?:over|above|from|orders?|ab|dès|desde|a partir|oltre|powyżej|от)\b|以上|이상", re.I
)


def labels_shipping(label: str) -> bool:
    """The text before an amount makes it a shipping cost ("Shipping:", "Delivery",
    "Free shipping over"), not a "Free shipping" badge before the price."""
    return bool(
        len(label) <= 40
        and _SHIPPING.search(label)
        and (not _FREE.search(label) or _THRESHOLD.search(label))
    )


def is_shipping_cost(price: _Element) -> bool:
    """The amount is labelled a shipping cost (:func:`labels_shipping`) by the words
    before it: in its own text ("Shipping: $5.99"), in the short element right before
    it, or in its parent's text before it ("Shipping <span class=price>$5.99</span>");
    words after it never ("$20.00 + free shipping" is the price)."""
    text = visible_text(price)
    match = MONEY_TEXT.search(text)
    labels = [text[: match.start()] if match else ""]
    previous = price.getprevious()
    if previous is not None and isinstance(previous.tag, str) and len(previous) == 0:
        labels.append(previous.text or "")
    parent = price.getparent()
    if parent is not None and parent.index(price) == 0:
        labels.append(parent.text or "")
    return any(labels_shipping(label) for label in labels)
