"""Identifiers: GTINs (digits of a valid length) and SKU/MPN-like codes."""

from __future__ import annotations

import re
from typing import Any

from .text import normalize_text

_GTIN_LENGTHS = (8, 12, 13, 14)


def normalize_gtin(value: Any) -> str | None:
    """Digits only, and only GTIN-8, UPC-12, EAN-13 or GTIN-14 lengths."""
    if isinstance(value, (list, tuple)):
        for item in value:
            found = normalize_gtin(item)
            if found:
                return found
        return None
    if value is None or isinstance(value, (dict, bool)):
        return None
    text = str(value).strip()
    if isinstance(value, float) or re.search(r"[A-Za-z]", text.split(":")[-1]):
        return None
    digits = re.sub(r"\D", "", text.split(":")[-1])
    return digits if len(digits) in _GTIN_LENGTHS else None


def normalize_identifier(value: Any) -> str | None:
    """A SKU/MPN-like code: a short single-line string."""
    if isinstance(value, (list, tuple)):
        value = next((v for v in value if v not in (None, "")), None)
    if isinstance(value, bool) or isinstance(value, dict):
        return None
    text = normalize_text(value)
    if not text or len(text) > 100:
        return None
    return text
