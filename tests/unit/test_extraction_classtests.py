"""The class tests' prefilter (the union of their needs) changes no answer: every
class-and-id string of the saved pages that passes a registered test matches it, its
alternatives grouped by first letter find what they found ungrouped, and the needs a
string meets, found where the union matches, are those a search of each finds."""

from __future__ import annotations

import random
import re
from pathlib import Path

from benchmarks.extraction_accuracy import load_folder
from crawler.extraction.tree import page_root
from crawler.extraction.visible import page as _page  # noqa: F401 -- registers every test
from crawler.extraction.visible.classtests import (
    _ANYWHERE,
    _OPENING,
    _SCREENED,
    CLASS_TESTS,
    _by_first_letter,
    _needs_met,
    _openings,
    _prefilter,
)
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


def _searched(needs: list[tuple[int, re.Pattern[str]]], text: str) -> int:
    """The reference: each need searched in the whole text."""
    return sum(bit for bit, need in needs if need.search(text))


def test_the_needs_met_where_the_union_matches_are_those_each_search_finds() -> None:
    union = _prefilter()
    assert union is not None
    needs = [(bit, need) for _, bit, need in _SCREENED if need is not None]
    keys: set[str] = set()
    for folder in (FIXTURES / "pages", FIXTURES / "holdout"):
        for _, response, _ in load_folder(folder):
            keys.update(PageIndex(page_root(response)).by_class)
    rng = random.Random(5)
    words = [w for k in keys for w in k.lower().split()]
    keys.update(" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))) for _ in range(3000))
    for key in keys:
        lowered = key.lower()
        assert _needs_met(union, lowered, _OPENING, _ANYWHERE) == _searched(needs, lowered), key
    # needs that open otherwise than with a letter: anchors, sets, optional or empty openings
    sources = [
        "price|prix|amount", r"(?:^|\s)btn|buy", r"\bnow\b|no", r"[ab]c|d", "a?b|x", "ab|",
        r"(?<=-)x|y", "xy|x", "p(?:rice|rix)", r"(?:x|y)+z|q", r"\d+|n",
    ]
    for _ in range(200):
        chosen = rng.sample(sources, rng.randint(1, 4))
        needs = [(1 << at, re.compile(source)) for at, source in enumerate(chosen)]
        union = re.compile(_by_first_letter("|".join(chosen)))
        opening, anywhere = _openings(needs)
        for _ in range(100):
            text = "".join(rng.choice("abcdinoprxyzq-1 ") for _ in range(rng.randint(0, 10)))
            assert _needs_met(union, text, opening, anywhere) == _searched(needs, text), (
                chosen, text,
            )
