"""The first-character classes that guard large case-insensitive alternations cover
every phrase of theirs: a phrase that opens with a character outside its guard would
never be found (the guard is a speed-up only, and must change no answer)."""

from __future__ import annotations

import re
from re import _constants as sre
from re import _parser

from crawler.extraction.visible.buy import _ADD_TO_CART_TEXT, _CART_PHRASE_STARTS


def _opening_chars(seq: _parser.SubPattern | list) -> set[int]:
    """The code points a match of the parsed sequence can open with (literal openings
    only: any other opening fails the test)."""
    op, av = list(seq)[0]
    if op is sre.LITERAL:
        return {av}
    if op is sre.IN:
        chars: set[int] = set()
        for item, value in av:
            assert item in (sre.LITERAL, sre.RANGE), f"opening not literal: {item}"
            chars.update({value} if item is sre.LITERAL else range(value[0], value[1] + 1))
        return chars
    if op is sre.SUBPATTERN:
        return _opening_chars(av[3])
    if op is sre.BRANCH:
        return set().union(*(_opening_chars(alt) for alt in av[1]))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and av[0] >= 1:
        return _opening_chars(av[2])
    raise AssertionError(f"opening not literal: {op}")


def test_cart_phrases_open_with_a_guarded_letter() -> None:
    parsed = _parser.parse(_ADD_TO_CART_TEXT.pattern, _ADD_TO_CART_TEXT.flags)
    items = list(parsed)
    assert items[0][0] is sre.ASSERT  # the guard, then the phrases
    guard = re.compile(f"[{_CART_PHRASE_STARTS}]", re.I)
    missing = [chr(c) for c in _opening_chars(items[1:]) if not guard.fullmatch(chr(c))]
    assert not missing


def test_cart_phrases_found_in_any_case() -> None:
    for label in ("Add to Cart", "ADD TO BASKET", "Buy it now", "In den Warenkorb",
                  "Добавить в корзину", "Sepete Ekle", "カートに入れる", "장바구니 담기"):
        assert _ADD_TO_CART_TEXT.search(label), label
    assert not _ADD_TO_CART_TEXT.search("Write a review")
