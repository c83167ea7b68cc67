"""``holds_ld_json`` (the word found by its "+") answers ``"ld+json" in html`` on
texts with few and many "+" (beyond the count it reads one by one), the word at the
start, the end, after those, cut, and overlapping pluses."""

from __future__ import annotations

import random

from crawler.extraction.structured import _PLUSES_READ, holds_ld_json


def test_agrees_with_substring_test() -> None:
    rng = random.Random(11)
    pieces = ["+", "++", "d+", "ld+", "ld+js", "ld+json", "l", "d", "json", "a", " "]
    pieces += ["<", "é", "\u30ab"]
    seen = {True: 0, False: 0}
    for _ in range(20000):
        count = rng.choice((0, 1, 3, 10, _PLUSES_READ, _PLUSES_READ + 5, 200))
        text = "".join(rng.choices(pieces[:-3] if rng.random() < 0.5 else pieces, k=count))
        if rng.random() < 0.5:
            text = text.replace("ld+json", "ld+jso")
        expected = "ld+json" in text
        assert holds_ld_json(text) is expected, text
        seen[expected] += 1
    assert min(seen.values()) > 3000


def test_edges() -> None:
    for text, expected in [
        ("", False),
        ("+", False),
        ("ld+json", True),
        ("d+json", False),
        ("x" * 5 + "ld+json", True),
        ("+" * (_PLUSES_READ * 2) + "ld+json", True),
        ("+" * (_PLUSES_READ - 1) + "ld+json", True),
        ("+" * _PLUSES_READ + "ld+json", True),
        ("+" * (_PLUSES_READ + 1) + "ld+jso", False),
        ("l" + "+" * (_PLUSES_READ * 2) + "d+json", False),
    ]:
        assert holds_ld_json(text) is expected, text
