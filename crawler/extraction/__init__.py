"""Zero-configuration product extraction, site profiles and link discovery.

Pure functions from a Scrapy response to data; no spider state:

* :func:`extract_product` -- the product of a product detail page, or None;
* :func:`extract` -- the same with the reason a page gave none and the sources that failed;
* :func:`read_listing` -- the listed products (product cards) of a listing page;
* :func:`discover_links` -- the URLs of a page worth following;
* :class:`ProfileRegistry` / :class:`SiteProfile` -- per-site overrides loaded
  from ``crawler/profiles/*.json`` (:data:`PROFILES_DIR`).

See ``docs/extraction.md``.
"""

from __future__ import annotations

from .links import discover_links
from .listing import read_listing
from .product import (
    PRODUCT_FIELDS,
    REJECTED_REASONS,
    Extraction,
    extract,
    extract_product,
    extract_product_from_html,
)
from .profiles import PROFILES_DIR, ProfileError, ProfileRegistry, SiteProfile

__all__ = [
    "PRODUCT_FIELDS",
    "PROFILES_DIR",
    "REJECTED_REASONS",
    "Extraction",
    "ProfileError",
    "ProfileRegistry",
    "SiteProfile",
    "discover_links",
    "extract",
    "extract_product",
    "extract_product_from_html",
    "read_listing",
]
