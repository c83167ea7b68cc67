"""Whether one element matches a CSS selector, asked of the element itself.

lxml's ``CSSSelector`` finds every element of a page that a selector matches: an
XPath that walks the whole tree (0.5-1.3 ms on a large page, for each selector). To
know whether an element hidden by a stylesheet's ``display: none`` is shown again
by another rule (:mod:`.stylesheet`), only that element is asked: the selector's
XPath read right to left, from the element (:func:`element_test`). ``A B`` matches
an element that matches ``B`` and has an ancestor that matches ``A``; ``A > B``,
``A ~ B`` and ``A + B`` its parent, a preceding sibling and the nearest preceding
sibling. Each compound selector's test is cssselect's own (lxml's translator), with
the element as its context, as in the page's XPath. A selector whose test could
read otherwise (a position in a node set, a namespace prefix, a pseudo-element)
gets none, and is matched against the whole page as before.
"""

from __future__ import annotations

import re
from functools import lru_cache

import cssselect
from cssselect.parser import CombinedSelector
from lxml import etree
from lxml.cssselect import LxmlTranslator

_TRANSLATOR = LxmlTranslator()
# The axis from an element to the one the left side of a combinator must match.
_AXES = {
    " ": "ancestor::*",
    ">": "parent::*",
    "~": "preceding-sibling::*",
    "+": "preceding-sibling::*[1]",
}
_LITERALS = re.compile(r"'[^']*'|\"[^\"]*\"")
_PREFIX = re.compile(r"(?<!:):(?!:)")  # a "ns:name" colon, not an axis's "::"


@lru_cache(maxsize=1024)
def element_test(selector: str) -> etree.XPath | None:
    """An XPath whose value at an element is whether ``selector`` matches it; None
    when the selector's test cannot be written from the element (see the module doc)
    or it does not parse (lxml's ``CSSSelector`` then says why)."""
    try:
        (parsed,) = cssselect.parse(selector)
        if parsed.pseudo_element is not None:
            return None
        predicate = _predicate(parsed.parsed_tree)
        return None if predicate is None else etree.XPath(f"boolean({predicate})")
    except Exception:  # noqa: BLE001 -- any selector cssselect or lxml refuses
        return None


def _predicate(tree: object) -> str | None:
    """The test of ``tree`` (a parsed selector) with the element as its context."""
    if isinstance(tree, CombinedSelector):
        axis = _AXES.get(tree.combinator)
        right, left = _predicate(tree.subselector), _predicate(tree.selector)
        if axis is None or right is None or left is None:
            return None
        return f"({right}) and {axis}[{left}]"
    expr = _TRANSLATOR.xpath(tree)  # type: ignore[arg-type]
    condition = expr.condition
    bare = _LITERALS.sub("", condition)
    if expr.path or ":" in expr.element or "position()" in bare or "last()" in bare:
        return None
    if _PREFIX.search(bare):
        return None
    return f"self::{expr.element}[{condition}]" if condition else f"self::{expr.element}"
