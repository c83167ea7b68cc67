"""Numbers as quote pages write them: separators of every locale, signs, percents, suffixes.

``1,234.56`` and ``1.234,56`` and ``1 234,56`` and ``1'234.56`` are the same
number; ``2.95T``, ``2,95 Bio.``, ``12,5 Md``, ``1.2M``, ``3.4 bn``, ``1,2 Mio.``,
``5億`` are scaled by their suffix; a number written in several CJK units is read
whole (``2兆3,456億円``, ``3조 4,567억원``). Which separator is the decimal one is read
from the number itself when it can be (both separators, a group that is not
three digits), else from the page's :class:`NumberStyle` (its language, or the
numbers it shows: :func:`infer_style`). A bare ``1,234`` on an English page is a
thousand and more, on a German one a little more than one.

Signs: ``+``, ``-``, ``−`` (U+2212), a parenthesised number and the arrows
``▲``/``▼`` that quote pages put before a change.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from crawler.extraction.normalize.price import _ASCII  # other scripts' digits, as ASCII


@dataclass(frozen=True)
class NumberStyle:
    """A locale's decimal separator (``"."`` or ``","``)."""

    decimal: str

    @property
    def thousands(self) -> str:
        return "," if self.decimal == "." else "."


DOT = NumberStyle(".")
COMMA = NumberStyle(",")

# Languages whose numbers have a decimal comma (class: continental Europe, Latin
# America but Mexico, Russia, Turkey, Indonesia...); the others here a dot.
_COMMA_LANGUAGES = frozenset(
    "de fr es it pt nl ru pl sv da nb nn no fi cs sk sl hr ro tr hu el id vi uk bg lt lv et ca "
    "sr bs mk is az kk be".split()
)
_DOT_LANGUAGES = frozenset("en ja zh ko he th hi ms tl ar fa ur bn ta te".split())
# Countries that write a dot in a comma language (Switzerland: 1'234.56; Mexico...).
_DOT_COUNTRIES = frozenset("CH LI MX GT HN NI SV DO PR".split())
_LANG = re.compile(r"^([a-z]{2,3})(?:[-_]([a-z]{2}))?", re.I)


def style_for_language(tag: str | None) -> NumberStyle | None:
    """The number style of a language tag (``de-DE``: comma, ``de-CH``: dot), or None."""
    match = _LANG.match((tag or "").strip())
    if not match:
        return None
    language, country = match.group(1).lower(), (match.group(2) or "").upper()
    if language in _COMMA_LANGUAGES:
        return DOT if country in _DOT_COUNTRIES else COMMA
    if language in _DOT_LANGUAGES:
        return DOT
    return None


