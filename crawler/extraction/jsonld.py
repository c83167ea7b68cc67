"""JSON-LD blocks of a page, each read on its own and leniently.

extruct reads every ``<script type="application/ld+json">`` of a page in one pass
and, when one block does not parse, loses the page's JSON-LD altogether (its
``errors="log"`` drops the whole syntax). Shops write broken blocks beside good
ones (a review widget's, a tracking script's), and wrap good ones the way old
templates wrap scripts. Here each block is read apart, as JSON, then, when that
fails, as a script's JSON would be: without an HTML comment or CDATA wrapper, a
trailing semicolon, JavaScript comments or trailing commas (``jstyleson``, which
extruct uses for comments). A block that still does not parse is skipped and
logged (DEBUG); the others are kept.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import jstyleson
from lxml.etree import _Element

logger = logging.getLogger(__name__)

# What old templates wrap a script's text in: "<!-- ... -->", "//<![CDATA[ ... //]]>",
# and a statement's closing semicolon.
_WRAPPER_START = re.compile(r"^\s*(?:<!--|(?://\s*)?<!\[CDATA\[)\s*")
_WRAPPER_END = re.compile(r"\s*(?:-->|(?://\s*)?\]\]>)?\s*;?\s*$")


def jsonld_items(root: _Element, where: str = "") -> list[Any]:
    """The items of every JSON-LD block of the page (a block holding a list gives its
    items), in document order; ``where`` names the page in the log of a skipped block."""
    items: list[Any] = []
    # lxml's search for the tag in the document, not the XPath ``//script[@type]``
    # (a script without a type is no JSON-LD either): the same elements, faster
    for script in root.getroottree().iter("script"):
        kind = (script.get("type") or "").strip().lower()
        if not kind.startswith("application/ld+json"):
            continue
        data = _loads("".join(script.itertext()))
        if data is None:
            logger.debug("Skipped a JSON-LD block that does not parse on %s", where)
            continue
        items.extend(item for item in (data if isinstance(data, list) else [data]) if item)
    return items


def _loads(text: str) -> Any:
    """The JSON of a block (None: empty, or not JSON even leniently read)."""
    if not text.strip():
        return None
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        pass
    bare = _WRAPPER_END.sub("", _WRAPPER_START.sub("", text, count=1), count=1)
    try:
        return jstyleson.loads(bare, strict=False)
    except Exception:  # noqa: BLE001 -- not JSON even so: skipped, like any bad block
        return None
