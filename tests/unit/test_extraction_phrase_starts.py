"""The first-character classes that guard large case-insensitive alternations cover
every phrase of theirs: a phrase that opens with a character outside its guard would
never be found (the guard is a speed-up only, and must change no answer)."""

from __future__ import annotations

import random
import re
from re import _constants as sre
from re import _parser

from crawler.extraction.normalize.availability import (
    _IN_STOCK_STARTS,
    _IN_STOCK_WORDS,
    _OUT_OF_STOCK_STARTS,
    _STOCK_RULES,
)
from crawler.extraction.visible.buy import _ADD_TO_CART_TEXT, _CART_PHRASE_STARTS
from crawler.extraction.visible.price_parts import _NOT_PAID_STARTS, _NOT_PAID_WORDS, NOT_PAID
from crawler.extraction.visible.price_text import _MONEY_STARTS, MONEY_TEXT

_WHITESPACE = [(sre.IN, [(sre.CATEGORY, sre.CATEGORY_SPACE)])]


def _opening_chars(items: list) -> set[int | str]:
    """The code points a match of the parsed sequence ``items`` can open with, after a
    ``\\b``, and the classes (``\\d``) by their names (literal openings only: any other
    opening fails the test)."""
    op, av = items[0]
    rest = items[1:]
    if op is sre.LITERAL:
        return {av}
    if op is sre.IN:
        chars: set[int | str] = set()
        for item, value in av:
            if item is sre.CATEGORY:
                chars.add(str(value))
                continue
            assert item in (sre.LITERAL, sre.RANGE), f"opening not literal: {item}"
            chars.update({value} if item is sre.LITERAL else range(value[0], value[1] + 1))
        return chars
    if op is sre.AT and av is sre.AT_BOUNDARY:
        return _opening_chars(rest)
    if op is sre.SUBPATTERN:
        return _opening_chars(list(av[3]) + rest)
    if op is sre.BRANCH:
        return set().union(*(_opening_chars(list(alt) + rest) for alt in av[1]))
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
        chars = _opening_chars(list(av[2]) + rest)
        return chars | _opening_chars(rest) if av[0] == 0 else chars
    if op is sre.AT and av is sre.AT_BEGINNING:
        # "^\s*sold": after a \b the text opens with a word character, so the
        # spaces match none
        ahead = rest[0]
        if ahead[0] is sre.MAX_REPEAT and ahead[1][0] == 0 and list(ahead[1][2]) == _WHITESPACE:
            rest = rest[1:]
        return _opening_chars(rest)
    raise AssertionError(f"opening not literal: {op}")


def _uncovered(pattern: re.Pattern[str], starts: str) -> list[str]:
    """The opening characters of the phrases after the guard (``\\b`` then a lookahead
    of ``starts``, or the lookahead alone) that the guard does not let through."""
    items = list(_parser.parse(pattern.pattern, pattern.flags))
    if items[0] == (sre.AT, sre.AT_BOUNDARY):
        items = items[1:]
    assert items[0][0] is sre.ASSERT  # the guard, then the phrases
    guard = re.compile(f"[{starts}]", pattern.flags)
    _, (_, (guarded,)) = items[0]  # the lookahead's one item, the class of ``starts``
    classes = {str(value) for item, value in guarded[1] if item is sre.CATEGORY}
    return [
        c if isinstance(c, str) else chr(c)
        for c in _opening_chars(items[1:])
        if not (c in classes if isinstance(c, str) else guard.fullmatch(chr(c)))
    ]


def test_cart_phrases_open_with_a_guarded_letter() -> None:
    assert not _uncovered(_ADD_TO_CART_TEXT, _CART_PHRASE_STARTS)


def test_out_of_stock_phrases_open_with_a_guarded_letter() -> None:
    (out_of_stock,) = [p for p, state in _STOCK_RULES if _OUT_OF_STOCK_STARTS in p.pattern]
    assert not _uncovered(out_of_stock, _OUT_OF_STOCK_STARTS)


