"""Elements of some tags in document order, by lxml's C-level search for them, for the
readers that stop at the first they want: a page's ``<title>``, its canonical
``<link>``, a ``<meta>``, its ``<head>``.

lxml's iterator finds the next match before it yields one: ``next(root.iter("title"))``
walks the whole page after the one ``<title>`` of its head, looking for another (a
walk of every element: a hundredth of the page's parse, each time). The search here
also stops at each ``<body>``, which it passes over: a reader that stops at an element
of the head walks no further than the start of the body, and one that reads on gets
the same elements, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lxml import etree


def tags_in_order(root: Any, *tags: str) -> Iterator[Any]:
    """``root.iter(*tags)``, the look-ahead for the next match ending at a ``<body>``."""
    for element in root.iter(*tags, "body"):
        if element.tag in tags:
            yield element


def first_descendant(root: Any, tag: str) -> Any:
    """``next(root.iterdescendants(tag), None)``, its look-ahead kept inside the child of
    ``root`` that holds the match (the ``<head>`` for a ``<title>``; none for the
    ``<body>``, a child of the root itself): the first match in document order, each
    child of the root coming before its descendants and after the subtrees of the
    children before it."""
    for child in root.iterchildren(etree.Element):
        if child.tag == tag:
            return child
        found = next(child.iterdescendants(tag), None)
        if found is not None:
            return found
    return None
