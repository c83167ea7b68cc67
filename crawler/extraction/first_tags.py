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


def tags_in_order(root: Any, *tags: str) -> Iterator[Any]:
    """``root.iter(*tags)``, the look-ahead for the next match ending at a ``<body>``."""
    for element in root.iter(*tags, "body"):
        if element.tag in tags:
            yield element
