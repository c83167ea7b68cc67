"""Data records: a listing known by its structure (the data-records family, MDR/DEPTA).

A listing shows repeated records: sibling subtrees with the same tag path, each
linking to a page of its own and showing a price or an image (a product card, a
table row, a search result). This module finds them in the page's walk
(:class:`.index.PageIndex`), whatever their classes or markup:

* every link to another page (not ``#``, a script, a mail address, an image file or
  this page itself), outside the site's header, footer, navs and related-products
  blocks, is followed up its ancestors (at most :data:`_MAX_DEPTH` levels, never up
  to the block that holds the page's heading: a record never holds the heading);
  each ancestor is a candidate record, a child of its parent;
* a candidate is a **record** when it is small (at most :data:`_MAX_TEXT` characters
  of text and :data:`_MAX_ELEMENTS` elements) and shows a price (an amount of money
  in its text, or a price element of the walk) or an image;
* records of one parent with the same tag whose tag paths are alike (Jaccard
  similarity of their sets of tag paths ≥ :data:`_SIMILAR`; adjacent records are
  compared, as MDR compares adjacent generalized nodes) and that link to distinct
  pages form a **region**; a region counts when it has two records or more, most of
  them priced (a strip of logos or news teasers with images is no listing), or one
  priced record that is an item of a list or a row of a table (``<li>`` of an
  ``<ol>``/``<ul>``, a ``<tr>``: the markup itself says "one of many") and opens with
  a link naming its page, by a name or an image (a list of one detail row, "£53.63
  <a>Price promise</a>", is no card).

What the page then is, is decided in :mod:`..pagetype` and :mod:`..product`: records
make a page a listing unless the page's own product stands apart from them (a
selling price of its own outside every record, with a product signal, or structured
data naming the page). The records are also "other products' cards" for every
reader: their prices, stock wording, codes and buy buttons are not the page's
product's. Page typing asks the records alone (they replaced the count of priced
grid cards there); the price reader still steps over priced grids without links
(:meth:`.index.PageIndex.find_grids`) and over a lone card outside any list
(:func:`.price._in_card`), which records do not cover.

Limits: records are found only by links (a card that is a scripted ``div`` without
``<a href>`` is no record); a single card outside a list or table is no region;
records larger than the limits (a long teaser with a paragraph of text) are not
seen; image-only regions are no listing (a catalogue without prices gives no product
anyway: a page without structured data needs a price of its own).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

from lxml import etree
from lxml.etree import _Element

from ..ascii_case import CaseFolded
from .dom import text_at, text_of
from .index import PageIndex
from .price_text import MONEY_TEXT

#: Ancestors of a link tried as records (a card's link sits a few levels inside it).
_MAX_DEPTH = 6
#: A record's most characters of text and elements (a card, not a section).
_MAX_TEXT = 1200
_MAX_ELEMENTS = 250
#: The least Jaccard similarity of two adjacent records' tag paths.
_SIMILAR = 0.5
_LIST_ITEMS = frozenset({("ol", "li"), ("ul", "li"), ("tbody", "tr"), ("table", "tr")})
# A link's label that asks to do something, not a product's name.
_ACTION = re.compile(
    r"^\W*(?:add|buy|see|view|more|details|read|learn|shop|show|compare|find|get|help|"
    r"info|explain|terms)\b",
    re.I,
)


@dataclass
class Records:
    """The page's data records: each region's records (in document order, the largest
    region first; most records priced), and every element that is another product's
    card or block (those records, records with an image and no price, blocks headed
    as other products': :func:`headed_strips`)."""

    regions: list[list[_Element]] = field(default_factory=list)
    elements: set[_Element] = field(default_factory=set)
    #: the blocks headed as other products' (:func:`headed_strips`), among ``elements``
    strips: list[_Element] = field(default_factory=list)

    @property
    def largest(self) -> int:
        """Records in the largest region (0: none)."""
        return len(self.regions[0]) if self.regions else 0


def find_records(idx: PageIndex, h1: _Element | None, url: str | None) -> Records:
    """The data records of the page (see the module doc)."""
    own = _own_paths(url)
    h1_line = set(h1.iterancestors()) | {h1} if h1 is not None else set()
    # candidate record -> the page its first link goes to, and its (parent, tag)
    targets: dict[_Element, str] = {}
    group_of: dict[_Element, tuple[_Element, str]] = {}
    elements, section = idx.elements, idx.section
    for pos in idx.by_tag.get("a", ()):
        if section[pos]:
            continue
        link = elements[pos]
        href = link.get("href")
        target = _link_target(href) if href else None
        if target is None or target in own or link in h1_line:
            continue  # no page, or this page itself (or a link in the heading)
        node, tag = link, "a"
        for _ in range(_MAX_DEPTH):
            if node in targets:
                break  # met by an earlier link: it and its ancestors have their first page
            parent = node.getparent()
            if parent is None:
                break
            above = parent.tag
            # (a node above the link was its child's parent, asked already)
            if above in ("body", "html") or parent in h1_line:
                break
            targets[node] = target
            group_of[node] = (parent, tag)
            node, tag = parent, above
    # candidates by (parent, tag), in document order
    siblings: dict[tuple[_Element, str], list[_Element]] = {}
    for node, group in group_of.items():
        siblings.setdefault(group, []).append(node)
    marks = (sorted(idx.order[p] for p in idx.prices), idx.by_tag.get("img", []))
    records = Records()
    too_big: set[_Element] = set()
    for (parent, tag), nodes in siblings.items():
        single_item = (parent.tag, tag) in _LIST_ITEMS
        if len(nodes) < 2 and not single_item:
            continue
        if len(nodes) > 8 and not _shows_any(idx, parent, nodes, marks):
            continue  # a long list of links with no price or image (a menu): no records
        order = idx.order
        nodes.sort(key=lambda n: order.get(n, -1))
        region, is_priced = _region(idx, nodes, targets, marks, too_big, single_item)
        if is_priced:
            records.regions.append(region)
        records.elements.update(region)
    records.regions.sort(key=len, reverse=True)
    records.strips = headed_strips(idx, h1_line)
    records.elements.update(records.strips)
    return records


# The heading of a block of other products, or of other sellers' offers, in a few
# languages ("Customers also bought", "Sponsored", "Other sellers", "Bestsellers").
_OTHERS_HEADING = re.compile(
    r"also (?:bought|viewed|like|love|purchased)|customers who|you (?:may|might) (?:also )?"
    r"(?:like|love|need)|recommended|recommendations?|similar (?:products|items)|"
    r"related (?:products|items)|recently viewed|frequently bought|bestsellers?|"
    r"best sellers|top sellers|sponsored|other sellers|more buying choices|other offers|"
    r"more from|complete the look|kunden kauften auch|könnte (?:ihnen|dir) auch|"
    r"ähnliche (?:produkte|artikel)|andere verkäufer|gesponsert|vous aimerez|"
    r"produits similaires|autres vendeurs|sponsoris|también te puede|productos relacionados|"
    r"otros vendedores|patrocinado|potrebbe interessarti|prodotti correlati|"
    r"altri venditori|sponsorizzat|você também|produtos relacionados|outros vendedores|"
    r"polecane|podobne produkty|inni sprzedawcy|похожие товары|с этим товаром|"
    r"рекомендуем|другие продавцы|ook interessant|vergelijkbare|liknande produkter",
    re.I,
)
_HEADINGS = ("h2", "h3", "h4", "h5", "h6")
# (an ASCII heading searched lowered: ..ascii_case)
_NAMES_OTHERS = CaseFolded(_OTHERS_HEADING)


def headed_strips(idx: PageIndex, h1_line: set[_Element]) -> list[_Element]:
    """Blocks that a heading names as other products' or other sellers' ("Customers
    also bought", "Sponsored", "Bestseller of the week", "Other sellers"; class:
    recommendation strips, sponsored strips and sellers' offers without a class that
    says so): the heading's parent when it does not hold the page's heading, else the
    heading's following siblings up to the next heading."""
    blocks: list[_Element] = []
    for pos in idx.positions(*(idx.by_tag.get(tag, []) for tag in _HEADINGS)):
        heading = idx.elements[pos]
        text = text_of(heading)
        if len(text) > 80 or not _NAMES_OTHERS.found(text):
            continue
        parent = heading.getparent()
        if parent is None:
            continue
        if parent not in h1_line and parent.tag not in ("body", "main", "html"):
            blocks.append(parent)
            continue
        for sibling in heading.itersiblings(etree.Element):
            if sibling.tag in _HEADINGS or sibling.tag == "h1" or sibling in h1_line:
                break
            blocks.append(sibling)
    return blocks


def _region(
    idx: PageIndex,
    nodes: list[_Element],
    targets: dict[_Element, str],
    marks: tuple[list[int], list[int]],
    too_big: set[_Element],
    single_item: bool,
) -> tuple[list[_Element], bool]:
    """(the records among ``nodes``, siblings of one tag: the longest run of adjacent
    alike records linking to distinct pages; most of them show a price)."""
    shown: list[tuple[_Element, frozenset[str], bool]] = []
    for node in nodes:
        if node in too_big or node not in idx.order:
            continue  # too big, or not walked (hidden): no record
        what = _shows(idx, node, marks)
        if what is None:
            too_big.update(node.iterancestors())  # its ancestors are bigger still
            too_big.add(node)
            continue
        has_price, has_image = what
        if has_price or has_image:  # (most candidates show neither: no paths read)
            shown.append((node, _tag_paths(node), has_price))
    best: list[_Element] = []
    run: list[_Element] = []
    seen: set[str] = set()
    previous: frozenset[str] | None = None
    for node, paths, _ in shown:
        page = targets[node]
        alike = previous is not None and _jaccard(previous, paths) >= _SIMILAR
        if not alike or page in seen:
            if len(run) > len(best):
                best = run
            run, seen = [], set()
        run.append(node)
        seen.add(page)
        previous = paths
    if len(run) > len(best):
        best = run
    prices = {node for node, _, has_price in shown if has_price}
    if len(best) >= 2:
        # most records show a price: other products (else logos, news, sold-out cards:
        # other things' cards all the same, but no listing)
        return best, 2 * len(prices.intersection(best)) >= len(best)
    if single_item and len(shown) == 1 and shown[0][2] and _opens_with_name(shown[0][0]):
        return [shown[0][0]], True  # one item of a list, named and priced: a listing of one
    return [], False


def _opens_with_name(item: _Element) -> bool:
    """The list item opens with a link to its page, by a name or an image (a card names
    its product first), not with details that link to an action or an explanation."""
    before = item.text or ""
    for el in item.iterdescendants(etree.Element):
        if before.strip():
            return False  # text before the first link
        if el.tag == "a":
            if el.find(".//img") is not None:
                return True
            label = " ".join(text_of(el).split())
            return len(label) >= 3 and not _ACTION.search(label)
        before = (el.text or "") + (el.tail or "")
    return False


def _shows(
    idx: PageIndex, node: _Element, marks: tuple[list[int], list[int]]
) -> tuple[bool, bool] | None:
    """(the subtree below ``node`` shows a price, an image), or None when it is too
    big for a record (its size, prices and images found from the walk's positions)."""
    pos = idx.order[node]
    end = idx.subtree_end(pos)
    if end - pos > _MAX_ELEMENTS:
        return None
    prices, images = marks
    has_image = _within(images, pos, end)
    has_price = _within(prices, pos, end)
    text = text_at(idx.texts, pos, node)
    if len(text) > _MAX_TEXT:
        return None
    if not has_price and _DIGIT.search(text) and MONEY_TEXT.search(text):
        has_price = True  # (no digit, no amount: the cheap search first)
    return has_price, has_image


def _tag_paths(node: _Element) -> frozenset[str]:
    """The tag paths below ``node`` (MDR compares records by their tag trees), in one
    walk of its subtree: each element's path is its parent's, walked before it, and
    its tag (one iterator, not one for each element's children)."""
    paths: set[str] = set()
    path_of: dict[_Element, str] = {node: ""}
    for el in node.iterdescendants(etree.Element):
        below = path_of[el.getparent()] + "/" + el.tag
        paths.add(below)
        path_of[el] = below
    return frozenset(paths)


def _shows_any(
    idx: PageIndex, parent: _Element, nodes: list[_Element], marks: tuple[list[int], list[int]]
) -> bool:
    """A long list whose block shows a price element or an image, or whose first items
    write an amount (records are alike: one test for a menu of a thousand links)."""
    pos = idx.order.get(parent)
    if pos is None:
        return True  # not walked: let each record say
    end = idx.subtree_end(pos)
    if _within(marks[0], pos, end) or _within(marks[1], pos, end):
        return True
    texts = (_text(idx, node)[:_MAX_TEXT] for node in nodes[:4])
    return any(_DIGIT.search(t) and MONEY_TEXT.search(t) for t in texts)


def _text(idx: PageIndex, node: _Element) -> str:
    """:func:`.dom.text_of` of a candidate, read once for the page when it was walked."""
    pos = idx.order.get(node)
    return text_of(node) if pos is None else text_at(idx.texts, pos, node)


_SCHEMES = ("#", "javascript:", "mailto:", "tel:", "data:")
_DIGIT = re.compile(r"\d")
_IMAGE_FILES = frozenset({"jpg", "jpeg", "png", "gif", "webp", "svg", "avif"})


@lru_cache(maxsize=4096)
def _link_target(href: str) -> str | None:
    """The page a link's ``href`` goes to, without its fragment; None when it goes to
    none (:func:`_not_a_page`). Remembered: a page links to most of its addresses twice,
    a shop to its menu's on every page."""
    return None if _not_a_page(href) else href.split("#", 1)[0].strip()


def _not_a_page(href: str) -> bool:
    """``#``, a script, a mail address, a phone number, data, or an image file."""
    href = href.strip()
    if href[:11].lower().startswith(_SCHEMES):
        return True
    last = href.split("?", 1)[0].split("#", 1)[0].rsplit(".", 1)
    return len(last) == 2 and last[1].lower() in _IMAGE_FILES


def _within(positions: list[int], start: int, end: int) -> bool:
    """A position of the sorted ``positions`` lies in [start, end)."""
    at = bisect_left(positions, start)
    return at < len(positions) and positions[at] < end


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _own_paths(url: str | None) -> set[str]:
    """The spellings of this page's own address a link may use (with its query, and
    without one: the bare path of a page is the page)."""
    if not url:
        return {""}
    parts = urlsplit(url)
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    own = {""}
    for q in {"", query}:
        own.update((path + q, f"{parts.scheme}://{parts.netloc}{path}{q}",
                    f"//{parts.netloc}{path}{q}"))
    if query:
        own.add(query)
    return own
