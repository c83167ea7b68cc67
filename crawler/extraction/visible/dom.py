"""Elements as a shopper sees them: their visible text, classes, hidden or not."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Final

from lxml import etree
from lxml.etree import _Element

SKIPPED_TAGS = frozenset(
    {"script", "style", "noscript", "template", "option", "select", "textarea", "svg"}
)
# Copies of a text for screen readers only (a price's full amount, a heading's
# "product page" suffix): read by a screen reader, never seen by the shopper.
SCREEN_READER = re.compile(
    r"(?:^|\s)(?:a-offscreen|sr-only|visually-?hidden|visuallyhidden|screen-?reader-?text|"
    r"offscreen)(?:$|\s)",
    re.I,
)

# A style that places its element off the screen for screen readers (the inline form of
# the classes above: far left or top of the page, or clipped to nothing), e.g.
# "position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden".
_OFFSCREEN_STYLE = re.compile(
    r"(?:left|top|text-indent)\s*:\s*-\d{3,}|clip\s*:\s*rect\(\s*[01](?:px)?[\s,]+[01](?:px)?|"
    r"clip-path\s*:\s*inset\(\s*50%",
    re.I,
)


def offscreen_style(style: str) -> bool:
    """An inline style that places its element off the screen (a screen-reader copy:
    class of pages, price boxes that write the whole price for screen readers beside
    its parts shown; the copy is the same price, its twin, not a second one)."""
    return ("-" in style or "clip" in style.lower()) and bool(_OFFSCREEN_STYLE.search(style))


class CachedSearch:
    """A compiled pattern whose ``search`` remembers its result per string (at most
    :attr:`LIMIT` strings, then forgotten at once): for the class attributes and class
    tokens every element of a page is tested against, which repeat across a page and
    across a shop's pages (a search is a pure function of the string; a match object
    is immutable, so sharing it changes nothing)."""

    LIMIT: Final = 4096
    __slots__ = ("pattern", "_found")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self._found: dict[str, re.Match[str] | None] = {}

    def search(self, text: str) -> re.Match[str] | None:
        try:
            return self._found[text]
        except KeyError:
            if len(self._found) >= self.LIMIT:
                self._found.clear()
            found = self._found[text] = self.pattern.search(text)
            return found


def classes(el: _Element) -> str:
    return (el.get("class") or "") + " " + (el.get("id") or "")


def text_of(el: _Element) -> str:
    """``el.text_content()`` (every text node of the element, in document order), about
    twice as fast: libxml2's text serialization instead of an XPath ``string()`` call
    (the same string on every element of the development pages and fixtures); an
    element without children is its text node alone, read as such."""
    if not len(el):
        return el.text or ""
    return etree.tostring(el, method="text", encoding=str, with_tail=False)


def text_at(texts: dict[int, str], pos: int, el: _Element) -> str:
    """:func:`text_of` of ``el``, the element at ``pos`` of a page's walk, read once for
    the page (``texts``: the walk's, :attr:`.index.PageIndex.texts`): the data records
    and the code rows read the text of many of the same blocks."""
    found = texts.get(pos)
    if found is None:
        found = texts[pos] = text_of(el)
    return found


def skip_subtree(walk: Iterator[_Element], el: _Element) -> None:
    """Advance ``walk``, an ``iter(etree.Element)`` that has just given ``el``, past
    the elements of ``el``'s subtree: up to its last element in document order (the
    last element child of its last element child...). Stepping over them costs less
    than a walk that can skip a subtree (``etree.iterwalk``) costs on every element."""
    last = el
    while True:
        for child in last.iterchildren(etree.Element, reversed=True):
            last = child
            break
        else:
            break
    if last is not el:
        for passed in walk:
            if passed is last:
                break


def visible_text(el: _Element) -> str:
    """The text a shopper sees in ``el``, whitespace collapsed ("" for none); an element
    without child nodes is its text node alone (the same string, without the walk)."""
    # normalize_text of a string, "" for None, without its call: most are leaves
    if not len(el):
        text = el.text
        return " ".join(text.split()) if text else ""
    return " ".join(" ".join(visible_strings(el)).split())


def visible_strings(
    el: _Element, skip: Callable[[_Element], bool] | None = None
) -> list[str]:
    """The text of ``el`` and its children in document order, without scripts,
    styles and the like, nor the children ``skip`` says to leave out."""
    out: list[str] = []
    _collect_strings(el, skip, out)
    return out


def _collect_strings(
    el: _Element, skip: Callable[[_Element], bool] | None, out: list[str]
) -> None:
    """Append :func:`visible_strings` of ``el`` to ``out`` (one list for the whole
    subtree; a child without children is read here, without a call of its own)."""
    text = el.text
    if text:
        out.append(text)
    for child in el:
        tag = child.tag
        if isinstance(tag, str) and tag not in SKIPPED_TAGS and (skip is None or not skip(child)):
            if len(child):
                _collect_strings(child, skip, out)
            else:
                text = child.text
                if text:
                    out.append(text)
        tail = child.tail
        if tail:
            out.append(tail)


# Class names that hide an element on every screen (not "hidden-xs": that is one size).
_HIDDEN_CLASSES = frozenset(
    {
        "hidden",
        "hide",
        "d-none",
        "is-hidden",
        "js-hidden",
        "u-hidden",
        "displaynone",
        "display-none",
        "no-display",
        "nodisplay",
        "invisible",
        "unvisible",
        "ng-hide",
        "ng-cloak",
        "x-cloak",
        "hidden-all",
        "modal",  # Bootstrap's dialog: display:none until a script opens it
    }
)


# display:none / visibility:hidden, not "-webkit-backface-visibility:hidden" (a 3-D
# transform setting that hides nothing of a flat page)
_HIDING_STYLE = re.compile(r"(?:^|[;{])(?:display:none|visibility:hidden)(?:!important)?(?:;|$)")


def is_hidden(el: _Element) -> bool:
    return hidden_with_class(el, el.get("class"))


def hidden_with_class(el: _Element, cls: str | None) -> bool:
    """``is_hidden(el)`` when ``cls`` is the element's class attribute, already read."""
    style = el.get("style")
    if el.get("hidden") is not None or (style and _hiding_style(style)):
        return True
    return bool(cls) and _hiding_class(cls)


