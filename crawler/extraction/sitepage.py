"""A page's product and its site's evidence (:mod:`.evidence`): what the page adds to
it, what it changes in the product's provenance, and whether the page should wait
for it.

* :func:`observe`: the page's :class:`~.evidence.PageEvidence` (its stock statements,
  its structured price and stock state, their visible twins);
* :func:`settle`: the product's provenance says ``site`` for a field read where the
  site shows it, and names in ``disagrees`` a structured field whose value differs
  from what the site's learned position shows on this page;
* :func:`uncertain`: the page lacks structured data and its visible read leaves no
  product (for want of a price), no price or no stock state, which the site's evidence
  could give; while the site's evidence is young, the spider reads such a page again later
  (:class:`crawler.extensions.siteevidence.SiteEvidenceStore`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from lxml.etree import _Element

from .evidence import FIELDS, PageEvidence, SiteEvidence
from .visible.page import VisiblePage
from .visible.site_reading import read_at, stock_statements, twins

#: Provenance values of the structured sources.
STRUCTURED = frozenset({"json-ld", "microdata", "rdfa"})


def observe(visible: VisiblePage, product: dict[str, Any] | None) -> PageEvidence:
    """What the page tells of its site."""
    idx = visible.index
    if idx is None:
        return PageEvidence(product=product is not None)
    statements = tuple(stock_statements(idx, visible.h1_pos))
    if product is None:
        return PageEvidence(product=False, statements=statements)
    prov = product.get("provenance") or {}
    price = product["price"] if prov.get("price") in STRUCTURED else None
    stock = product["availability"] if prov.get("availability") in STRUCTURED else None
    structured = tuple(
        (name, str(value)) for name, value in (("price", price), ("availability", stock))
        if value is not None
    )
    shown = twins(idx, price, stock) if structured else []
    return PageEvidence(True, statements, structured, tuple(shown))


def settle(
    product: dict[str, Any], visible: VisiblePage, site: SiteEvidence, root: _Element
) -> None:
    """The product's provenance, with the site's evidence (see the module doc)."""
    prov = product["provenance"]
    for name in visible.learned:
        if prov.get(name) == "visible":
            prov[name] = "site"
    idx = visible.index
    if idx is None:
        return
    disagrees = []
    for name in FIELDS:
        path = site.position(name)
        if path is None or prov.get(name) not in STRUCTURED or product.get(name) is None:
            continue
        read = read_at(root, idx, path, name)
        if read is not None and not _same(name, read[0], product[name]):
            disagrees.append(name)
    if disagrees:
        prov["disagrees"] = disagrees


def _same(name: str, shown: object, value: object) -> bool:
    if name == "price":
        return isinstance(shown, Decimal) and shown == value
    out = ("OutOfStock", "Discontinued")
    return (shown in out) == (value in out)


def uncertain(
    visible: VisiblePage, has_structured: bool, product: dict[str, Any] | None, rejected: str | None
) -> bool:
    """The page lacks structured data and its visible read leaves something a site's
    evidence could settle: a heading and a product signal but no product for want of a
    price, or a product without a price or a stock state. (Stock wording read where a
    template statement stands is not known as such before the site's evidence is: a
    limit.)"""
    if has_structured or not visible.name or visible.records:
        return False
    if product is None:
        # a heading and a product signal (a buy control, a code, stock wording), no
        # price: a product page whose price the site's evidence may show; a category
        # page of links gives no such signal
        return rejected == "no_product" and visible.product_signals >= 1
    return product.get("price") is None or product.get("availability") is None
