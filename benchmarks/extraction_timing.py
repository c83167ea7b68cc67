"""Time per page of one lxml parse, of ``extract_product`` and of ``discover_links``
(the spider's link discovery), printed beside each other by the extraction benchmark,
with warm caches and with cold ones.

Times are the process's CPU time (``time.process_time``): on a machine shared with
other work, wall-clock medians moved by a factor of two between runs (the parse's
median from 4 to 9 ms), CPU time much less.

* **warm**: the median of ``repeat`` runs on the page (fresh responses: decoding and
  parsing included), in the benchmark's process, whose caches hold what the page's
  earlier runs and the other pages left (class strings, labels, stylesheets...);
* **cold**: each page in a new process, as a crawl of many shops meets the first page
  of a new one with a worker that has seen nothing like it: a process that imported
  the extractor and read no page forks one child per page and run, which times one
  ``extract_product``; another child times one lxml parse, its first too. Medians
  over ``repeat`` children per page (``python -m benchmarks.extraction_timing --cold
  DIR`` runs it alone)."""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from parsel import Selector
from scrapy.http import HtmlResponse

from crawler.extraction import discover_links, extract_product


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
        f"{len(rows)} pages timed, median CPU ms/page: lxml parse {parse:.2f}, "
        f"extract_product {extract:.2f} ({extract / parse:.1f}x the parse), "
        f"discover_links {links:.2f} ({links / parse:.1f}x the parse); "
        f"slowest extraction {rows[slowest][1]:.2f} ms ({slowest})"
    ]


def _in_child(func: Any, response: HtmlResponse) -> float:
    """Seconds ``func`` takes on a fresh copy of ``response`` in a forked child (a new
    process: nothing this process did not do at import is cached)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: time once, answer, leave without cleaning up
        os.close(read)
        fresh = response.replace(body=response.body)
        start = time.process_time()
        func(fresh)
        os.write(write, pickle.dumps(time.process_time() - start))
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 4096):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    seconds: float = pickle.loads(data)
    return seconds


def cold_rows(
    responses: list[tuple[str, HtmlResponse]], repeat: int
) -> dict[str, tuple[float, float]]:
    """{page: (ms of one lxml parse, ms of one extract_product)}, each cold (see the
    module doc): medians over ``repeat`` new processes per page."""
    rows = {}
    for name, response in responses:
        parse = [_in_child(_lxml_parse, response) for _ in range(repeat)]
        extract = [_in_child(_safe_extract, response) for _ in range(repeat)]
        rows[name] = (statistics.median(parse) * 1000, statistics.median(extract) * 1000)
    return rows


def cold_line(rows: dict[str, tuple[float, float]]) -> str:
    parse, extract = (statistics.median(r[i] for r in rows.values()) for i in range(2))
    return (
        f"cold (a new process per page): median CPU ms/page: lxml parse {parse:.2f}, "
        f"extract_product {extract:.2f} ({extract / parse:.1f}x the parse)"
    )


def cold_timings(folder: Path, part: str, repeat: int) -> list[str]:
    """The cold line, measured in a new process that has read no page (this one's
    caches are warm by now)."""
    command = [
        sys.executable, "-m", "benchmarks.extraction_timing", "--cold", str(folder),
        "--part", part, "--repeat", str(repeat),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("cold")]
    return lines or [f"cold timing failed: {done.stderr.strip()[-300:]}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cold timing of the extractor (see the doc)")
    parser.add_argument("--cold", type=Path, required=True, help="folder of saved pages")
    parser.add_argument("--part", default="all")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from .extraction_accuracy import load_folder  # pages only: nothing read yet

    cases = load_folder(args.cold, args.part)
    rows = cold_rows([(name, response) for name, response, _ in cases], max(1, args.repeat))
    print(cold_line(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
