"""Tests of class-and-id strings that readers find elements by
(:meth:`.index.PageIndex.with_class`), answered for all tests at once per string."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from ..ascii_case import lowered_letters

# The tests of class-and-id strings that readers find elements by (PageIndex.with_class),
# each a pure function of the string, registered at import (register_class_test). A
# page's distinct strings are asked all of them at once, the answers kept as bits per
# string, remembered across pages (at most _PASSED_LIMIT strings, then forgotten at once).
# A string is asked a test only when the test's need (see register_class_test) matches it.
CLASS_TESTS: dict[Callable[[str], object], int] = {}
_PASSED: dict[str, int] = {}
# each test's need (see register_class_test), and the union of them once built
_NEEDS: dict[Callable[[str], object], re.Pattern[str] | None] = {}
_PREFILTER: list[re.Pattern[str] | None] = []
# each test with its bit and its own need, lower-cased (None: it has none)
_SCREENED: list[tuple[Callable[[str], object], int, re.Pattern[str] | None]] = []
# the tests' (bits, lower-cased needs) that can match where a string has a character,
# by the character, and those that can match anywhere (see _openings)
_OPENING: dict[str, list[tuple[int, re.Pattern[str]]]] = {}
_ANYWHERE: list[tuple[int, re.Pattern[str]]] = []
# A worker crawls many shops at once, ~300 distinct strings a page each: 4096 strings
# were forgotten every dozen shops (a cold page costs several ms more); 32768 strings
# are a few MB.
_PASSED_LIMIT = 32768
_T = TypeVar("_T", bound=Callable[[str], object])


def register_class_test(
    test: _T | None = None, *, need: re.Pattern[str] | None = None
) -> Any:
    """Have :meth:`PageIndex.with_class` answer ``test`` (a pure function of a
    class-and-id string) from the bits of the tests each string passes, looked up once
    per string for all tests, instead of one call per string and test; returns it.

    ``need``: a pattern that every string the test passes matches (for a
    :class:`.dom.CachedSearch`'s ``search``, its own pattern). When every registered
    test has one, a string that matches none of them passes no test: one search of
    their union (a page's first look at a class string, most of which pass no test,
    costs one search instead of one per test). A need whose every alternative opens
    with a letter (``price|amount|now``, not ``(?:^|\\s)btn`` or ``\\bnow\\b``) keeps the
    union fast: the regex engine then skips, at C speed, every position no
    alternative can start at, where a single alternative that opens with an
    anchor has every alternative tried at every position (12 us a string instead of
    4, on the 24,900 class strings of both development sets). So a test whose own
    pattern opens with anchors declares a looser need without them. Usable as a
    decorator, with or without ``need``."""
    if test is None:
        return lambda fn: register_class_test(fn, need=need)
    if test not in CLASS_TESTS:
        CLASS_TESTS[test] = 1 << len(CLASS_TESTS)
        owner = getattr(test, "__self__", None)
        found = need if need is not None else getattr(owner, "pattern", None)
        _NEEDS[test] = found if isinstance(found, re.Pattern) else None
        _PREFILTER.clear()
        _PASSED.clear()
    return test


def _prefilter() -> re.Pattern[str] | None:
    """The union of the tests' needs, or None when a test has none. It is searched in
    the lower-cased string, its letters lower-cased (escapes kept: ``\\S`` stays): a
    superset of every need's matches (a case-sensitive need matches more), several
    times faster than a case-insensitive search. Its alternatives are grouped by
    their first letter (:func:`_by_first_letter`)."""
    if not _PREFILTER:
        needs = list(_NEEDS.values())
        union = None
        if needs and all(n is not None for n in needs):
            joined = "|".join(lowered_letters(n.pattern) for n in needs if n)
            union = re.compile(_by_first_letter(joined))
        _PREFILTER.append(union)
        _SCREENED[:] = [
            (test, bit, _lowered_pattern(need) if need is not None else None)
            for (test, bit), need in zip(CLASS_TESTS.items(), _NEEDS.values(), strict=True)
        ]
        opening, anywhere = _openings([(bit, need) for _, bit, need in _SCREENED if need])
        _OPENING.clear()
        _OPENING.update(opening)
        _ANYWHERE[:] = anywhere
    return _PREFILTER[0]


def prepare_class_tests() -> None:
    """Build the union of the registered tests' needs now (it is built on first use,
    and again after a test is registered): called once the readers' modules are
    imported, so that a worker's first page does not pay the compiling (~10 ms)."""
    _prefilter()


def _openings(
    needs: list[tuple[int, re.Pattern[str]]],
) -> tuple[dict[str, list[tuple[int, re.Pattern[str]]]], list[tuple[int, re.Pattern[str]]]]:
    """The needs that can match at a place, by the character there (those whose every
    alternative opens with a literal character, under each of these characters), and
    those that can match anywhere (an alternative that opens otherwise, ``\\s``,
    ``(?:^|...)``, ``a?``: these are also under every character)."""
    opening: dict[str, list[tuple[int, re.Pattern[str]]]] = {}
    anywhere: list[tuple[int, re.Pattern[str]]] = []
    for bit, need in needs:
        firsts = set()
        for alternative in _spread(need.pattern):
            first = _literal_opening(alternative)
            if not first:
                anywhere.append((bit, need))
                break
            firsts.add(first)
        else:
            for first in firsts:
                opening.setdefault(first, []).append((bit, need))
    for listed in opening.values():
        listed += anywhere
    return opening, anywhere