_SPACES = "\u00a0\u202f\u2009\u2007 "
# A number: digits grouped by spaces or apostrophes (then maybe a decimal part), or
# digits with dots and commas, or a single digit. Not preceded by a letter or digit.
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9.,])(?P<sign>[+\-−](?=\d)|[▲▼△▽↑↓][ \u00a0]?)?"
    r"(?P<digits>\d{1,3}(?:[" + _SPACES + r"'’]\d{3})+(?:[.,]\d+)?|\d[\d.,]*\d|\d)"
)
# Scale words and abbreviations after a number, longest first (class: quote pages in
# English, German, French, Spanish, Italian, Portuguese, Dutch, Nordic, Polish, Russian,
# Japanese, Chinese, Korean, Indian). "billion" is 10^9 in English, 10^12 elsewhere.
_SCALES: list[tuple[str, int]] = [
    ("trillions", 12), ("trillion", 12), ("billions", 9), ("billion", 9),
    ("milliards", 9), ("milliarden", 9), ("milliarde", 9), ("milliard", 9),
    ("miliardi", 9), ("miliardo", 9), ("miljarder", 9), ("miljard", 9), ("mil millones", 9),
    ("millions", 6), ("million", 6), ("millionen", 6), ("millones", 6), ("milioni", 6),
    ("milhões", 6), ("milhoes", 6), ("miljoner", 6), ("miljoen", 6), ("bilhões", 9),
    ("bilhoes", 9), ("trilhões", 12), ("tausend", 3), ("thousand", 3), ("crore", 7),
    ("lakh", 5), ("Bio.", 12), ("Bio", 12), ("Mrd.", 9), ("Mrd", 9), ("Mds", 9), ("Md", 9),
    ("Mld.", 9), ("Mld", 9), ("mld", 9), ("mlrd", 9), ("Mio.", 6), ("Mio", 6), ("Mln", 6),
    ("mln", 6), ("Mn", 6), ("mn", 6), ("mil", 3), ("MM", 6), ("bn", 9), ("Bn", 9), ("tn", 12),
    ("Tsd.", 3), ("Tsd", 3), ("tys.", 3), ("tys", 3), ("mdr", 9), ("milj.", 6), ("mi", 6),
    ("bi", 9), ("tri", 12), ("трлн", 12), ("млрд", 9), ("млн", 6), ("тыс.", 3), ("тыс", 3),
    ("兆", 12), ("億", 8), ("亿", 8), ("万", 4), ("萬", 4), ("千", 3), ("조", 12), ("억", 8),
    ("만", 4), ("百万", 6), ("백만", 6), ("Cr", 7), ("K", 3), ("k", 3), ("M", 6), ("m", 6),
    ("B", 9), ("T", 12),
]
_NON_ENGLISH_BILLION = {"billion": 12, "billions": 12}
_CJK_SCALES = [word for word, _ in _SCALES if not word[0].isascii() and word[0] > "\u2e80"]
_WORD_SCALES = sorted((w for w, _ in _SCALES if w not in _CJK_SCALES), key=len, reverse=True)
# a word or abbreviation ends there (not "M" of "MXN", "K" of "Kč"); a CJK sign is one
_SCALE = re.compile(
    r"[ \u00a0]?(?P<scale>(?:"
    + "|".join(re.escape(word) for word in _WORD_SCALES)
    + r")(?![^\W\d_])|"
    + "|".join(re.escape(word) for word in _CJK_SCALES)
    + ")"
)
_SCALE_POWERS = dict(_SCALES)
_PERCENT = re.compile(r"\s?(?:%|％|pct\b|procent\b|prozent\b)", re.I)
_NEGATIVE_SIGNS = frozenset("-−▼▽↓")


@dataclass(frozen=True)
class Number:
    """One number found in a text: its value (sign and scale applied), whether a sign or
    a percent was written, and where it was."""

    value: Decimal
    signed: bool
    percent: bool
    start: int
    end: int


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_ASCII)


def _digits(raw: str, style: NumberStyle | None, whole: bool) -> Decimal | None:
    """The value of digits with separators (see the module's doc)."""
    text = raw
    for space in _SPACES + "'’":
        text = text.replace(space, "")
    dots, commas = text.count("."), text.count(",")
    if dots and commas:
        decimal = "." if text.rfind(".") > text.rfind(",") else ","
    elif dots or commas:
        separator = "." if dots else ","
        tail = text.rsplit(separator, 1)[1]
        if dots + commas > 1:
            decimal = "" if len(tail) == 3 else separator  # 1.234.567 / 1.234.5 (odd)
        elif len(tail) != 3:
            decimal = separator  # 1,5 / 12.25 / 0.0834
        elif whole:
            decimal = ""  # a count: 52,345 is fifty-two thousand...
        elif style is not None:
            decimal = separator if separator == style.decimal else ""
        else:
            decimal = "." if separator == "." else ""  # unknown: a dot decimal, a comma group
    else:
        decimal = ""
    if decimal:
        thousands = "," if decimal == "." else "."
        whole_part, _, fraction = text.rpartition(decimal)
        if decimal in whole_part:
            return None
        text = whole_part.replace(thousands, "") + "." + fraction
    else:
        text = text.replace(".", "").replace(",", "")
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def find_numbers(
    text: str, style: NumberStyle | None = None, language: str | None = None, whole: bool = False
) -> list[Number]:
    """Every number of ``text`` in order: separators read as the module says, the sign, a
    scale suffix (``language``: which ``billion`` it is) and a following percent sign
    applied. ``whole``: the numbers are counts (a lone group of three digits is thousands)."""
    plain = _plain(text)
    found: list[Number] = []
    matches = list(_NUMBER.finditer(plain))
    index = 0
    while index < len(matches):
        match = matches[index]
        index += 1
        value = _digits(match.group("digits"), style, whole)
        if value is None:
            continue
        end = match.end()
        scale = _SCALE.match(plain, end)
        if scale:
            word = scale.group("scale")
            power = _SCALE_POWERS[word]
            if word.lower() in _NON_ENGLISH_BILLION and (language or "en")[:2] != "en":
                power = _NON_ENGLISH_BILLION[word.lower()]
            value = value.scaleb(power)
            end = scale.end()
            # "2兆3,456億円", "3조 4,567억원": the next parts of smaller units are this number's
            while word in _CJK_SCALES and index < len(matches):
                following = matches[index]
                if plain[end : following.start()].strip() or following.group("sign"):
                    break
                unit = _SCALE.match(plain, following.end())
                part = _digits(following.group("digits"), style, whole)
                if unit is None or unit.group("scale") not in _CJK_SCALES or part is None:
                    break
                if _SCALE_POWERS[unit.group("scale")] >= power:
                    break
                word, power = unit.group("scale"), _SCALE_POWERS[unit.group("scale")]
                value += part.scaleb(power)
                end = unit.end()
                index += 1
            if value == value.to_integral_value():
                value = value.quantize(Decimal(1))
        percent = _PERCENT.match(plain, end)
        if percent:
            end = percent.end()
        sign = (match.group("sign") or "").strip()
        before = plain[max(0, match.start() - 1) : match.start()]
        negative = sign in _NEGATIVE_SIGNS or (
            before == "(" and plain[end : end + 1] == ")" and not percent
        )
        found.append(
            Number(
                -value if negative else value,
                signed=bool(sign),
                percent=bool(percent),
                start=match.start(),
                end=end,
            )
        )
    return found


