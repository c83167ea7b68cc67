"""Time per page of one lxml parse, of ``extract_product`` and of ``discover_links``
(the spider's link discovery), printed beside each other by the extraction benchmark."""

from __future__ import annotations

import statistics
import time
from typing import Any

from parsel import Selector
from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract_product


def _median_ms(func: Any, response: HtmlResponse, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        fresh = response.replace(body=response.body)  # a new response: nothing cached
        start = time.perf_counter()
        func(fresh)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs) * 1000


def _lxml_parse(response: HtmlResponse) -> None:
    Selector(text=response.text)  # one lxml parse of the decoded page (parsel's parser)


def _safe_discover(response: HtmlResponse) -> None:
    try:
        discover_links(response)
    except Exception:  # noqa: BLE001 -- counted by the extraction run, timed here only
        pass


def _safe_extract(response: HtmlResponse) -> None:
    try:
        extract_product(response)
    except Exception:  # noqa: BLE001 -- counted by the extraction run, timed here only
        pass


def timings(responses: list[tuple[str, HtmlResponse]], repeat: int) -> list[str]:
    """Median ms of one lxml parse, of ``extract_product`` and of ``discover_links``
    per page (each on a fresh response: decoding and parsing included), beside each other."""
    rows = {
        name: (
            _median_ms(_lxml_parse, response, repeat),
            _median_ms(_safe_extract, response, repeat),
            _median_ms(_safe_discover, response, repeat),
        )
        for name, response in responses
    }
    parse, extract, links = (statistics.median(r[i] for r in rows.values()) for i in range(3))
    slowest = max(rows, key=lambda n: rows[n][1])
    return [
        f"{len(rows)} pages timed, median ms/page: lxml parse {parse:.2f}, "
        f"extract_product {extract:.2f} ({extract / parse:.1f}x the parse), "
        f"discover_links {links:.2f} ({links / parse:.1f}x the parse); "
        f"slowest extraction {rows[slowest][1]:.2f} ms ({slowest})"
    ]