def _hiding_style(style: str) -> bool:
    """A style attribute hides its element (remembered for short ones: they repeat)."""
    return _short_hiding_style(style) if len(style) <= 200 else _reads_hiding(style)


def _reads_hiding(style: str) -> bool:
    style = style.replace(" ", "").lower()
    # every match holds one of the two declarations: most styles are passed over by two
    # substring scans, not a search that tries its anchors at every position
    return ("display:none" in style or "visibility:hidden" in style) and bool(
        _HIDING_STYLE.search(style)
    )


_short_hiding_style = lru_cache(maxsize=4096)(_reads_hiding)


@lru_cache(maxsize=4096)
def _hiding_class(cls: str) -> bool:
    # a pure function of the class attribute, which repeats across a page
    return not _HIDDEN_CLASSES.isdisjoint(cls.lower().split())


def is_inside(el: _Element, ancestor: _Element) -> bool:
    return any(a is ancestor for a in el.iterancestors())


def links_away(row: _Element) -> bool:
    """The block links to another page (a product's name or image in a listing's row),
    not only to actions of its own (``#``, ``javascript:``, ``mailto:``): by an
    ``<a href>`` or an ``onclick`` that goes to an address."""
    for el in row.iter(etree.Element):
        href = (el.get("href") or "").strip() if el.tag == "a" else ""
        if href and not href.startswith(("#", "javascript:", "mailto:")):
            return True
        if _SCRIPTED_LINK.search(el.get("onclick") or ""):
            return True  # a row scripted as a link ("location.href='/p/42'")
    return False


# An onclick that goes to another page: sets the location or names an address.
_SCRIPTED_LINK = re.compile(r"location|href|https?:|\.html?\b|window\.open", re.I)


def excluded_by_tag(el: _Element, tag: str) -> bool:
    """A nav or aside, or a header/footer outside ``<article>``/``<main>`` (there it is
    the product's own header), unless its class names it the page's or the product's
    own header (``<header class="page-header">``; class: themes without ``<main>`` that
    head the product's block with a ``<header>``)."""
    if tag in ("nav", "aside"):
        return True
    if tag == "header" and _OWN_HEADER.search(el.get("class") or ""):
        return False
    return not any(a.tag in ("main", "article") for a in el.iterancestors())


_OWN_HEADER = re.compile(
    r"(?:page|product|entry|article|item|pdp)[-_]{1,2}(?:header|head|title)", re.I
)
