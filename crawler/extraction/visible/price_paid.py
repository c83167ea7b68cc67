"""The price a shopper pays, where a page shows two: VAT included over the net price,
the discounted price over the list price.

* **Tax** (:func:`tax_of`): an amount with "incl. VAT", "inc VAT", "TTC", "brutto",
  "s DPH", "inkl. MwSt." right after it, or a "Gross price" label right before it, is
  the VAT-included price; one with "excl. VAT", "+ VAT", "HT", "netto", "bez DPH"
  after it, or a "Net price" label before it, is the net price. Where both are
  shown, the shopper pays the first (class: B2B and EU shops that show the net price
  first, in the same element, side by side in two, or as a row of text).
* **Discount** (:func:`discounted`): two amounts side by side, the second lower, with
  the page's own evidence that one is a reduction of the other: a saving equal to
  their difference, a percentage that takes the higher to the lower, or a sale badge
  beside them (class: price boxes whose list price carries no mark of its own,
  "£80.00 £60.00 Save £20.00"). A discount code is no such evidence.
"""

from __future__ import annotations

import re
from decimal import Decimal

from lxml.etree import _Element

from ..normalize.price import parse_price
from .dom import visible_text
from .price_parts import NOT_PAID
from .price_text import MONEY_TEXT

# A word after an amount is its suffix unless it labels the next one ("€10.00 Gross
# price €12.30").
_NOT_A_LABEL = r"(?!\s*(?:price|preis|cena|prix|precio|prezzo|preço)\b)"
_GROSS_AFTER = re.compile(
    r"^[\s(*]{0,3}(?:incl\.?(?:uding|usive)?|inc\.?|inkl\.?|including)\s*(?:of\s*)?"
    r"(?:vat|tax|taxes|gst|mwst|btw|iva|tva|moms|dph)\b|^[\s(*]{0,3}(?:ttc|brutto|gross|"
    r"s dph|z dph|con iva|iva incl|vat incl|avec tva|z vat|с ндс|med moms)\b" + _NOT_A_LABEL,
    re.I,
)
_NET_AFTER = re.compile(
    r"^[\s(*]{0,3}(?:excl\.?(?:uding|usive)?|ex\.?|exkl\.?|excluding|zzgl\.?|plus|\+)\s*"
    r"(?:of\s*)?(?:vat|tax|taxes|gst|mwst|btw|iva|tva|moms|dph)\b|^[\s(*]{0,3}(?:ht|netto|net|"
    r"bez dph|sin iva|sans tva|ohne mwst|без ндс|bez vat|exkl\. moms)\b" + _NOT_A_LABEL,
    re.I,
)
_GROSS_BEFORE = re.compile(
    r"(?:gross|brutto|incl\.? vat|with vat|inc vat|s dph|ttc|inkl\.? mwst\.?)"
    r"\s*(?:price|preis|cena|prix|precio)?\s*:?\s*$",
    re.I,
)
_NET_BEFORE = re.compile(
    r"(?:\bnet|netto|excl\.? vat|ex vat|without vat|bez dph|\bht)"
    r"\s*(?:price|preis|cena|prix|precio)?\s*:?\s*$",
    re.I,
)


def tax_of(before: str, after: str) -> str | None:
    """``"gross"``, ``"net"`` or None: what the words right after an amount (its
    suffix) or right before it (its label) say of tax; the suffix wins."""
    if _GROSS_AFTER.match(after):
        return "gross"
    if _NET_AFTER.match(after):
        return "net"
    if _GROSS_BEFORE.search(before[-30:]):
        return "gross"
    if _NET_BEFORE.search(before[-30:]):
        return "net"
    return None


def taxed_amount(text: str) -> str | None:
    """Of a text that writes several amounts, the one the shopper pays by tax: the
    first VAT-included one, else the one left when the others are net; None when
    tax says nothing."""
    found = list(MONEY_TEXT.finditer(text))
    if len(found) < 2:
        return None
    marks = []
    for at, match in enumerate(found):
        start = found[at - 1].end() if at else 0
        end = found[at + 1].start() if at + 1 < len(found) else len(text)
        marks.append(tax_of(text[start : match.start()], text[match.end() : end]))
    for match, mark in zip(found, marks, strict=True):
        if mark == "gross":
            return match.group(0)
    rest = [m for m, mark in zip(found, marks, strict=True) if mark != "net"]
    if "net" in marks and len(rest) == 1:
        return rest[0].group(0)
    return None


def element_tax(el: _Element) -> str | None:
    """What tax words say of a price element's amount: its own text and tail, and a
    short label element right before or after it that writes no amount itself."""
    own = visible_text(el)
    match = MONEY_TEXT.search(own)
    if match is None:
        return None
    before, after = own[: match.start()], own[match.end() :] + " " + (el.tail or "")
    previous, following = el.getprevious(), el.getnext()
    if not before.strip() and previous is not None and isinstance(previous.tag, str):
        label = visible_text(previous)
        if len(label) <= 40 and not MONEY_TEXT.search(label):
            before = label + " " + (previous.tail or "")
    if not after.strip() and following is not None and isinstance(following.tag, str):
        label = visible_text(following)
        if len(label) <= 40 and not MONEY_TEXT.search(label):
            after = label
    return tax_of(before, after)


_SALE_BADGE = re.compile(
    r"\b(?:sale|on sale|deal|reduced|sconto|rebaja|rebajado|oferta|soldes?|promo|angebot|"
    r"aktion|promoção|promocja|скидка|indirim)\b",
    re.I,
)
_CODE = re.compile(r"\bcode\b|\bcoupon\b|\bvoucher\b|\bgutschein|\bcupón|\bkod\b", re.I)
_PERCENT = re.compile(r"(\d{1,2})(?:[.,]\d+)?\s?%")


def discounted(high: Decimal, low: Decimal, evidence: str) -> bool:
    """``evidence`` (the text around two amounts) says ``low`` is ``high`` reduced: a
    saving equal to their difference, a percentage taking one to the other, or a sale
    badge; a discount code says nothing of the price everyone pays."""
    if not 0 < low < high or _CODE.search(evidence):
        return False
    for match in MONEY_TEXT.finditer(evidence):
        amount = parse_price(match.group(0))
        if amount is not None and abs(amount - (high - low)) <= Decimal("0.01"):
            return True
    for match in _PERCENT.finditer(evidence):
        percent = Decimal(match.group(1))
        if 0 < percent < 100 and abs(high * (100 - percent) / 100 - low) <= high / 100:
            return True
    return bool(_SALE_BADGE.search(evidence))


def not_paid(price: _Element) -> bool:
    """The amount's own words say it is not the price paid: its text, its tail, and
    the short labels just before and after it that write no amount of their own
    ("€10.00 <small>excl. VAT</small>"; "<span>Net:</span>" is no label of this kind;
    "4 payments of $12.50"); a net amount marked so (:func:`element_tax`)."""
    parts = [visible_text(price), price.tail or ""]
    for sibling in (price.getprevious(), price.getnext()):
        if sibling is not None and isinstance(sibling.tag, str):
            text = visible_text(sibling)
            if len(text) <= 40 and not MONEY_TEXT.search(text):
                parts.append(text)
    parent = price.getparent()
    if parent is not None and len(parent) == 1:
        text = visible_text(parent)
        if len(text) <= 80 and len(MONEY_TEXT.findall(text)) <= 1:
            parts.append(text)
    if NOT_PAID.search(" ".join(parts)) and element_tax(price) != "gross":
        return True
    return element_tax(price) == "net"
