"""Whole shops read page by page, and read as a crawl reads them: with the evidence of
the shop's other pages (:mod:`crawler.extraction.evidence`) beside one page at a time.

For each shop of the demo (the default shop and the generated ones of
:mod:`demoshop.generated`), the pages are read in the order a crawl meets them (from
the home page, breadth first, products first as the spider's priorities put them),
in process, twice: one by one, and with the site's evidence as the spider's store
keeps it (a page the evidence could settle, met while the site's evidence is young,
is read again at the end, as the spider re-queues it). Printed per shop and mode:
products stored of those expected, each field right (name, price, currency, stock,
SKU), listing pages taken for products, pages read again.

For the shared development sets (``--pages``), each shop's pages (grouped by host) are
read in sequence with the evidence of those before them, and scored as
:mod:`benchmarks.extraction_accuracy` scores them, beside the one-by-one score.

    python -m benchmarks.extraction_sites
    python -m benchmarks.extraction_sites --pages ../shared/product-pages-intl
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict, deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract
from crawler.extraction.evidence import SiteEvidence
from crawler.extraction.links import looks_like_product

BASE = "http://127.0.0.1:8000"
FIELDS = ("name", "price", "currency", "availability", "sku")


def shops(products: int) -> Iterator[tuple[str, Any, Any]]:
    """(name, the router, the shop's own account of its pages) of each demo shop."""
    from demoshop.catalog import Catalog
    from demoshop.generated import KINDS, build
    from demoshop.site import ShopSite

    catalog = Catalog.build(products=products)
    yield "default", ShopSite(catalog), catalog
    for kind in KINDS:
        shop = build(kind, Catalog.build(products=products))
        yield kind, shop, shop


def crawl(site: Any, evidence: bool) -> tuple[dict[str, dict[str, Any]], Counter[str]]:
    """The products a crawl of the shop stores ({url: product}) and its counts."""
    known = SiteEvidence() if evidence else None
    seen = {BASE + "/"}
    queue: deque[str] = deque([BASE + "/"])
    deferred: list[str] = []
    stored: dict[str, dict[str, Any]] = {}
    counts: Counter[str] = Counter()
    again: set[str] = set()
    while queue or deferred:
        if not queue:
            queue.extend(deferred)
            again.update(deferred)
            deferred.clear()
        url = queue.popleft()
        page = site.resolve("GET", url[len(BASE):])
        if page.status != 200 or not page.head.startswith(b"HTTP/1.1 200"):
            continue
        if b"text/html" not in page.head:
            continue
        response = HtmlResponse(url=url, body=page.body, encoding="utf-8")
        result = extract(response, site=known)
        counts["pages"] += 1
        if known is not None and result.evidence is not None:
            known.add(result.evidence.counts())
            if result.uncertain and not known.mature and url not in again:
                deferred.append(url)
                counts["read again"] += 1
                result.product = None
        if result.product is not None:
            stored[result.product["url"]] = result.product
        links = discover_links(response)
        for link in sorted(links, key=lambda u: not looks_like_product(u)):
            if link not in seen:
                seen.add(link)
                queue.append(link)
    return stored, counts


def score_shop(account: Any, stored: dict[str, dict[str, Any]], counts: Counter[str]) -> str:
    expected = account.expected_products(BASE)
    right = Counter()
    for url, want in expected.items():
        got = stored.get(url)
        if got is None:
            continue
        for field in FIELDS:
            right[field] += got.get(field) == want.get(field)
    taken = len(set(stored) - set(expected))
    fields = " ".join(f"{f} {right[f]}" for f in FIELDS)
    return (
        f"stored {len(set(stored) & set(expected))}/{len(expected)}; right: {fields}; "
        f"listing pages taken {taken}; pages {counts['pages']}, read again "
        f"{counts['read again']}"
    )


def run_shops(products: int) -> list[str]:
    lines = []
    for name, site, account in shops(products):
        for mode, evidence in (("page by page", False), ("with site evidence", True)):
            stored, counts = crawl(site, evidence)
            lines.append(f"{name:<12} {mode:<19} {score_shop(account, stored, counts)}")
    return lines


def run_sets(folder: Path) -> list[str]:
    from .extraction_accuracy import F1_FIELDS, load_folder, load_sku_truth
    from .extraction_f1 import f1_lines, score_pages

    cases = [c for c in load_folder(folder, "all", load_sku_truth()) if c[2] is not None]
    by_site: dict[str, list[Any]] = defaultdict(list)
    for case in cases:
        by_site[urlsplit(case[1].url).hostname or ""].append(case)
    fields = [f for f in F1_FIELDS if f in ("price", "sku", "availability")]
    lines = [f"{folder}: {len(cases)} product pages of {len(by_site)} sites"]
    for mode in ("page by page", "in sequence, with site evidence"):
        scored = []
        for group in by_site.values():
            known = SiteEvidence() if mode != "page by page" else None
            for name, response, truth in group:
                result = extract(response, site=known)
                if known is not None and result.evidence is not None:
                    known.add(result.evidence.counts())
                scored.append((name, result.product, truth))
        scores, _ = score_pages(scored, fields)
        lines.append(mode)
        lines += f1_lines(scores)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=int, default=300, help="products of each demo shop")
    parser.add_argument("--pages", type=Path, action="append", default=[],
                        help="a development set to read shop by shop (repeatable)")
    args = parser.parse_args(argv)
    if args.pages:
        for folder in args.pages:
            print("\n".join(run_sets(folder)))
    else:
        print("\n".join(run_shops(args.products)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
