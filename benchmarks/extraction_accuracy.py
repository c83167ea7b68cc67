"""Accuracy and speed of the zero-configuration extractor on saved pages.

Runs :func:`crawler.extraction.extract_product` with no site profile over a
folder of saved pages and compares each field with the truth beside it. Three
folder formats are read:

* the project's fixtures (``tests/fixtures/pages``, ``tests/fixtures/holdout``):
  ``<case>.html`` starting with ``<!-- url: ... -->`` and ``<case>.expected.json``
  (``null`` for pages that are not product pages);
* the shared development set (``../shared/product-pages-dev``): ``<slug>.html``
  and ``<slug>.truth.json`` (name, price, currency, availability). The page's
  URL is its own absolute ``<link rel=canonical>``, else a made-up
  ``https://www.<slug>.com/product``. Its SKU truth is kept in the project,
  ``benchmarks/sku_truth.json`` (see below).

* the shared international development set (``../shared/product-pages-intl``):
  ``truth.jsonl`` (one object a line: ``id``, ``file``, ``url`` and LISTS of
  acceptable values; an absent field means the page shows none) beside
  ``<id>.html.gz``; each page is served under its own ``url``.

SKU truth (``sku_truth.json``: slug -> ``sku``, ``label``, ``evidence``,
``notes``) was checked by hand on each page's visible text (scripts, styles
and hidden templates left out), independently of the extractor:

* ``sku`` is the product code the visible page shows for the main product,
  under a label such as SKU, Item #, Product code, Style #, Model, Part
  number, REF., Web ID (``label`` quotes it; ``null`` when the code has no
  label, like QVC's item number above the heading);
* where the page shows several codes, the **shop's own item/product code**
  (SKU, Item #, Product code, Art.-Nr., "<shop> #") wins over a
  manufacturer's model or part number; the other codes are quoted in
  ``notes``; a model or part number is the SKU only when it is the only code
  shown;
* ``null`` where the visible page shows no product code (an id only in
  scripts, attributes or structured data does not count; a GTIN/UPC is not a
  SKU).

The "sku" row counts pages whose truth is a code (compared case-insensitively,
whitespace trimmed); "sku where page shows none" counts pages with a ``null``
truth that gave a SKU anyway.

The development set is split by a fixed rule: sorted by name, every fifth page
(index 0, 5, 10, ...) is the HOLDOUT, kept apart while tuning (its last misses
were since looked at); ``--part`` selects ``dev``, ``holdout`` or ``all``.

Printed: per field, correct/total and accuracy; "found" (a product came out of
a product page); non-product pages taken for products (the folder's own
``null`` pages plus, with ``--negatives``, every non-product page of the
project's fixtures and of the demo shop); exceptions raised by the extractor;
for both shared sets, precision, recall and F1 per attribute by the public
benchmark's rules (:mod:`benchmarks.extraction_f1`; ``OutOfStock`` apart); the
median CPU milliseconds per page of one lxml parse, of ``extract_product`` and of
``discover_links`` side by side, with warm caches, and of ``extract_product`` at
first sight (cold: new processes that read each page once, in order; up to three of
them), each also as the median and 90th percentile of its per-page ratio to the
page's parse (:mod:`benchmarks.extraction_timing`, the set's own pages); every miss.

    python -m benchmarks.extraction_accuracy --pages ../shared/product-pages-intl
    python -m benchmarks.extraction_accuracy --pages ../shared/product-pages-dev --negatives
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from scrapy.http import HtmlResponse

from crawler.extraction import PRODUCT_FIELDS, extract_product

from .extraction_f1 import (
    COMPARE,
    Score,
    acceptable_values,
    f1_lines,
    predicted_value,
    score_pages,
)
from .extraction_timing import cold_timings, warm_line, warm_times

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
_URL_COMMENT = re.compile(r"<!--\s*url:\s*(\S+)\s*-->")
_CANONICAL = re.compile(
    r"<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"'](https?://[^\"'\s]+)[\"']", re.I
)
#: Fields compared with the development set's truth.
DEV_FIELDS = ("name", "price", "currency", "availability")
#: Fields compared with a ``truth.jsonl`` set's lists of acceptable values.
JSONL_FIELDS = ("price", "currency", "availability", "sku")
#: Attributes scored by precision, recall and F1 (those the truth has).
F1_FIELDS = ("price", "sku", "availability", "name", "currency")
HOLDOUT_EVERY = 5
#: Hand-checked SKU truth of the development set (see the module doc).
SKU_TRUTH = Path(__file__).resolve().parent / "sku_truth.json"

Case = tuple[str, HtmlResponse, "dict[str, Any] | None"]


def split(names: list[str], part: str) -> list[str]:
    """The fixed dev/holdout split: sorted names, every fifth one (0, 5, ...) is holdout."""
    ordered = sorted(names)
    holdout = {n for i, n in enumerate(ordered) if i % HOLDOUT_EVERY == 0}
    if part == "holdout":
        return [n for n in ordered if n in holdout]
    if part == "dev":
        return [n for n in ordered if n not in holdout]
    return ordered


def _response(url: str, body: bytes) -> HtmlResponse:
    return HtmlResponse(url=url, body=body, encoding="utf-8")


def load_sku_truth(path: Path = SKU_TRUTH) -> dict[str, str | None]:
    """slug -> the SKU the page shows, or None where it shows none."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {slug: entry["sku"] for slug, entry in data.items()}


