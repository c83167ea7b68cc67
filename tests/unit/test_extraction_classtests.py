"""The class tests' prefilter (the union of their needs) changes no answer: every
class-and-id string of the saved pages that passes a registered test matches it, and
its alternatives grouped by first letter find what they found ungrouped."""

from __future__ import annotations

import random
import re
from pathlib import Path

from benchmarks.extraction_accuracy import load_folder
from crawler.extraction.tree import page_root
from crawler.extraction.visible import page as _page  # noqa: F401 -- registers every test
from crawler.extraction.visible.classtests import CLASS_TESTS, _by_first_letter, _prefilter
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


def test_alternatives_grouped_by_first_letter_find_what_the_pattern_finds() -> None:
    rng = random.Random(3)
    sources = [
        "price|prix|amount", r"[]|a]b|c", r"[^]|]x|y", r"[\]|]z|w", r"a\|b|c", r"(?:x|y)+z|q",
        r"(?:x|y)z|(?:a|(?:b|c)d)e", r"a?b|ab", r"a{2}|b", r"(a|b)c|d", r"\bnow\b|no", "ab|", "|x",
    ]
    for source in sources:
        plain, grouped = re.compile(source), re.compile(_by_first_letter(source))
        for _ in range(2000):
            text = "".join(rng.choice("abcdeimnoprtwxyzq|]\\ ") for _ in range(rng.randint(0, 8)))
            assert bool(plain.search(text)) == bool(grouped.search(text)), (source, text)
    assert _by_first_letter("price|prix|(?:item|art)-no") == "p(?:rice|rix)|i(?:tem-no)|a(?:rt-no)"
