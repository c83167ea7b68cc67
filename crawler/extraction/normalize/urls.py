"""URLs: absolute http(s) addresses, and the images of a product."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import urljoin, urlsplit

from w3lib.url import safe_url_string

from .text import normalize_text

# The addresses ``urljoin`` gives back as they are, once its base's scheme and host are
# put before one from the root: a path from the root (no dot segment, no parameters:
# ";") with or without a query, no fragment, none of the characters urlsplit strips or
# removes (controls, spaces); or an absolute http(s) address of that kind (a host of
# ASCII letters, digits, dots, a port: no userinfo, no IPv6 or non-ASCII host, which
# urlsplit checks).
_PATH_QUERY = r"[^?#;\\\x00-\x20\x7f]*(?:\?[^#\x00-\x20\x7f]+)?"
_ROOTED = re.compile(r"/(?!/)" + _PATH_QUERY)
_ABSOLUTE = re.compile(r"https?://[A-Za-z0-9.:_~-]+(?:/" + _PATH_QUERY + ")?")


def join_url(base: str, href: str) -> str:
    """``urllib.parse.urljoin(base, href)``, for the common addresses of a page's links
    (above) without parsing both: a listing page joins two for each card."""
    origin = _origin(base)
    if origin is not None and "/." not in href:
        if _ROOTED.fullmatch(href):
            return origin + href
        if _ABSOLUTE.fullmatch(href):
            return href  # (another scheme than the base's: as it is; the same: rebuilt alike)
    return urljoin(base, href)


@lru_cache(maxsize=256)
def _origin(base: str) -> str | None:
    """``scheme://host`` of an http(s) base address, as ``urljoin`` writes it, else None."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https"):
        return None
    return f"{parts.scheme}://{parts.netloc}"


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
