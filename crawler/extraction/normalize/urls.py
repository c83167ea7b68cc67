"""URLs: absolute http(s) addresses, and the images of a product."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

from w3lib.url import safe_url_string

from .text import normalize_text


def absolute_url(value: Any, base_url: str) -> str | None:
    """An absolute http(s) URL, or None (data: URIs, javascript: ...)."""
    text = normalize_text(value)
    if not text:
        return None
    try:
        url = safe_url_string(urljoin(base_url, text))
        if urlsplit(url).scheme not in ("http", "https"):
            return None
    except ValueError:  # malformed (e.g. "http://[broken")
        return None
    return url


def normalize_images(values: Any, base_url: str) -> list[str]:
    """Absolute, de-duplicated image URLs from strings, lists or ImageObjects."""
    found: list[str] = []
    stack = values if isinstance(values, (list, tuple)) else [values]
    for value in stack:
        if isinstance(value, dict):
            value = value.get("contentUrl") or value.get("url") or value.get("@id")
            if isinstance(value, list):
                value = value[0] if value else None
        if not isinstance(value, str):
            continue
        url = absolute_url(value, base_url)
        if url and url not in found:
            found.append(url)
    return found
