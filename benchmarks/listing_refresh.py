"""Listed products: cards per listing page, CPU per listing page beside a product page's
extraction, and requests per refreshed product (issue 43, point 5).

The listing pages are those of the generated shops ``card-layouts`` (cards in four
layouts, 20 to 40 a page) and ``plain-lists`` (1 to 60 a page), and the project's own
non-product pages (test fixtures, the demo shop) that the extractor types as listings.
For each, the CPU time (``time.process_time``, median of ``--repeat`` runs on a fresh
response: decoding and parsing included) of what a worker does on it: the extraction
that types it and :func:`crawler.extraction.read_listing`; beside it, the median CPU
time of the extraction of the same shops' product pages. The median page has a card or
two; a category page shows 20 or more, so those pages are also measured as each page's
CPU over one lxml parse of it (as :mod:`benchmarks.extraction_timing` measures: the
parse's cost grows with the page), beside a product page's extraction over its parse.
Requests per refreshed product: what ``recrawl --listings`` would queue for the
``card-layouts`` shop (its listing pages, and the page of every product whose card
lacks a price or a stock state), over the products its listings refresh (the e2e test
``tests/e2e/test_listing_refresh.py`` counts the real requests in the shop's access log).

    python -m benchmarks.listing_refresh [--repeat 5]

Timings on a shared machine are noisy: the ratio of the two medians is the figure.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scrapy.http import HtmlResponse

from benchmarks.extraction_timing import _lxml_parse
from crawler.extraction import extract, read_listing
from demoshop.catalog import Catalog
from demoshop.generated import GeneratedShop, build

BASE = "http://127.0.0.1:8000"


def _response(url: str, body: bytes) -> HtmlResponse:
    return HtmlResponse(url=url, body=body, encoding="utf-8")


def _cpu_ms(run: Callable[[HtmlResponse], Any], url: str, body: bytes, repeat: int) -> float:
    """The median CPU ms of ``run`` on a fresh response of the page (parse included)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run(_response(url, body))
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def shop_pages(shop: GeneratedShop) -> Iterator[tuple[str, bytes, bool]]:
    """(url, body, is a product page) of every page of a generated shop."""
    for path in sorted(shop.crawlable_paths()):
        page = shop.resolve("GET", path)
        if page.status == 200:
            yield BASE + path, page.body, path in shop.product_paths()


def fixture_listings() -> Iterator[tuple[str, bytes]]:
    from benchmarks.extraction_accuracy import negative_cases

    for _, response, _ in negative_cases():
        yield response.url, response.body


def requests_per_refreshed(shop: GeneratedShop) -> tuple[int, int, float]:
    """(requests, products refreshed, ratio) of a refresh from the shop's listings."""
    listing_pages = 0
    shown: dict[str, set[str]] = {}
    for url, body, is_product in shop_pages(shop):
        if is_product:
            continue
        cards = read_listing(_response(url, body))
        if not cards:
            continue
        listing_pages += 1
        for card in cards:
            fields = {k for k in ("price", "availability") if card[k] is not None}
            shown.setdefault(card["url"], set()).update(fields)
    lacking = sum(1 for fields in shown.values() if fields != {"price", "availability"})
    requests = listing_pages + lacking
    return requests, len(shown), requests / len(shown) if shown else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per page (median)")
    parser.add_argument("--products", type=int, default=300, help="products of each shop")
    parser.add_argument(
        "--pages", type=Path, default=None,
        help="a folder of saved product pages (as the accuracy benchmark's): their "
        "extraction's median too, real product pages being larger than the shops'",
    )
    args = parser.parse_args(argv)
    catalog = Catalog.build(products=args.products)
    shops = [build("card-layouts", catalog), build("plain-lists", catalog)]
    listing_ms: list[float] = []
    product_ms: list[float] = []
    # each page's CPU over one lxml parse of it (the extraction benchmarks' measure): a
    # product page's extraction, a listing page's of 20 cards or more
    product_x: list[float] = []
    large_x: list[float] = []
    cards_per_page: list[int] = []
    pages: list[tuple[str, bytes, bool]] = [p for shop in shops for p in shop_pages(shop)]
    pages += [(url, body, False) for url, body in fixture_listings()]
    for url, body, is_product in pages:
        if is_product:
            product_ms.append(_cpu_ms(extract, url, body, args.repeat))
            product_x.append(product_ms[-1] / _cpu_ms(_lxml_parse, url, body, args.repeat))
            continue
        cards = read_listing(_response(url, body))
        if not cards:
            continue  # no listing (a home page, a cart page)
        cards_per_page.append(len(cards))
        listing_ms.append(_cpu_ms(read_listing, url, body, args.repeat))
        if len(cards) >= 20:
            large_x.append(listing_ms[-1] / _cpu_ms(_lxml_parse, url, body, args.repeat))
    requests, refreshed, ratio = requests_per_refreshed(shops[0])
    listing, product = statistics.median(listing_ms), statistics.median(product_ms)
    large = [ms for ms, n in zip(listing_ms, cards_per_page, strict=True) if n >= 20]
    print(
        f"listing pages: {len(cards_per_page)}, listed products per listing page: median "
        f"{statistics.median(cards_per_page):g} (mean {statistics.mean(cards_per_page):.1f}, "
        f"{min(cards_per_page)} to {max(cards_per_page)})"
    )
    print(
        f"CPU ms per listing page (extract + read_listing): median {listing:.2f}; a product "
        f"page's extraction ({len(product_ms)} pages): median {product:.2f}; "
        f"ratio {listing / product:.2f}x (target <= 2x); pages of 20 cards or more "
        f"({len(large)}): median {statistics.median(large):.2f}"
    )
    print(
        f"pages of 20 cards or more, per page CPU over one lxml parse of it: median "
        f"{statistics.median(large_x):.1f}x ({min(large_x):.1f}x to {max(large_x):.1f}x); "
        f"a product page's extraction: median {statistics.median(product_x):.1f}x "
        f"({min(product_x):.1f}x to {max(product_x):.1f}x); ratio "
        f"{statistics.median(large_x) / statistics.median(product_x):.2f}x (target <= 2x)"
    )
    if args.pages is not None:
        from benchmarks.extraction_accuracy import load_folder

        real = [
            _cpu_ms(extract, response.url, response.body, args.repeat)
            for _, response, _ in load_folder(args.pages)
        ]
        print(
            f"a product page's extraction, {args.pages.name} ({len(real)} pages): median "
            f"{statistics.median(real):.2f}; listing pages of 20 cards or more: "
            f"{statistics.median(large) / statistics.median(real):.2f}x"
        )
    print(
        f"requests per refreshed product (card-layouts, {args.products} products): "
        f"{requests} requests for {refreshed} products = {ratio:.3f} (robots.txt aside)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
