"""The product's name as shown: the page's one main heading."""

from __future__ import annotations

import re

from lxml.html import HtmlElement

from ..normalize.text import normalize_text
from .codes import is_code_row
from .dom import classes, visible_strings, visible_text
from .index import PageIndex

# Headings of review and Q&A widgets, dialogs and modals: never the product's.
_WIDGET = re.compile(r"BVQA|BVRR|review|question|modal|dialog|popup|tooltip", re.I)
_LOGO = re.compile(r"logo|site-?title|site-?name|site-?brand|masthead", re.I)


def heading_text(h1: HtmlElement) -> str:
    """The heading's visible text without a product-code row shown inside it
    (``<h1>Desk <small>Item # 101095</small></h1>``: the code is the SKU, not the name)."""

    strings = visible_strings(h1, skip=lambda child: is_code_row(visible_text(child)))
    return normalize_text(" ".join(strings)) or visible_text(h1)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def select_h1(idx: PageIndex, title: str = "") -> HtmlElement | None:
    h1s = [h for h in idx.h1s if visible_text(h) and not idx.is_excluded(h)]
    h1s = [h for h in h1s if not _WIDGET.search(classes(h))] or h1s
    if len({visible_text(h).casefold() for h in h1s}) == 1:  # the same heading twice (mobile copy)
        return h1s[0]
    if len(h1s) > 1:  # drop logo headings, then prefer the main content's
        h1s = [h for h in h1s if not _LOGO.search(classes(h))] or h1s
    if len(h1s) > 1 and title:  # the heading the page's <title> repeats
        wanted = _words(title)
        scored = sorted(
            ((len(_words(visible_text(h)) & wanted) / max(len(_words(visible_text(h))), 1), i)
             for i, h in enumerate(h1s)),
            reverse=True,
        )
        if scored[0][0] >= 0.6 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
            return h1s[scored[0][1]]
    if len(h1s) > 1:
        h1s = [
            h for h in h1s if any(a.tag in ("main", "article") for a in h.iterancestors())
        ] or h1s
    if len(h1s) == 1:
        return h1s[0]
    preferred = [
        h for h in h1s
        if h.get("itemprop") == "name" or re.search(r"product|title|name", classes(h), re.I)
    ]
    return preferred[0] if len(preferred) == 1 else None
