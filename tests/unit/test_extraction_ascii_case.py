"""A case-insensitive pattern made case-sensitive for lowered ASCII text
(:mod:`crawler.extraction.ascii_case`) finds what the pattern finds."""

from __future__ import annotations

import random
import re
import string

import pytest

from crawler.extraction.ascii_case import for_lowered_ascii
from crawler.extraction.visible.buy import _ADD_TO_CART_TEXT, _BUY_VERB, _says_buy


def _agree(pattern: re.Pattern[str], texts: list[str]) -> None:
    lowered = for_lowered_ascii(pattern)
    for text in texts:
        assert text.isascii()
        expected = [m.span() for m in pattern.finditer(text)]
        assert [m.span() for m in lowered.finditer(text.lower())] == expected, text


def test_buy_labels_are_found_alike() -> None:
    labels = ["Add to Cart", "ADD TO BAG", "add 2 to basket", "Buy it now", "Home", "Sign in",
              "SATIN AL", "Satin Al", "satin al", "Hemen Al", "KUP TERAZ", "Comprar", " Buy ",
              "Buy!", "Kaufen", "View all products", "Pre-order now", "In den Warenkorb"]
    rng = random.Random(53)
    words = ["add", "to", "cart", "buy", "now", "it", "satin", "al", "SATIN", "AL", "Kup",
             "teraz", " ", "  ", "bag", "basket", "x", "1", "!"]
    for _ in range(3000):
        labels.append("".join(rng.choice(words) + " " for _ in range(rng.randint(1, 6))))
    _agree(_ADD_TO_CART_TEXT, labels)
    _agree(_BUY_VERB, labels)
    # the dotless i of "satın al" matches both cases of "i" when case is ignored
    assert _says_buy("SATIN AL") and _says_buy("satin al")


def test_sets_escapes_and_letters_of_both_cases() -> None:
    pattern = re.compile(r"\bAb[c-e]\S+|[^a-z]Z\d|x\W?y", re.I)
    rng = random.Random(59)
    texts = ["".join(rng.choice(string.ascii_letters + "0123 -_!") for _ in range(12))
             for _ in range(3000)]
    _agree(pattern, texts)


def test_a_character_matching_ascii_inside_a_set_is_refused() -> None:
    with pytest.raises(ValueError):
        for_lowered_ascii(re.compile("[ıx]y", re.I))
    with pytest.raises(ValueError):
        for_lowered_ascii(re.compile("abc"))
    assert for_lowered_ascii(re.compile("satın", re.I)).search("satin")


def test_headings_of_other_products_and_counters_are_found_alike() -> None:
    from crawler.extraction.visible.price_marks import _COUNT_TEXT
    from crawler.extraction.visible.records import _OTHERS_HEADING

    rng = random.Random(61)
    words = ["Customers", "also", "BOUGHT", "you", "may", "like", "Sponsored", "similar",
             "products", "Best", "Sellers", "12", "sold", "3", "pcs", "Max", "per", "person",
             "reviews", "$9.99", "1,299", "units", "limit", "x", " "]
    texts = ["Customers also bought", "Product details", "YOU MAY ALSO LIKE", "957 sold",
             "$12.99 12 reviews", "max 999 per person", "3 PCS", "Bestsellers"]
    for _ in range(3000):
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 7))))
    _agree(_OTHERS_HEADING, texts)
    _agree(_COUNT_TEXT, texts)


def test_stock_wording_is_found_alike() -> None:
    from crawler.extraction.normalize.availability import _STOCK_RULES

    rng = random.Random(71)
    words = ["In", "stock", "OUT", "of", "Sold", "out", "only", "3", "left", "Pre-order",
             "backorder", "available", "Discontinued", "ships", "today", "Agotado", "x",
             "(0 available)", "not", "currently", "unavailable", "En", "Stock", "  "]
    texts = ["In stock", "OUT OF STOCK", "Only 2 left!", "Pre-Order now", "Sold Out",
             "Available on backorder", "Currently unavailable", "Ships today", "Disponible"]
    for _ in range(3000):
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 6))))
    for pattern, _ in _STOCK_RULES:
        if pattern.flags & re.IGNORECASE:
            _agree(pattern, texts)


def test_ascii_twins_asks_the_engine_only_of_characters_that_can_match() -> None:
    """The shortcut (no ASCII in a character's lower, upper or folded case: no twin)
    gives the regex engine's answer for every character of the Latin, Greek, Cyrillic
    and letter-like blocks, and the four characters of Unicode that have twins."""
    from crawler.extraction.ascii_case import _ascii_twins

    def engine(char: str) -> str:
        return "".join(
            letter for letter in string.ascii_lowercase
            if re.fullmatch(re.escape(char), letter, re.IGNORECASE)
        )

    chars = [chr(code) for code in [*range(0x80, 0x530), *range(0x1E00, 0x2200)]]
    assert all(_ascii_twins(char) == engine(char) for char in chars)
    assert {char: _ascii_twins(char) for char in "İıſ\u212a"} == {
        "İ": "i", "ı": "i", "ſ": "s", "\u212a": "k"}