_UNIT_PARENTHESES = re.compile(r"[(（]([^)）]{1,16})[)）]")
_CURRENCY_WORDS = re.compile(
    r"(?i)(?<![a-z])(?:rs\.?|inr|usd|eur|jpy|krw|brl|in)(?![a-z])|[$€£¥₹₩円원]|R\$"
)


def label_scale(label: str) -> int | None:
    """The power of ten a label's parentheses name for its values (``Market Cap (Rs. Cr.)``,
    ``時価総額(百万円)``, ``Marktkap. (Mrd. EUR)``), or None."""
    for inner in _UNIT_PARENTHESES.findall(_plain(label)):
        word = " ".join(_CURRENCY_WORDS.sub(" ", inner).split()).strip(" ,")
        for form in (word, word + ".", word.rstrip(".")):
            if form in _SCALE_POWERS and form not in ("m", "k", "mi", "bi", "mil"):
                return _SCALE_POWERS[form]
        if word.lower() in ("crores", "lakhs"):
            return {"crores": 7, "lakhs": 5}[word.lower()]
    return None


def has_scale(text: str) -> bool:
    """Does a number of ``text`` carry a scale suffix of its own (``2,95 Bio.``, ``5億``)?"""
    plain = _plain(text)
    return any(_SCALE.match(plain, match.end()) for match in _NUMBER.finditer(plain))


def parse_number(
    text: str | None, style: NumberStyle | None = None, language: str | None = None
) -> Decimal | None:
    """The first number of ``text`` (see :func:`find_numbers`), or None."""
    if not text:
        return None
    numbers = find_numbers(text, style, language)
    return numbers[0].value if numbers else None


def parse_count(
    text: str | None, style: NumberStyle | None = None, language: str = ""
) -> int | None:
    """A count (a volume): the first number of ``text`` as a whole number, or None."""
    if not text:
        return None
    numbers = find_numbers(text, style, language, whole=True)
    if not numbers:
        return None
    value = numbers[0].value
    return int(value.to_integral_value())


# Numbers that look decided: "1.234,56" (comma decimal), "1,234.56" (dot decimal),
# "12,5" and "12.50" (no group of three after the only separator).
_DECIDED = re.compile(r"(?<![\d.,])\d{1,3}(?:([.,])\d{3})+([.,])\d{1,2}(?![\d.,])")
_SHORT_TAIL = re.compile(r"(?<![\d.,])\d+([.,])\d{1,2}(?![\d.,])")


def infer_style(text: str) -> NumberStyle | None:
    """The decimal separator most numbers of a page's text show, or None when they do not
    say (used when the page declares no language)."""
    votes: Counter[str] = Counter()
    for match in _DECIDED.finditer(text):
        if match.group(1) != match.group(2):
            votes[match.group(2)] += 2
    for match in _SHORT_TAIL.finditer(text):
        votes[match.group(1)] += 1
    if not votes:
        return None
    separator, _ = votes.most_common(1)[0]
    return DOT if separator == "." else COMMA
