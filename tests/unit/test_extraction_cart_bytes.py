"""A cart word found in a page's ASCII-lowered UTF-8 (``mentions_a_cart`` given the
body) is found in its ``str.lower()`` (without it), and the other way round: the
forms of each word's characters are all the characters that lower to them, and the
two searches agree on texts of every case, the Kelvin sign, the dotted capital I
and the Greek capital sigma (whose lower case depends on the next letter)."""

from __future__ import annotations

import random

from crawler.extraction.visible.buy import _CART_WORDS, _lowered_forms, mentions_a_cart


def test_forms_are_every_character_that_lowers_to_a_word_character() -> None:
    chars = {char for word in _CART_WORDS for char in word}
    found: dict[str, set[str]] = {char: {char} for char in chars}
    for point in range(0x110000):
        char = chr(point)
        lowered = char.lower()
        if lowered in found and not "A" <= char <= "Z":  # the bytes' lower() lowers A-Z
            found[lowered].add(char)
    assert {char: set(_lowered_forms(char)) for char in chars} == found


def _recased(word: str, rng: random.Random) -> str:
    out = []
    for char in word:
        pick = rng.random()
        if char == "k" and pick < 0.2:
            out.append("\u212a")  # Kelvin sign: lowers to "k"
        elif pick < 0.5:
            out.append(char.upper())
        else:
            out.append(char)
    return "".join(out)


def test_bytes_search_agrees_with_lowered_text() -> None:
    rng = random.Random(7)
    filler = list("abcdeiklnorst -_/<>=\"'.\n") + [
        "\u0130", "\u03a3", "\u00e9", "\u0161", "\u0160", "\u043a", "\u041a", "\u30ab",
        "\u8cfc", "\u05e1", "\u0633", "\u212a", "\u1ecf", "\u1ece", "\u00ed", "\u00cd",
    ]
    agreed = found = 0
    for _ in range(6000):
        pieces = ["".join(rng.choices(filler, k=rng.randrange(0, 30)))]
        if rng.random() < 0.6:
            word = rng.choice(_CART_WORDS)
            recased = _recased(word, rng)
            if rng.random() < 0.3:  # a word broken by one character
                at = rng.randrange(len(recased))
                recased = recased[:at] + rng.choice(filler) + recased[at + 1 :]
            pieces.append(recased)
        pieces.append("".join(rng.choices(filler, k=rng.randrange(0, 30))))
        text = "".join(pieces)
        expected = mentions_a_cart(text)
        assert mentions_a_cart(text, text.encode()) == expected, text
        agreed += 1
        found += expected
    assert agreed == 6000 and 1000 < found < 5000
