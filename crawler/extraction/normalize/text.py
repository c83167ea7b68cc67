"""Text fields: whitespace collapsed, markup and entities dropped."""

from __future__ import annotations

import re
from typing import Any

from w3lib.html import replace_entities

_BLOCK_TAG = re.compile(
    r"(?i)</?(?:p|br|li|ul|ol|div|h[1-6]|table|tr|td|th|section|article|dl|dt|dd|hr|"
    r"blockquote|pre)\b[^<>]*?/?>"
)
_INLINE_TAG = re.compile(
    r"(?i)</?(?:b|strong|i|em|u|span|a|img|small|sup|sub|font|mark|code|s|del|ins|abbr)"
    r"\b[^<>]*?/?>|<!--.*?-->"
)


def normalize_text(value: Any) -> str | None:
    """Collapse runs of whitespace (including non-breaking spaces) and strip."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value if v is not None)
    # str.split() splits at the characters re's \s matches (str.isspace: the
    # non-breaking space too), without the pattern's cost
    text = " ".join(str(value).split())
    return text or None


def normalize_html_text(value: Any) -> str | None:
    """Like :func:`normalize_text`, for values that may hold markup or entities
    (JSON-LD descriptions often carry the HTML of the description tab)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value if v is not None)
    text = str(value)
    if "<" in text:
        # only real HTML tags: "Quarry <Pro>" is a name, not markup
        text = _BLOCK_TAG.sub(" ", text)
        text = _INLINE_TAG.sub("", text)
    if "&" in text:
        text = replace_entities(text)
    return normalize_text(text)