def load_folder(
    folder: Path, part: str = "all", sku_truth: dict[str, str | None] | None = None
) -> list[Case]:
    """Every case of a folder in either format (see the module doc). A
    truth.json case named in ``sku_truth`` gets its ``sku`` from there."""
    if (folder / "truth.jsonl").exists():
        return load_jsonl_folder(folder, part)
    truths = sorted(folder.glob("*.truth.json"))
    if truths:
        names = split([p.name[: -len(".truth.json")] for p in truths], part)
        cases: list[Case] = []
        for name in names:
            truth = json.loads((folder / f"{name}.truth.json").read_text(encoding="utf-8"))
            if sku_truth and name in sku_truth:
                truth["sku"] = sku_truth[name]
            body = (folder / truth.get("file", f"{name}.html")).read_bytes()
            match = _CANONICAL.search(body[:400_000].decode("utf-8", "replace"))
            url = match.group(1) if match else f"https://www.{name}.com/product"
            cases.append((name, _response(url, body), truth))
        return cases
    out = []
    for page in sorted(folder.glob("*.html")):
        name = page.name[: -len(".html")]
        expected_file = folder / f"{name}.expected.json"
        if not expected_file.exists():
            continue
        html = page.read_text(encoding="utf-8")
        match = _URL_COMMENT.search(html)
        if not match:
            continue
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        out.append((name, _response(match.group(1), html.encode("utf-8")), expected))
    return out


