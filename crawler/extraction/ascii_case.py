"""Case-insensitive searches of ASCII text, made case-sensitive.

A pattern compiled with ``re.IGNORECASE`` tries every alternative of a long list of
phrases at each position of a text (the engine's quick test of a phrase's first
character is skipped when case is ignored): on a short ASCII text (most of a page's
link and button labels, headings and stock lines), searching the text lowered with
the same phrases case-sensitively is three to five times as fast. It finds the same:
in ASCII text, a letter of the pattern matches only its two cases, but for the few
non-ASCII letters that ignoring case lets match ASCII ones (the dotless "ı" of
Turkish matches "i" and "I"), which are given those letters (:func:`for_lowered_ascii`).
"""

from __future__ import annotations

import re
import string
from functools import lru_cache


def for_lowered_ascii(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` (compiled with ``re.IGNORECASE``) as a case-sensitive pattern that
    finds, in an ASCII text lowered (``str.lower``), what ``pattern`` finds in the text:
    its ASCII letters lowered (escapes such as ``\\S`` kept), each non-ASCII character
    that ignoring case lets match ASCII letters written with those letters. Raises
    ``ValueError`` for such a character inside a set (``[...]``), which this does
    not rewrite."""
    if not pattern.flags & re.IGNORECASE:
        raise ValueError("the pattern does not ignore case")
    source, out, at, in_set = lowered_letters(pattern.pattern), [], 0, False
    while at < len(source):
        char = source[at]
        if char == "\\":  # an escape, kept as written (``\S`` is no ``\s``)
            out.append(source[at : at + 2])
            at += 2
            continue
        if in_set:
            in_set = char != "]" or source[at - 1] == "["
        elif char == "[":
            in_set = True
        also = _ascii_twins(char)
        if also and in_set:
            raise ValueError(f"{char!r} in a set matches {also!r} when case is ignored")
        out.append(f"[{char}{also}]" if also else char)
        at += 1
    return re.compile("".join(out), pattern.flags & ~re.IGNORECASE)


class CaseFolded:
    """A case-insensitive pattern, asked of an ASCII text as :func:`for_lowered_ascii`
    of it in the text lowered (the same matches and spans), of any other text as it
    is: the search that most of a page's short texts take."""

    __slots__ = ("pattern", "lowered")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.lowered = for_lowered_ascii(pattern)

    def found(self, text: str) -> bool:
        """The pattern matches somewhere in ``text``."""
        if text.isascii():
            return self.lowered.search(text.lower()) is not None
        return self.pattern.search(text) is not None

    def sub(self, repl: str, text: str) -> str:
        """``pattern.sub(repl, text)``, an ASCII text lowered first (the rest of it is
        then in lower case: for callers that read what is left, not its letters)."""
        if text.isascii():
            return self.lowered.sub(repl, text.lower())
        return self.pattern.sub(repl, text)


def lowered_letters(source: str) -> str:
    """A pattern's source with its ASCII letters lower-cased, its escapes (``\\S``,
    ``\\W``) kept."""
    return re.sub(r"\\.|[A-Z]", _lower_letter, source)


def _lower_letter(match: re.Match[str]) -> str:
    found = match.group(0)
    return found if len(found) > 1 else found.lower()


@lru_cache(maxsize=4096)
def _ascii_twins(char: str) -> str:
    """The lower-case ASCII letters a non-ASCII ``char`` matches when case is ignored.

    Asked of every character of the extractor's phrase lists at import: the regex
    engine is asked only of a character whose lower, upper or folded case holds an
    ASCII character, as every character that matches an ASCII letter does (in all of
    Unicode: "İ", "ı", "ſ" and the Kelvin sign; the others' 26 searches each cost a
    worker about a second of CPU at start-up)."""
    if char.isascii() or not any(
        found.isascii() for found in char.lower() + char.upper() + char.casefold()
    ):
        return ""
    return "".join(
        letter for letter in string.ascii_lowercase
        if re.fullmatch(re.escape(char), letter, re.IGNORECASE)
    )
