"""Accuracy and speed of the zero-configuration extractor on the saved pages.

Runs :func:`crawler.extraction.extract_product` with no site profile over every
``tests/fixtures/pages/*.html`` and compares each field with the expected
product beside it (``<case>.expected.json``; ``null`` for pages that are not
product pages). Prints, per field, how many product pages got it right, the
page-type accuracy (product page or not), and the time per page including the
HTML parse.

    python benchmarks/extraction_accuracy.py [--pages DIR] [--repeat N] [--verbose]

``--pages tests/fixtures/holdout`` runs it on pages written after the extractor
by someone else, never used to tune it: the honest figure for unseen shops.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crawler.extraction import PRODUCT_FIELDS, extract_product  # noqa: E402
from tests.unit.test_extraction import PAGES, load_case  # noqa: E402


def _same(field: str, got: Any, expected: Any) -> bool:
    if field == "price" and got is not None and expected is not None:
        return Decimal(str(got)) == Decimal(str(expected))
    return bool(got == expected)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="timing runs per page (default 20)")
    parser.add_argument("--verbose", action="store_true", help="print every wrong field")
    parser.add_argument(
        "--pages", type=Path, default=PAGES, help="folder of saved pages (default: fixtures/pages)"
    )
    args = parser.parse_args(argv)
    cases = sorted(p.name[: -len(".html")] for p in args.pages.glob("*.html"))

    correct = dict.fromkeys(PRODUCT_FIELDS, 0)
    product_pages = 0
    page_type_ok = 0
    misses: list[str] = []
    timings: dict[str, float] = {}
    for case in cases:
        response, expected = load_case(case, args.pages)
        product = extract_product(response)
        is_product = product is not None
        if is_product == (expected is not None):
            page_type_ok += 1
        else:
            misses.append(f"{case}: page type (expected {'product' if expected else 'none'})")
        if expected is not None:
            product_pages += 1
            for field in PRODUCT_FIELDS:
                got = product.get(field) if product else None
                if _same(field, got, expected.get(field)):
                    correct[field] += 1
                else:
                    misses.append(f"{case}: {field}: got {got!r}, expected {expected.get(field)!r}")
        runs = []
        for _ in range(args.repeat):
            fresh = response.replace(body=response.body)  # parse included in the timing
            start = time.perf_counter()
            extract_product(fresh)
            runs.append(time.perf_counter() - start)
        timings[case] = statistics.median(runs) * 1000

    print(f"{'field':<14}{'correct':>8}{'total':>7}{'accuracy':>10}")
    for field in PRODUCT_FIELDS:
        share = correct[field] / product_pages
        print(f"{field:<14}{correct[field]:>8}{product_pages:>7}{share:>10.0%}")
    all_fields = sum(correct.values())
    total_fields = product_pages * len(PRODUCT_FIELDS)
    print(f"{'all fields':<14}{all_fields:>8}{total_fields:>7}{all_fields / total_fields:>10.1%}")
    print(f"{'page type':<14}{page_type_ok:>8}{len(cases):>7}{page_type_ok / len(cases):>10.0%}")
    values = sorted(timings.values())
    print(
        f"\n{len(cases)} pages ({product_pages} product pages): "
        f"median {statistics.median(values):.2f} ms/page, mean {statistics.mean(values):.2f}, "
        f"max {values[-1]:.2f} ({max(timings, key=timings.__getitem__)})"
    )
    if args.verbose:
        for case, ms in sorted(timings.items(), key=lambda kv: -kv[1]):
            print(f"  {ms:7.2f} ms  {case}")
    if misses:
        print("\nWrong:")
        for miss in misses:
            print("  " + miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