def load_jsonl_folder(folder: Path, part: str = "all") -> list[Case]:
    """A ``truth.jsonl`` folder (``../shared/product-pages-intl``): one JSON object a
    line with ``id``, ``file`` (gzip HTML), ``url`` and lists of acceptable values;
    the page is served under its own ``url``."""
    rows = [
        json.loads(line)
        for line in (folder / "truth.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    by_id = {row["id"]: row for row in rows}
    cases: list[Case] = []
    for page_id in split(list(by_id), part):
        row = by_id[page_id]
        body = gzip.decompress((folder / row["file"]).read_bytes())
        cases.append((page_id, _response(row["url"], body), row))
    return cases


def negative_cases() -> Iterator[Case]:
    """Every non-product page the project knows: fixtures and the demo shop."""
    for folder in (FIXTURES / "pages", FIXTURES / "holdout"):
        for name, response, expected in load_folder(folder):
            if expected is None:
                yield f"{folder.name}/{name}", response, None
    from demoshop.catalog import Catalog
    from demoshop.site import ShopSite

    catalog = Catalog.build()
    site = ShopSite(catalog)
    base = "http://127.0.0.1:8000"
    for path in sorted(catalog.crawlable_paths() - catalog.product_paths()):
        page = site.resolve("GET", path)
        if page.status == 200:
            yield f"demoshop{path}", _response(base + path, page.body), None


def same(field: str, got: Any, expected: Any) -> bool:
    if field == "price" and got is not None and expected is not None:
        return Decimal(str(got)) == Decimal(str(expected))
    if field == "sku":
        return same_sku(got, expected)
    return bool(got == expected)


def same_sku(got: Any, expected: Any) -> bool:
    """A SKU matches its truth case-insensitively, surrounding whitespace aside."""
    if got is None or expected is None:
        return got is None and expected is None
    return str(got).strip().casefold() == str(expected).strip().casefold()


def _extract(name: str, response: HtmlResponse, errors: list[str]) -> dict[str, Any] | None:
    try:
        return extract_product(response)
    except Exception as exc:  # noqa: BLE001 -- an exception is a measured failure
        errors.append(f"{name}: EXCEPTION {type(exc).__name__}: {exc}")
        return None


def run(
    cases: list[Case],
    negatives: list[Case],
    repeat: int,
    folder: Path | None = None,
    part: str = "all",
) -> tuple[list[str], list[str]]:
    """(report lines, misses); with ``folder``, the cold timing of its pages too."""
    product_cases = [c for c in cases if c[2] is not None]
    non_product = [c for c in cases if c[2] is None] + negatives
    jsonl_format = any("id" in (c[2] or {}) for c in product_cases)
    dev_format = not jsonl_format and any("file" in (c[2] or {}) for c in product_cases)
    fields: tuple[str, ...] = (
        JSONL_FIELDS if jsonl_format else DEV_FIELDS if dev_format else PRODUCT_FIELDS
    )
    correct = dict.fromkeys(fields, 0)
    found = 0
    # SKU: scored where the truth names a code; a SKU given where the page shows
    # none is counted apart (pages without SKU truth are left out of both).
    sku_cases = [c for c in product_cases if dev_format and "sku" in (c[2] or {})]
    sku_total = sum(1 for c in sku_cases if c[2] and c[2]["sku"] is not None)
    sku_good = sku_extra = 0
    misses: list[str] = []
    errors: list[str] = []
    scored: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = []
    for name, response, expected in product_cases:
        assert expected is not None
        product = _extract(name, response, errors)
        scored.append((name, product, expected))
        if product is None:
            misses.append(f"{name}: no product (page not recognised)")
        else:
            found += 1
        for field in fields:
            got = product.get(field) if product else None
            if jsonl_format:
                outcome = Score().add(
                    predicted_value(field, product),
                    acceptable_values(expected, field),
                    COMPARE[field],
                )
                correct[field] += outcome in ("tp", "tn")
            elif same(field, got, expected.get(field)):
                correct[field] += 1
            elif product is not None:
                source = (product.get("provenance") or {}).get(field, "-")
                misses.append(
                    f"{name}: {field}: got {got!r} ({source}), expected {expected.get(field)!r}"
                )
        if dev_format and "sku" in expected:
            got_sku = product.get("sku") if product else None
            if expected["sku"] is None:
                if got_sku:
                    sku_extra += 1
                    if product is not None:
                        source = (product.get("provenance") or {}).get("sku", "-")
                        misses.append(
                            f"{name}: sku: got {got_sku!r} ({source}), the page shows none"
                        )
            elif same_sku(got_sku, expected["sku"]):
                sku_good += 1
            elif product is not None:
                source = (product.get("provenance") or {}).get("sku", "-")
                misses.append(
                    f"{name}: sku: got {got_sku!r} ({source}), expected {expected['sku']!r}"
                )
    false_positives = 0
    for name, response, _ in non_product:
        product = _extract(name, response, errors)
        if product is not None:
            false_positives += 1
            misses.append(f"{name}: NOT a product page, got {product.get('name')!r}")

    n = len(product_cases)
    lines = [f"{'field':<14}{'correct':>8}{'total':>7}{'accuracy':>10}"]

    def row(label: str, good: int, total: int) -> None:
        share = f"{good / total:.0%}" if total else "-"
        lines.append(f"{label:<14}{good:>8}{total:>7}{share:>10}")

    row("found", found, n)
    for field in fields:
        row(field, correct[field], n)
    if sku_cases:
        row("sku", sku_good, sku_total)
        lines.append(
            f"sku where page shows none: {sku_extra} of {len(sku_cases) - sku_total} pages"
        )
    lines.append(f"non-product pages: {len(non_product)}, taken for products: {false_positives}")
    lines.append(f"exceptions: {len(errors)}")
    if jsonl_format or dev_format:
        f1_fields = [
            f
            for f in F1_FIELDS
            if (f in fields or (f == "sku" and sku_cases))
            and not (jsonl_format and f == "currency")  # the set's currency truth is partial
        ]
        scores, f1_misses = score_pages(scored, f1_fields)
        lines.append("")
        lines += f1_lines(scores)
        oos_pages = sum("OutOfStock" in acceptable_values(t, "availability") for _, _, t in scored)
        lines.append(f"OutOfStock pages right: {scores['OutOfStock'].tp} of {oos_pages}")
        if jsonl_format:
            misses += f1_misses
    if repeat:
        # the set's own pages (not the --negatives added from elsewhere)
        timed = [(name, response) for name, response, _ in cases]
        parse, extract, links = warm_times(timed, repeat)
        lines.append(warm_line(parse, extract, links))
        if folder is not None:
            lines += cold_timings(folder, part, min(repeat, 3))
    return lines, errors + misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pages",
        type=Path,
        default=FIXTURES / "pages",
        help="folder of saved pages (default: tests/fixtures/pages)",
    )
    parser.add_argument(
        "--part",
        choices=("all", "dev", "holdout"),
        default="all",
        help="of a truth.json(l) folder: the tuning part, the holdout (every 5th), or all",
    )
    parser.add_argument(
        "--negatives",
        action="store_true",
        help="also check every non-product page of the fixtures and of the demo shop",
    )
    parser.add_argument(
        "--sku-truth",
        type=Path,
        default=SKU_TRUTH,
        help="hand-checked SKU truth of a truth.json folder (default: benchmarks/sku_truth.json)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="warm timing runs per page, first-sight processes up to 3 (0: no timing)",
    )
    args = parser.parse_args(argv)
    cases = load_folder(args.pages, args.part, load_sku_truth(args.sku_truth))
    if not cases:
        parser.error(f"no pages found in {args.pages}")
    negatives = list(negative_cases()) if args.negatives else []
    lines, misses = run(cases, negatives, args.repeat, args.pages, args.part)
    print(f"{args.pages} ({args.part}): {len(cases)} pages")
    print("\n".join(lines))
    if misses:
        print("\nMisses:")
        for miss in misses:
            print("  " + miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
