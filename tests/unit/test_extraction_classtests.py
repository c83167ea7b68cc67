"""The class tests' prefilter (the union of their needs) changes no answer: every
class-and-id string of the saved pages that passes a registered test matches it."""

from __future__ import annotations

from pathlib import Path

from benchmarks.extraction_accuracy import load_folder
from crawler.extraction.tree import page_root
from crawler.extraction.visible import page as _page  # noqa: F401 -- registers every test
from crawler.extraction.visible.classtests import CLASS_TESTS, _prefilter
from crawler.extraction.visible.index import PageIndex

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_every_registered_test_has_a_need_and_the_union_misses_no_passing_string() -> None:
    union = _prefilter()
    assert union is not None  # every test declares what it needs
    keys: set[str] = set()
    for folder in (FIXTURES / "pages", FIXTURES / "holdout"):
        for _, response, _ in load_folder(folder):
            keys.update(PageIndex(page_root(response)).by_class)
    assert len(keys) > 300
    missed = [k for k in keys if not union.search(k.lower()) and any(t(k) for t in CLASS_TESTS)]
    assert missed == []
