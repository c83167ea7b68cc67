"""Elements the page's own stylesheet hides.

A template a shop keeps in the page for scripts ("We're sorry, this item is no
longer available" in ``<div id="oos-banner">``) is often hidden by a rule of the
page's ``<style>`` rather than by an inline style or a class such as ``hidden``:
``#oos-banner { display: none }``. Such an element is not the page a shopper
sees, unless another rule shows it again and matches it
(``.out-of-stock ~ #oos-banner { display: block }`` with a sibling that has that
class). Only top-level rules whose selector is one id or one class count: rules
inside ``@media`` (one screen size) and compound selectors that hide are not read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from cssselect import SelectorError
from lxml.cssselect import CSSSelector
from lxml.etree import XPathError, _Element

from .css_match import element_test

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_DISPLAY = re.compile(r"(?<![\w-])display\s*:\s*([\w-]+)", re.I)
_SIMPLE = re.compile(r"^[#.]-?[_a-zA-Z][\w-]*$")
_MAX_CSS = 2_000_000
# Elements carrying one hidden #id/.class asked the showing rules one by one (about
# 10 us a rule each; matching a rule in the whole page costs 0.5-1.3 ms on a large one)
_ASKED_ALONE = 32


def _rules(css: str, word: str = "") -> list[tuple[str, str]]:
    """(selector list, declarations) of the top-level rules (not those in ``@media``)
    whose declarations hold ``word`` (every one for "").

    Read piece by piece between closing braces (``str.split``, ``str.count``): a
    shop's stylesheet is read on its first page, ~100 KB of it, twice as fast as
    brace by brace. A piece with one ``{`` at depth 0 (``.a { color: red``, most of
    a stylesheet) is a whole top-level rule, passed over unless it holds ``word``
    (the stylesheets of both development sets, 9 MB, are read for their ``display``
    rules in 44 ms instead of 59). The same pairs as a walk over every brace that
    keeps the depth (never below 0: a stray ``}`` closes nothing) and the last
    top-level selector and body."""
    out: list[tuple[str, str]] = []
    depth, body, selector = 0, 0, ""
    # the last whole top-level rule passed over (its text and start) since a block
    # opened at depth 0: its selector is the last top-level one (a stray "}" reuses it)
    passed, passed_at = "", 0
    at = 0  # where the piece starts, after the last "}"
    for piece in css.split("}")[:-1]:  # each piece before a "}" (the last closes nothing)
        opens = piece.count("{")
        if opens == 1 and depth == 0:
            if word in piece:
                brace = piece.index("{")
                text, selector = piece[brace + 1 :], piece[:brace].strip()
                if word in text and selector and not selector.startswith("@"):
                    out.append((selector, text))
            passed, passed_at = piece, at
            at += len(piece) + 1
            continue
        end = at + len(piece)  # the piece's closing "}"
        if opens and depth == 0:  # the piece's first "{" opens a top-level block
            passed, brace = "", piece.index("{")
            selector, body = piece[:brace].strip(), at + brace + 1
        elif depth == 0 and passed:  # a stray "}" after a whole rule
            brace = passed.index("{")
            selector, body = passed[:brace].strip(), passed_at + brace + 1
            passed = ""
        depth += opens
        depth = depth - 1 if depth else 0
        if depth == 0 and selector and not selector.startswith("@"):
            text = css[body:end]
            if word in text:
                out.append((selector, text))
        at = end + 1
    return out


class StyleHiding:
    """Which elements a top-level ``#id``/``.class { display: none }`` rule of the
    page's ``<style>`` hides with no rule that shows them matching, asked element by
    element during the page walk (:meth:`hides`), so that no element gets a Python
    object before the walk makes it (making one costs time, and with lxml.html's
    parser a class lookup in Python). Whether a rule that shows elements again
    matches a hidden one is asked of the element (:meth:`_shown_again`)."""

    def __init__(self, root: _Element) -> None:
        self._root = root
        css = " ".join(
            s.text or ""
            for s in root.iter("style")
            if (s.get("media") or "all").strip().lower() in ("all", "screen", "")
        )[:_MAX_CSS]
        rules = _display_rules(css)
        #: The ``#id``/``.class`` selectors a rule hides (empty: nothing is hidden).
        self.hiding = rules.hiding
        #: the ids a rule hides (``None`` is none of them)
        self.ids: frozenset[str | None] = rules.ids
        self._classes, self._showing, self._showing_named = (
            rules.classes, rules.showing, rules.showing_named
        )
        self._shown: dict[str, set[_Element] | None] = {}
        self._asked: dict[str, int] = {}

    def names_class(self, cls: str) -> bool:
        """A class of the class attribute ``cls`` is one a rule hides."""
        return not self._classes.isdisjoint(cls.split())

    def hides(self, el: _Element, cls: str | None, ident: str | None) -> bool:
        """``el`` (class attribute ``cls``, id ``ident``) is hidden by a rule."""
        hiding = self.hiding
        names: list[str] = []
        if ident is not None and "#" + ident in hiding:
            names.append("#" + ident)
        if cls:
            names += ["." + name for name in cls.split() if name in self._classes]
        return any(not self._shown_again(el, simple) for simple in names)

    def _shown_again(self, el: _Element, simple: str) -> bool:
        """A rule that shows ``el`` again matches it, or one cannot be evaluated (it
        may): the rule of ``simple`` that hides ``el`` does not hide it. Each showing
        rule is asked of ``el`` alone (:mod:`.css_match`) for the first few elements
        that carry ``simple``; then, or when a rule cannot be asked so, the elements
        each rule matches are found in the whole page, once."""
        showing = self._showing_named.get(simple)
        if showing is None:
            showing = self._showing_named[simple] = [
                s for s in self._showing if _names(s, simple)
            ]
        asked = self._asked[simple] = self._asked.get(simple, 0) + 1
        if simple not in self._shown and asked <= _ASKED_ALONE:
            tests = [test for s in showing if (test := element_test(s)) is not None]
            if len(tests) == len(showing):
                return any(test(el) for test in tests)
        if simple not in self._shown:
            self._shown[simple] = _matching(showing, self._root)
        shown = self._shown[simple]
        return shown is None or el in shown


class _DisplayRules(NamedTuple):
    """The ``display`` rules of a page's style text (:func:`_display_rules`)."""

    #: the ``#id``/``.class`` selectors a rule hides
    hiding: frozenset[str]
    #: the ids and the class names among them (``#a``: ``a``)
    ids: frozenset[str | None]
    classes: frozenset[str]
    #: the selectors a rule shows, each once (a stylesheet repeats some, and each one
    #: a hidden element's class or id names is matched against it: :meth:`StyleHiding._shown_again`)
    showing: tuple[str, ...]
    #: the showing selectors that name each hidden one, filled by :meth:`StyleHiding.hides`
    showing_named: dict[str, list[str]]


@lru_cache(maxsize=8)  # keyed by whole stylesheets (up to 2 MB each)
def _display_rules(css: str) -> _DisplayRules:
    """The ``display`` rules of the page's style text ``css``: a shop serves the same
    stylesheet on every page, so it is read once."""
    css = _COMMENT.sub(" ", css)
    if "display" not in css:
        return _DisplayRules(frozenset(), frozenset(), frozenset(), (), {})
    hiding: set[str] = set()
    showing: list[str] = []
    for selectors, body in _rules(css, "display"):
        match = _DISPLAY.search(body)
        if not match:
            continue
        for selector in (s.strip() for s in selectors.split(",")):
            if match.group(1).lower() == "none":
                if _SIMPLE.match(selector):
                    hiding.add(selector)
            else:
                showing.append(selector)
    return _DisplayRules(
        frozenset(hiding),
        frozenset(simple[1:] for simple in hiding if simple.startswith("#")),
        frozenset(simple[1:] for simple in hiding if simple.startswith(".")),
        tuple(dict.fromkeys(showing)),
        {},
    )


def _names(selector: str, simple: str) -> bool:
    """The selector's subject part names ``simple`` (``.x ~ #id``, ``#id.open``): it
    holds ``simple`` followed by no word character nor ``-`` (a word character of a
    ``str`` pattern is one that ``isalnum()``, or ``_``). Found by substring search, not a pattern
    compiled for each hidden name: a shop's first page met every name first."""
    at = selector.find(simple)
    while at >= 0:
        end = at + len(simple)
        if end == len(selector) or not (selector[end].isalnum() or selector[end] in "_-"):
            return True
        at = selector.find(simple, at + 1)
    return False


def _matching(selectors: list[str], root: _Element) -> set[_Element] | None:
    """The elements the selectors match; None when one cannot be evaluated."""
    out: set[_Element] = set()
    for selector in selectors:
        try:
            out.update(_compiled(selector)(root))
        except (SelectorError, XPathError, ValueError):
            # a selector lxml cannot evaluate (":hover", "::before"): it may show the element
            return None
    return out


@lru_cache(maxsize=1024)
def _compiled(selector: str) -> CSSSelector:
    """A selector translated to XPath once (raises as ``CSSSelector`` does)."""
    return CSSSelector(selector)
