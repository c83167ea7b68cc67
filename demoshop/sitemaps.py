"""The demo shop's sitemaps: robots.txt ``Sitemap:``, an index, gzip'd children with lastmod.

``/robots.txt`` names ``/sitemap_index.xml``, a sitemap index of the children
``/sitemaps/products-<n>.xml.gz`` (gzip'd, :data:`PRODUCTS_PER_SITEMAP` product
URLs each, with their ``<lastmod>``). Only product pages are listed, the
sitemap-only ones included (``--sitemap-only``).

``lastmod``: :data:`BASE_LASTMOD` for a product as it is at ``--price-version 0``;
a product whose price or stock differs in the shop's price version from version 0
was modified when this shop started (``changed_at``, an ISO time), so a crawl
made before knows from the sitemaps which products changed.
"""

from __future__ import annotations

import gzip
from html import escape

from demoshop.catalog import Catalog

PRODUCTS_PER_SITEMAP = 100
INDEX_PATH = "/sitemap_index.xml"
BASE_LASTMOD = "2026-01-01T00:00:00+00:00"
_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def child_path(number: int) -> str:
    return f"/sitemaps/products-{number}.xml.gz"


def sitemap_paths(catalog: Catalog) -> set[str]:
    """The index and its children: what a crawler reading sitemaps fetches besides pages."""
    count = -(-len(catalog.products) // PRODUCTS_PER_SITEMAP)
    return {INDEX_PATH, *(child_path(n) for n in range(1, count + 1))}


def is_sitemap_path(path: str) -> bool:
    """``/sitemap_index.xml``, a child, or the ``/sitemap.xml`` a crawler may guess."""
    return path in (INDEX_PATH, "/sitemap.xml") or path.startswith("/sitemaps/")


def changed_products(catalog: Catalog) -> set[int]:
    """Ids of the products whose price or stock differ from the shop's version 0."""
    if not catalog.price_version:
        return set()
    first = Catalog.build(
        products=len(catalog.products), seed=catalog.seed, page_size=catalog.page_size
    )
    return {
        now.id
        for now, then in zip(catalog.products, first.products, strict=True)
        if (now.price, now.availability) != (then.price, then.availability)
    }


def render(catalog: Catalog, base_url: str, changed_at: str) -> dict[str, bytes]:
    """Path -> body of the index and of every child (children gzip'd, mtime 0)."""
    base = base_url.rstrip("/")
    changed = changed_products(catalog)
    bodies: dict[str, bytes] = {}
    children = []
    products = catalog.products
    for number, start in enumerate(range(0, len(products), PRODUCTS_PER_SITEMAP), start=1):
        entries = "".join(
            f"<url><loc>{escape(base + p.path)}</loc>"
            f"<lastmod>{changed_at if p.id in changed else BASE_LASTMOD}</lastmod></url>\n"
            for p in products[start : start + PRODUCTS_PER_SITEMAP]
        )
        xml = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {_NS}>\n{entries}</urlset>\n'
        bodies[child_path(number)] = gzip.compress(xml.encode(), mtime=0)
        lastmod = max(
            (changed_at if p.id in changed else BASE_LASTMOD)
            for p in products[start : start + PRODUCTS_PER_SITEMAP]
        )
        children.append(
            f"<sitemap><loc>{escape(base + child_path(number))}</loc>"
            f"<lastmod>{lastmod}</lastmod></sitemap>\n"
        )
    index = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {_NS}>\n'
        f"{''.join(children)}</sitemapindex>\n"
    )
    bodies[INDEX_PATH] = index.encode()
    return bodies
