"""A listed product's amounts (issue 43): the plain ones ("£1,299.99") read without
price-parser give what ``parse_price`` and ``currency_from_text`` give, for every sign,
currency hint (none, dollars, zero- and three-decimal currencies), with and without a
space and thousands, up to 15 digits; the others are read by them."""

from __future__ import annotations

import random

import pytest

from crawler.extraction.card_text import money
from crawler.extraction.normalize.currency import currency_from_text
from crawler.extraction.normalize.price import parse_price

HINTS = (None, "USD", "TWD", "CLP", "JPY", "KWD", "GBP", "INR")


def _digits(rng: random.Random) -> list[str]:
    found = ["0", "00", "007", "1", "10", "999", "1000"]
    for length in range(1, 16):
        found += ["".join(rng.choice("0123456789") for _ in range(length)) for _ in range(3)]
    return found


def _grouped(digits: str) -> str:
    plain = digits.lstrip("0") or "0"
    backwards = plain[::-1]
    return ",".join(backwards[i : i + 3] for i in range(0, len(backwards), 3))[::-1]


def _amounts() -> list[str]:
    rng = random.Random(43)
    amounts: list[str] = []
    for digits in _digits(rng):
        for number in {digits, _grouped(digits)}:
            for cents in ("00", "05", "99", f"{rng.randrange(100):02d}"):
                amounts += [
                    f"{sign}{space}{number}.{cents}" for sign in "$£€" for space in ("", " ")
                ]
    return amounts


def test_a_plain_amount_reads_as_parse_price_reads_it() -> None:
    for amount in _amounts():
        for hint in HINTS:
            currency = currency_from_text(amount, hint)
            expected = (parse_price(amount, currency), currency)
            assert repr(money(amount, hint)) == repr(expected), (amount, hint)


@pytest.mark.parametrize(
    "amount", ["€1.299,00", "1.299,00 €", "EUR 12,50", "₹1,29,999", "$12", "£ 1 299.00", "12,99 $"]
)
def test_other_amounts_are_read_by_parse_price(amount: str) -> None:
    for hint in HINTS:
        currency = currency_from_text(amount, hint)
        assert repr(money(amount, hint)) == repr((parse_price(amount, currency), currency))
