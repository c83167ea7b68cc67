"""Tag paths that name one element of a site's pages, the same on every page built from
the same template (:mod:`crawler.extraction.evidence`).

A path runs from the nearest ancestor with a stable id (an id without digits, which
a template writes the same on every page) or from ``<body>``, one step per element:
its tag and its rank among its parent's children of that tag ("#buybox/p[1]",
"body/div[2]/div[1]/span[3]").
"""

from __future__ import annotations

from lxml import etree
from lxml.etree import _Element

_MAX_STEPS = 24


def _stable_id(el: _Element) -> str | None:
    ident = el.get("id")
    if ident and len(ident) <= 40 and not any(ch.isdigit() for ch in ident) and "/" not in ident:
        return ident
    return None


def element_path(el: _Element) -> str:
    """The path of ``el`` (see the module doc); "" for an element above ``<body>``."""
    steps: list[str] = []
    node: _Element | None = el
    while node is not None and len(steps) <= _MAX_STEPS:
        tag = node.tag
        if not isinstance(tag, str) or tag in ("html", "head"):
            return ""
        if tag == "body":
            steps.append("body")
            break
        ident = _stable_id(node)
        if ident is not None:
            steps.append(f"#{ident}")
            break
        parent = node.getparent()
        rank = 1 + sum(1 for _ in node.itersiblings(tag, preceding=True))
        steps.append(f"{tag}[{rank}]")
        node = parent
    return "/".join(reversed(steps))


_BY_ID = etree.XPath("//*[@id=$ident]")


def element_at(root: _Element, path: str) -> _Element | None:
    """The element at ``path`` in the page whose tree is ``root``, or None."""
    if not path:
        return None
    first, *steps = path.split("/")
    node: _Element | None
    if first == "body":
        node = next(root.iter("body"), None)
    elif first.startswith("#"):
        found = _BY_ID(root, ident=first[1:])
        node = found[0] if len(found) == 1 else None
    else:
        return None
    for step in steps:
        if node is None:
            return None
        tag, _, rank = step.partition("[")
        try:
            wanted = int(rank.rstrip("]"))
        except ValueError:
            return None
        children = [c for c in node.iterchildren(tag)]
        node = children[wanted - 1] if 0 < wanted <= len(children) else None
    return node
