"""The product's name as shown: the page's one main heading."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from lxml.etree import _Element

from ..normalize.text import normalize_text
from .codes import is_code_row
from .dom import SCREEN_READER, classes, visible_strings, visible_text
from .index import PageIndex

# Headings of review and Q&A widgets, dialogs and modals: never the product's.
_WIDGET = re.compile(r"BVQA|BVRR|review|question|modal|dialog|popup|tooltip", re.I)
_LOGO = re.compile(r"logo|site-?title|site-?name|site-?brand|masthead", re.I)


def _in_link(el: _Element) -> bool:
    """Inside an ``<a href>`` to another page (class: listings and carousels whose cards
    are headed by ``<h1>``)."""
    for a in el.iterancestors("a"):
        href = (a.get("href") or "").strip()
        return bool(href) and not href.startswith(("#", "javascript:"))
    return False


def heading_text(h1: _Element) -> str:
    """The heading's visible text without a product-code row shown inside it
    (``<h1>Desk <small>Item # 101095</small></h1>``: the code is the SKU, not the name)."""

    strings = visible_strings(
        h1,
        skip=lambda child: _is_control(child)
        or _is_aside(child)
        or is_code_row(visible_text(child)),
    )
    return normalize_text(" ".join(strings)) or visible_text(h1)


# A badge inside a heading ("New", "Sale", "-20%"): a sticker on the name, not part of it.
_BADGE = re.compile(r"(?:^|[\s_-])(?:badge|sticker|ribbon|flag|pill|tag|label)s?(?:$|[\s_-])", re.I)


def _is_aside(child: _Element) -> bool:
    """Not part of the name a shopper reads (class: headings that carry a "New"
    sticker, a screen-reader "product page" suffix, or a favourites widget with its
    pop-up, hidden from assistive technology by ``aria-hidden``): a copy for screen
    readers only, a short badge, or a block hidden from assistive technology. When the
    heading holds nothing else, :func:`heading_text` falls back to its whole text."""
    if child.get("aria-hidden") == "true" and child.tag not in _INLINE:
        return True
    cls = child.get("class") or ""
    if not cls:
        return False
    return bool(SCREEN_READER.search(cls)) or (
        bool(_BADGE.search(cls)) and len(visible_text(child)) <= 20
    )


# Inline elements: an ``aria-hidden`` one may be the shown copy of a heading's text
# beside a screen-reader copy (``<span aria-hidden=true>Lamp</span><span class=sr-only>``).
_INLINE = frozenset({"span", "a", "b", "strong", "em", "i", "small", "sup", "sub"})


# Controls some shops put inside the heading: a favourite/wishlist star, a share or
# compare link, a "log in needed" prompt (class: marketplaces and classifieds).
_CONTROL = re.compile(r"fav|wish|login|log-in|signin|sign-in|account|share|compare", re.I)


def _is_control(el: _Element) -> bool:
    if el.tag not in ("a", "button"):
        return False
    return bool(_CONTROL.search(classes(el)) or _CONTROL.search(el.get("href") or ""))


_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _address_words(url: str) -> set[str]:
    """The words of the address's last two path segments (a product's slug:
    "/halvorsen-drill-driver-18v/item/HV18"), lowered."""
    path = urlsplit(url).path
    return set(re.findall(r"[^\W_]+", " ".join(path.split("/")[-3:]).casefold()))


def select_h1(idx: PageIndex, title: str = "", url: str = "") -> _Element | None:
    """The page's main heading (see the module doc and docs/extraction.md). Among
    several ``<h1>``, the one whose name the ``<title>`` and the address (``url``'s
    slug) agree with: not the first, which may be a promotion banner (class:
    marketplaces whose first ``<h1>`` advertises the day's deals)."""
    h1s = [h for h in idx.h1s if visible_text(h) and not idx.is_excluded(h)]
    h1s = [h for h in h1s if not _WIDGET.search(classes(h))] or h1s
    if len(h1s) > 1:  # a heading inside a link to another page is a product card's
        free = [h for h in h1s if not _in_link(h)]
        if not free:  # every h1 heads a card: the title-like element the <title> repeats
            titled = titled_heading(idx, title)
            if titled is not None:
                return titled
        h1s = free or h1s
    if len({visible_text(h).casefold() for h in h1s}) == 1:  # the same heading twice (mobile copy)
        return h1s[0]
    if len(h1s) > 1:  # drop logo headings, then prefer the main content's
        h1s = [h for h in h1s if not _LOGO.search(classes(h))] or h1s
    if len(h1s) > 1 and (title or url):  # the heading the page's <title> repeats
        wanted = _words(title) | (_address_words(url) if url else set())
        # (share of the heading's words in the title, how many): "Tommy Jeans OFLEKI"
        # over a second heading "OFLEKI" that the title repeats as fully
        scored = sorted(
            (
                (
                    round(
                        len(_words(visible_text(h)) & wanted)
                        / max(len(_words(visible_text(h))), 1),
                        2,
                    ),
                    len(_words(visible_text(h)) & wanted),
                    -i,
                )
                for i, h in enumerate(h1s)
            ),
            reverse=True,
        )
        if scored[0][0] >= 0.6 and (len(scored) == 1 or scored[1][:2] < scored[0][:2]):
            return h1s[-scored[0][2]]
    if len(h1s) > 1:
        h1s = [
            h for h in h1s if any(a.tag in ("main", "article") for a in h.iterancestors())
        ] or h1s
    if len(h1s) == 1:
        return h1s[0]
    if not h1s:
        return titled_heading(idx, title)
    preferred = [
        h
        for h in h1s
        if h.get("itemprop") == "name" or re.search(r"product|title|name", classes(h), re.I)
    ]
    return preferred[0] if len(preferred) == 1 else titled_heading(idx, title)


# Elements that may hold a product title styled without <h1>.
_TITLE_TAGS = frozenset({"h1", "h2", "h3", "div", "span", "p", "strong", "b"})
_TITLE_CLASS = re.compile(r"title|name|heading|headline|subject", re.I)
_NOT_TITLE_CLASS = re.compile(
    r"modal|dialog|popup|footer|header|menu|nav|banner|item|card|tile|related|brand|"
    r"seller|shop|store|city|user|sub",
    re.I,
)


def titled_heading(idx: PageIndex, title: str) -> _Element | None:
    """A page without one product ``<h1>`` (none, or one per product card): the
    heading-like element (an ``h2``, or a
    block whose class says title/name) whose text the page's ``<title>`` repeats.

    Class of pages served: shops whose product title is an ``h2`` or a styled ``div``
    (``<div class="title">``, ``<h2 class="deal_title_main">``). The title must
    agree: every word of the element is in the ``<title>`` and the element holds at
    least half of the title's first part (before " - ", " | "), so a section heading
    ("Related products") or a card's name (a few words of the title) never qualifies.
    The longest such element wins; none gives None."""
    head = re.split(r"\s+[|–—-]\s+|\s*\|\s*", title.strip())
    wanted = _words(title)
    first = max((_words(p) for p in head), key=len, default=set())
    if len(first) < 1:
        return None
    best: tuple[int, _Element] | None = None
    # the headings, and the other title tags whose class says title (a class string
    # tested once, not once per element), in document order
    elements, classes = idx.elements, idx.classes
    titled = [p for p in idx.with_class(_TITLE_CLASS.search) if elements[p].tag in _TITLE_TAGS]
    headings = (idx.by_tag.get(tag, []) for tag in ("h1", "h2", "h3"))
    for pos in idx.positions(titled, *headings):
        el, cls = elements[pos], classes[pos]
        if _NOT_TITLE_CLASS.search(cls) or _WIDGET.search(cls) or idx.is_excluded(el):
            continue
        text = visible_text(el)
        if len(text) > 200:  # (its words are not read)
            continue
        words = _words(text)
        if not words or not words <= wanted:
            continue
        if len(words & first) * 2 < len(first):
            continue
        if best is None or len(words) > best[0]:
            best = (len(words), el)
    return best[1] if best else None


def heading_code(idx: PageIndex, name: str | None) -> str | None:
    """The product code shown inside a product heading (``<h1>Phone X <span>Код:
    01245</span></h1>``), from any ``<h1>`` whose text without the code is the name,
    even one in a header the page index leaves out (class: shops printing the code
    in the title block)."""
    if not name:
        return None
    for h1 in idx.h1s:
        for child in h1.iter():
            if child is h1 or not isinstance(child.tag, str):
                continue
            text = visible_text(child)
            if is_code_row(text) and heading_text(h1) == name:
                return text
    return None