def _needs_met(
    union: re.Pattern[str],
    text: str,
    opening: dict[str, list[tuple[int, re.Pattern[str]]]],
    anywhere: list[tuple[int, re.Pattern[str]]],
) -> int:
    """The bits of the needs (:func:`_openings`) that ``text`` matches, found where
    their union matches: a need matches somewhere exactly when it matches at a place
    where the union does, and there only if it can open with the character there.
    Most strings that match the union match one need at one place: a search of the
    union per place and a match or two at it, not a search per need (2.4x as fast
    on the dev set's class strings that match the union)."""
    met = 0
    found = union.search(text)
    while found is not None:
        at = found.start()
        for bit, need in opening.get(text[at : at + 1], anywhere):
            if not met & bit and need.match(text, at):
                met |= bit
        # (a search from past the end would start at the end again)
        found = union.search(text, at + 1) if at < len(text) else None
    return met


def _lowered_pattern(need: re.Pattern[str]) -> re.Pattern[str]:
    """A need to search in lower-cased strings (see :func:`_prefilter`)."""
    return re.compile(_by_first_letter(lowered_letters(need.pattern)))


def _by_first_letter(source: str) -> str:
    """A pattern's source rewritten to find a match where it finds one, its top-level
    alternatives grouped by the literal character they open with: ``price|prix|amount``
    is ``p(?:rice|rix)|a(?:mount)``; a leading group is spread over its alternatives
    first (``(?:item|art)-no`` is ``item-no|art-no``). The regex engine tries every
    top-level alternative at every position of the string; grouped, it tries one per
    opening character, and when every alternative opens with a literal one it skips,
    at C speed, the positions where none of them can start. The union of the needs
    (~60 alternatives) is then searched in a page's new class strings (most of a
    first page's) 3.5 times as fast: 5.6 ms instead of 20.6 for the 8,500 distinct
    class strings of the intl development set, 14 instead of 50 for the 16,800 of
    the other one."""
    groups: dict[str, list[str]] = {}
    others: list[str] = []
    for alternative in _spread(source):
        first = _literal_opening(alternative)
        if first:
            groups.setdefault(first, []).append(alternative[1:])
        else:
            others.append(alternative)
    grouped = [first + "(?:" + "|".join(rests) + ")" for first, rests in groups.items()]
    return "|".join(grouped + others)


# what repeats the character or group before it in a pattern's source
_QUANTIFIERS = ("?", "*", "+", "{")


def _literal_opening(alternative: str) -> str:
    """The literal character an alternative of a pattern's source opens with (a
    letter, a digit, "-" or "_" not repeated: every match of it starts with that
    character), or "" when it opens otherwise (an escape, a set, a group, an anchor)."""
    first = alternative[:1]
    if first and (first.isalnum() or first in "-_") and alternative[1:2] not in _QUANTIFIERS:
        return first
    return ""


def _spread(source: str) -> list[str]:
    """The top-level alternatives of a pattern's source, an alternative that opens
    with a non-capturing group not repeated (``(?:a|b)c``) spread over the group's
    own (``ac``, ``bc``)."""
    out: list[str] = []
    for alternative in _split(source, _syntax(source)):
        if alternative.startswith("(?:"):
            syntax = _syntax(alternative)
            end = next(at for at, char, depth in syntax if char == ")" and depth == 0)
            if alternative[end + 1 : end + 2] not in _QUANTIFIERS:
                inner = alternative[3:end]
                out += [each + alternative[end + 1 :] for each in _spread(inner)]
                continue
        out.append(alternative)
    return out


def _split(source: str, syntax: list[tuple[int, str, int]]) -> list[str]:
    """``source`` split at its top-level ``|``."""
    cuts = [at for at, char, depth in syntax if char == "|" and depth == 0]
    starts, ends = [-1, *cuts], [*cuts, len(source)]
    return [source[start + 1 : end] for start, end in zip(starts, ends, strict=True)]


def _syntax(source: str) -> list[tuple[int, str, int]]:
    """(position, character, depth outside it) of each ``(``, ``)`` and ``|`` of a
    pattern's source that is no escaped character nor in a set (``[...]``)."""
    found: list[tuple[int, str, int]] = []
    depth, at = 0, 0
    while at < len(source):
        char = source[at]
        if char == "\\":
            at += 1
        elif char == "[":  # passed up to its closing "]"
            at += 2 if source[at + 1 : at + 2] == "^" else 1
            first = True  # a set's first character is one of its own, "]" too
            while at < len(source) and (first or source[at] != "]"):
                at += 2 if source[at] == "\\" else 1
                first = False
        elif char == "(":
            found.append((at, char, depth))
            depth += 1
        elif char == ")":
            depth -= 1
            found.append((at, char, depth))
        elif char == "|":
            found.append((at, char, depth))
        at += 1
    return found


def passed_tests(key: str) -> int:
    """The bits of the registered tests ``key`` passes (remembered)."""
    bits = _PASSED.get(key)
    if bits is None:
        if len(_PASSED) >= _PASSED_LIMIT:
            _PASSED.clear()
        union, lowered = _prefilter(), key.lower()
        if union is None:  # a test without a need: each need searched, the test asked
            bits = _PASSED[key] = sum(
                bit
                for test, bit, need in _SCREENED
                if (need is None or need.search(lowered)) and test(key)
            )
        else:  # a test is asked only when its own need matches (fast: see the needs)
            met = _needs_met(union, lowered, _OPENING, _ANYWHERE)
            bits = _PASSED[key] = (
                sum(bit for test, bit, _ in _SCREENED if met & bit and test(key)) if met else 0
            )
    return bits
