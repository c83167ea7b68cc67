"""Page typing: is this page a product detail page?

Only product detail pages give a product; category, listing, search, cart,
checkout, account and error pages give none (their links are still followed).

* :func:`is_negative_page` -- a cart, checkout, search, account or error page,
  by its heading or its path: never a product, whatever its markup says.
"""

from __future__ import annotations

import re

_NEGATIVE_HEADING = re.compile(
    r"shopping (?:cart|bag|basket)|your (?:cart|bag|basket)|^(?:cart|basket|bag|checkout)$|"
    r"checkout|search results|results for|wish ?list|sign in|log ?in|my account|"
    r"page not found|\b404\b",
    re.I,
)
_NEGATIVE_PATH = re.compile(
    r"/(?:cart|checkout|basket|search|catalogsearch|wishlist|account|login|my-account)"
    r"(?:/|$|\.)",
    re.I,
)


def is_negative_page(heading: str | None, url_path: str) -> bool:
    """A cart, checkout, search, account or error page, by its heading or its path."""
    return bool((heading and _NEGATIVE_HEADING.search(heading)) or _NEGATIVE_PATH.search(url_path))
