"""Numbers as quote pages write them: every locale's separators, signs, percents, suffixes.

Property-based (hypothesis): a decimal written the way a locale writes it, with or
without a scale suffix, reads back as the same decimal.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.extraction.quotes.numbers import (
    COMMA,
    DOT,
    find_numbers,
    infer_style,
    parse_count,
    parse_number,
    style_for_language,
)

# (thousands separator, decimal separator, style, language)
LOCALES = [
    (",", ".", DOT, "en"),
    (".", ",", COMMA, "de"),
    ("\u202f", ",", COMMA, "fr"),
    ("\u00a0", ",", COMMA, "fr"),
    (" ", ",", COMMA, "pl"),
    ("'", ".", DOT, "de-CH"),
    ("’", ".", DOT, "de-CH"),
]


def written(value: Decimal, thousands: str, decimal: str, decimals: int) -> str:
    text = f"{value:,.{decimals}f}"
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


@settings(max_examples=300, deadline=None)
@given(
    st.decimals(min_value=Decimal("0.01"), max_value=Decimal("9999999999"), places=2),
    st.sampled_from(LOCALES),
    st.sampled_from(["", "€", "$", " EUR", "CHF "]),
)
def test_a_price_reads_back_in_every_locale(value, locale, currency):
    thousands, decimal, style, language = locale
    text = written(value, thousands, decimal, 2)
    text = f"{currency}{text}" if currency.endswith(" ") or currency == "$" else text + currency
    assert parse_number(text, style, language) == value


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(LOCALES))
def test_a_volume_reads_back_in_every_locale_even_without_the_style(count, locale):
    thousands, _, style, _ = locale
    text = written(Decimal(count), thousands, ".", 0)
    assert parse_count(text, style) == count
    assert parse_count(text, None) == count  # a count's groups of three are thousands


SUFFIXES = [
    ("T", "en", 12),
    ("B", "en", 9),
    ("bn", "en", 9),
    ("M", "en", 6),
    ("m", "en", 6),
    ("K", "en", 3),
    ("k", "en", 3),
    (" Bio.", "de", 12),
    (" Mrd.", "de", 9),
    (" Mio.", "de", 6),
    (" Md", "fr", 9),
    (" Mds", "fr", 9),
    (" milliards", "fr", 9),
    (" billions", "fr", 12),
    (" billion", "en", 9),
    (" millones", "es", 6),
    (" mil millones", "es", 9),
    (" mld", "pl", 9),
    (" mln", "pl", 6),
    ("億", "ja", 8),
    ("兆", "ja", 12),
    ("万", "ja", 4),
    (" млрд", "ru", 9),
]


@settings(max_examples=300, deadline=None)
@given(
    st.decimals(min_value=Decimal("0.01"), max_value=Decimal("999.99"), places=2),
    st.sampled_from(SUFFIXES),
)
def test_a_scaled_number_reads_back(value, suffix):
    word, language, power = suffix
    style = style_for_language(language)
    decimal = style.decimal if style else "."
    text = written(value, "", decimal, 2) + word
    assert parse_number(text, style, language) == value.scaleb(power)


@pytest.mark.parametrize(
    ("text", "style", "language", "expected"),
    [
        ("1.234,56 €", None, None, "1234.56"),
        ("$1,234.56", None, None, "1234.56"),
        ("1 234,56 €", None, None, "1234.56"),
        ("CHF 1'234.50", None, None, "1234.50"),
        ("2,95 Bio. €", COMMA, "de", "2950000000000"),
        ("1.2M", None, None, "1200000"),
        ("12,5 Md €", COMMA, "fr", "12500000000"),
        ("1,234", None, None, "1234"),  # no locale: an English group of thousands
        ("1,234", COMMA, "de", "1.234"),  # German: a decimal comma
        ("12.345", None, None, "12.345"),
        ("12.345", COMMA, "es", "12345"),
        ("0.0834", None, None, "0.0834"),
        ("▼ 1.23", None, None, "-1.23"),
        ("−1,5 %", COMMA, "de", "-1.5"),
        ("(1.23)", None, None, "-1.23"),
        ("12 MXN", None, None, "12"),  # a currency code is no suffix
        ("1.234,56 Kč", COMMA, "cs", "1234.56"),
        ("株価1,234円", None, "ja", "1234"),
    ],
)
def test_numbers_of_quote_pages(text, style, language, expected):
    assert parse_number(text, style, language) == Decimal(expected)


def test_a_change_and_its_percent_and_a_range():
    change, percent = find_numbers("+1.23 (+0.66%)")
    assert (change.value, change.signed, change.percent) == (Decimal("1.23"), True, False)
    assert (percent.value, percent.percent) == (Decimal("0.66"), True)
    low, high = find_numbers("185.00 - 189.20")  # a range's dash is no sign
    assert (low.value, high.value) == (Decimal("185.00"), Decimal("189.20"))
    assert [n.value for n in find_numbers("185,00–189,20", COMMA)] == [
        Decimal("185.00"),
        Decimal("189.20"),
    ]


def test_the_style_of_a_language_and_of_a_page():
    assert style_for_language("de-DE") is COMMA
    assert style_for_language("de-CH") is DOT
    assert style_for_language("es-MX") is DOT
    assert style_for_language("ja") is DOT
    assert style_for_language("xx") is None
    assert infer_style("Kurs 1.234,56 € Vortag 1.230,10 €") is COMMA
    assert infer_style("Price $1,234.56 prev 1,230.10") is DOT
    assert infer_style("no numbers here") is None


def test_what_is_no_number():
    assert parse_number("") is None
    assert parse_number("n/a") is None
    assert parse_number("1.234.5") is None  # two dots and a lone digit: not a number
