"""The item number a page both lives at and shows: ``/itm/302474151804`` with
"Item number: 302474151804" (or the number alone in its own element) on the page.

Class of pages served: marketplaces, classified ads, auction lots, deal and
ticket pages, and shops whose product address carries the shop's own item
number and whose page prints it beside a label of the shop's language ("eBay
item number:", "post id:", "商品編號：", "딜번호 :", "Produkta kods"). Two pieces of
evidence must agree -- the address and the visible page -- so an id only in the
address (a tracking or session parameter) or only in scripts is never taken here.

:func:`address_item_number` is the weaker fallback the SKU takes last, when no
source gives one: the number a product address ends with (see there).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from lxml.etree import _Element

from .code_labels import label_kind
from .index import PageIndex

_OTHER_KINDS = frozenset({"gtin", "mpn", "brand"})

# A code: letters and digits with at least one digit, at least 5 characters.
_TOKEN = re.compile(r"[A-Za-z0-9]*\d[A-Za-z0-9]*")
# A code holds a run of 4 digits or more (not "13ftx17ft", "158x198cm": sizes).
_DIGITS = re.compile(r"\d{4,}")
# Query parameters that name the product (not tracking, sessions or pages).
_ID_PARAMS = re.compile(r"^(?:p?id|pid|product_?id|products_id|item_?id|sku|code|art)$", re.I)
# The text of one element: a code alone, or a short label, a separator and a code
# (group 2: the code, compared with the address's afterwards). One pattern for every
# code, not one compiled for each page's code (a new shop's page paid the compiling):
# a code is letters and digits, and the text after a label's separator can hold one
# token only, so the label found is the one a pattern naming the code would find.
_SHOWN = re.compile(
    r"^\s*(?:([^\d\n]{1,30}?)\s*[:：#]\s*)?[〈<(\[]?\s*([A-Za-z0-9]+)\s*[〉>)\]]?\s*$"
)


def url_codes(url: str) -> list[str]:
    """Candidate item numbers of an address: digit-bearing tokens (5 characters or
    more) of the last two path segments and of product-id query parameters."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s][-2:]
    found: list[str] = []
    for segment in reversed(segments):
        for token in _TOKEN.findall(segment):
            if _DIGITS.search(token) and len(token) >= 5:
                found.append(token)
                # the number inside a token ("c7200a278526196": ad 278526196)
                found += [d for d in _DIGITS.findall(token) if len(d) >= 5 and d != token]
    found += [
        v
        for k, v in parse_qsl(parts.query)
        if _ID_PARAMS.match(k) and _TOKEN.fullmatch(v) and _DIGITS.search(v) and len(v) >= 5
    ]
    return list(dict.fromkeys(found))


# The product number a path ends with: "...-casio-304103-14347.html", ".../112949990",
# "BabyBjorn_One-987929.html" (after a separator, before an optional extension).
_TRAILING_NUMBER = re.compile(r"(?:^|[-_/.=])(\d{5,})(?:\.[a-z]{2,5})?/?$", re.I)


def _is_gtin(digits: str) -> bool:
    """A GTIN-8/12/13/14 with a valid check digit (a barcode, not the shop's number)."""
    if len(digits) not in (8, 12, 13, 14):
        return False
    body, check = digits[:-1], int(digits[-1])
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(body)))
    return (10 - total % 10) % 10 == check


def address_item_number(url: str) -> str | None:
    """The shop's product number a product address carries, shown or not: the digits
    of a product-id query parameter (``?pid=260591``), else the number (five digits
    or more) the last path segment ends with; never a valid GTIN (a barcode in the
    address is no shop code).

    Class of pages served: shops and marketplaces whose product URLs end in their
    own product id (``/p-<slug>-304103-14347.html``, ``/<category>/<slug>-112949990``,
    ``/store/122725?pid=260591``). The weakest SKU evidence: taken only when the
    page, its markup and OpenGraph give none. Measured on the international
    development set, where such pages' SKU truth is the address's number (7 of 11
    pages with no other SKU); not a page's or a category's number, since only a page
    typed a product page gets here.
    """
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    # a product-id parameter names the product; the path may name its store or category
    candidates = [v for k, v in parse_qsl(parts.query) if _ID_PARAMS.match(k) and v.isdigit()]
    found = _TRAILING_NUMBER.search(segments[-1]) if segments else None
    candidates += [found.group(1)] if found else []
    for number in candidates:
        if len(number) >= 5 and not _is_gtin(number):
            return number
    return None


def shown_url_code(idx: PageIndex, url: str) -> str | None:
    """The first of the address's item numbers (:func:`url_codes`) that an element of
    the visible page shows alone or after a short label; None when none is shown."""
    codes = url_codes(url)
    if not codes:
        return None
    if not idx.elements:
        return None
    for code in codes:  # the address's own order: the last path segment first
        lowered = code.lower()  # shown in either case
        for text, owner in _texts_holding(idx, code):
            if len(text) > 60 or idx.is_excluded(owner):
                continue
            match = _SHOWN.match(text)
            # a label naming another kind of code ("UPC: 805...", "Model: ...") is not
            # the shop's item number
            if (
                match
                and match.group(2).lower() == lowered
                and label_kind(match.group(1) or "") not in _OTHER_KINDS
            ):
                return code
    return None


def _texts_holding(idx: PageIndex, code: str) -> list[tuple[str, _Element]]:
    """The text nodes under the walk's root that hold ``code``, each with the element
    that holds it (as its text, or as its tail: lxml's owner of a text node), for the
    walked elements only: the text of a hidden element, a script or a comment, and the
    tail of one, never count. Read from the walked elements' ``text`` and ``tail`` (the
    root's tail is outside it): about twice as fast as an XPath search of every text
    node of the tree, hidden subtrees and scripts included."""
    elements = idx.elements
    root = elements[0]
    found: list[tuple[str, _Element]] = []
    for el in elements:
        text = el.text
        if text and code in text:
            found.append((text, el))
        text = el.tail
        if text and code in text and el is not root:
            found.append((text, el))
    return found