def test_in_stock_words_open_with_a_guarded_letter() -> None:
    assert not _uncovered(re.compile(_IN_STOCK_WORDS, re.I), _IN_STOCK_STARTS)


def test_amounts_open_with_a_guarded_character() -> None:
    assert not _uncovered(MONEY_TEXT, _MONEY_STARTS)


def test_cart_phrases_found_in_any_case() -> None:
    for label in ("Add to Cart", "ADD TO BASKET", "Buy it now", "In den Warenkorb",
                  "Добавить в корзину", "Sepete Ekle", "カートに入れる", "장바구니 담기"):
        assert _ADD_TO_CART_TEXT.search(label), label
    assert not _ADD_TO_CART_TEXT.search("Write a review")


def test_words_of_an_amount_not_paid_open_with_a_guarded_letter() -> None:
    assert not _uncovered(re.compile(_NOT_PAID_WORDS, re.I), _NOT_PAID_STARTS)


# NOT_PAID as it was written before its guard: each word alternative after its own \b
_NOT_PAID_UNGUARDED = re.compile(
    r"\bexcl\.?(?:uding|usive)?\s*(?:of\s*)?(?:vat|tax|taxes|gst|mwst|btw|iva|tva|moms)\b|"
    r"\bex\.?\s*(?:vat|gst|tax|moms)\b|\bplus (?:vat|tax)\b|\+\s*(?:vat|mwst|btw|iva|tva)\b|"
    r"\bzzgl\.?|\bnetto\b|\bnet price\b|\bprix ht\b|\bht\b|\bhors tax|\bsin iva\b|"
    r"\bbez (?:dph|vat|pdv)\b|\bsans tva\b|\bohne mwst|\bbez nds\b|\bбез ндс\b|"
    r"\bper (?:kg|g|100 ?g|l|litre|liter|100 ?ml|ml|m|m2|m²|unit|piece|each|item)\b|"
    r"/\s*(?:kg|100 ?g|l|100 ?ml|m²|m2|m|st|stk|szt|шт|ud)\b|\bje (?:kg|liter|100 ?g|stück)\b|"
    r"\bza (?:1 )?(?:kg|l|szt)\b|\bза (?:1 )?(?:кг|л|шт)\b|"
    r"\bpayments? of\b|/\s*mo(?:nth)?\b|\bper month\b|\bmonthly\b|\ba month\b|\bmtl\.|"
    r"\bmonatlich\b|\bcuotas?\b|\bparcelas?\b|\bmensualit|\bpar mois\b|\binstal+ments?\b|"
    r"\braty\b|\brate da\b|\ben \d+ fois\b|\bdeposit\b|\banzahlung\b|\bacompte\b|"
    r"\bdown payment\b",
    re.I,
)


def test_an_amount_not_paid_is_found_where_it_was() -> None:
    """NOT_PAID is only asked whether it finds something: the guarded pattern finds
    something in the same texts as the pattern without the guard."""
    samples = ["$12.99", "€10.00 excl. VAT", "£5 + VAT", "2,49 €/kg", "12 zł za 1 kg",
               "4 payments of $12.50", "$9/mo", "100 Kč bez DPH", "Prix HT", "ex GST",
               "Sale price £60.00 Save £20.00", "Netto-Preis", "per 100 ml", "EN 3 FOIS",
               "ſans tva", "KG", "перевод без НДС", "Down payment", "plus tax", "nettoyage"]
    rng = random.Random(47)
    pieces = ["excl", "ex ", "vat", "+", "/", " ", "kg", "per", "net", "ht", "mo", "nth",
              "payments of", "za ", "за ", "кг", "1 ", "en 2 fois", "x", "é", "Ex.", "VAT"]
    samples += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(5000)]
    for text in samples:
        assert bool(NOT_PAID.search(text)) == bool(_NOT_PAID_UNGUARDED.search(text)), text
