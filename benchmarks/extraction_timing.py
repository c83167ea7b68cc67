"""Time per page of one lxml parse, of ``extract_product`` and of ``discover_links``
(the spider's link discovery), printed beside each other by the extraction benchmark,
with warm caches and at first sight.

Times are the process's CPU time (``time.process_time``): on a machine shared with
other work, wall-clock medians moved by a factor of two between runs (the parse's
median from 4 to 9 ms), CPU time much less. Each page's cost is also given as a
multiple of one lxml parse of that page (its warm median: a parse has no cache to
fill; at first sight, timed right after the page in the same process, so that both
run under the same load), and the median and 90th percentile of those ratios are
printed.

* **warm**: the median of ``repeat`` runs on the page (fresh responses: decoding and
  parsing included), in the benchmark's process, whose caches hold what the page's
  earlier runs and the other pages left (class strings, labels, stylesheets...): the
  second page of a shop;
* **first sight** (cold): as a crawl of many shops meets the first page of each, in
  a worker that has long imported the extractor: a new process (``python -m
  benchmarks.extraction_timing --first-sight DIR``) imports the extractor, loads
  the pages (reading files only) and runs ``extract_product`` once on each page, in
  order, timing each: nothing of a page's shop was seen before it (the development
  set has one page per shop; the international set's 58 pages are of 35 shops, a
  few of them met a second time), while the earlier pages have warmed what any page warms
  (lazy imports, regexes compiled on first use, the interpreter's own caches).
  Medians over ``runs`` such processes per page. What the extractor does at import
  (compiling its patterns...) is not counted: a worker pays it once, not per shop;
  nor is extruct's import, which a worker makes on its first page with microdata or
  OpenGraph (:func:`crawler.extraction.structured.load_extruct`), once too.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from parsel import Selector
from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract_product

#: {page: CPU ms}
Times = dict[str, float]


def _median_ms(func: Any, response: HtmlResponse, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        fresh = response.replace(body=response.body)  # a new response: nothing cached
        start = time.process_time()
        func(fresh)
        runs.append(time.process_time() - start)
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


def warm_times(
    responses: list[tuple[str, HtmlResponse]], repeat: int
) -> tuple[Times, Times, Times]:
    """(lxml parse, ``extract_product``, ``discover_links``): each page's median CPU ms
    over ``repeat`` runs (each on a fresh response: decoding and parsing included)."""
    parse: Times = {}
    extract: Times = {}
    links: Times = {}
    for name, response in responses:
        parse[name] = _median_ms(_lxml_parse, response, repeat)
        extract[name] = _median_ms(_safe_extract, response, repeat)
        links[name] = _median_ms(_safe_discover, response, repeat)
    return parse, extract, links


def ratios(times: Times, parse: Times) -> tuple[float, float]:
    """(median, 90th percentile) over the pages of ``times[page] / parse[page]``."""
    each = sorted(times[name] / parse[name] for name in times if parse.get(name))
    if not each:
        return 0.0, 0.0
    return statistics.median(each), each[min(len(each) - 1, int(0.9 * len(each)))]


def warm_line(parse: Times, extract: Times, links: Times) -> str:
    """The warm line: medians of the pages' ms, and of their ratios to the parse."""
    p, e, d = (statistics.median(t.values()) for t in (parse, extract, links))
    median, p90 = ratios(extract, parse)
    slowest = max(extract, key=extract.__getitem__)
    return (
        f"warm: {len(parse)} pages timed, median CPU ms/page: lxml parse {p:.2f}, "
        f"extract_product {e:.2f} (per page {median:.1f}x the parse, p90 {p90:.1f}x), "
        f"discover_links {d:.2f} ({d / p:.1f}x the parse); "
        f"slowest extraction {extract[slowest]:.2f} ms ({slowest})"
    )


def timings(responses: list[tuple[str, HtmlResponse]], repeat: int) -> list[str]:
    """The warm line of ``responses`` (see the module doc)."""
    return [warm_line(*warm_times(responses, repeat))]


def first_sight_times(
    responses: list[tuple[str, HtmlResponse]], repeat: int = 3
) -> dict[str, list[float]]:
    """{page: [CPU ms of one ``extract_product``, of one lxml parse]}: each page once,
    in order (this process must have extracted nothing before: see the module doc),
    its parse timed right after it (the median of ``repeat``: a parse has no cache to
    fill), so that the ratio of the two is measured under the same load."""
    out: dict[str, list[float]] = {}
    for name, response in responses:
        fresh = response.replace(body=response.body)
        start = time.process_time()
        _safe_extract(fresh)
        spent = (time.process_time() - start) * 1000
        out[name] = [spent, _median_ms(_lxml_parse, response, repeat)]
    return out


def first_sight_line(extract: Times, ratio: Times, runs: int) -> str:
    median, p90 = ratios(ratio, dict.fromkeys(ratio, 1.0))  # each page's ratio already
    return (
        f"first sight (cold: a new process, each page once in order; medians of {runs} "
        f"processes): median CPU ms/page: extract_product "
        f"{statistics.median(extract.values()):.2f} "
        f"(per page {median:.1f}x the parse, p90 {p90:.1f}x)"
    )


def cold_timings(folder: Path, part: str, runs: int) -> list[str]:
    """The first-sight line of a folder's pages: ``runs`` new processes that have read
    no page; each page's ms and ratio to its parse are medians over them."""
    command = [
        sys.executable, "-m", "benchmarks.extraction_timing", "--first-sight", str(folder),
        "--part", part,
    ]
    per_run: list[dict[str, list[float]]] = []
    for _ in range(max(1, runs)):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return [f"first-sight timing failed: {done.stderr.strip()[-300:]}"]
        per_run.append(json.loads(done.stdout))
    pages = list(per_run[0])
    extract = {name: statistics.median(run[name][0] for run in per_run) for name in pages}
    ratio = {
        name: statistics.median(run[name][0] / run[name][1] for run in per_run if run[name][1])
        for name in pages
        if any(run[name][1] for run in per_run)
    }
    return [first_sight_line(extract, ratio, len(per_run))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="first-sight timing of the extractor: prints {page: CPU ms} (see the doc)"
    )
    parser.add_argument("--first-sight", type=Path, required=True, help="folder of saved pages")
    parser.add_argument("--part", default="all")
    args = parser.parse_args(argv)
    from crawler.extraction.structured import load_extruct

    from .extraction_accuracy import load_folder  # pages only: nothing extracted yet

    load_extruct()  # once a worker, as the extractor's own imports (see the module doc)

    logging.disable(logging.WARNING)  # a source's failure is counted by the accuracy run
    cases = load_folder(args.first_sight, args.part)
    print(json.dumps(first_sight_times([(name, response) for name, response, _ in cases])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
