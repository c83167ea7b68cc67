"""Tests of class-and-id strings that readers find elements by
(:meth:`.index.PageIndex.with_class`), answered for all tests at once per string."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

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
    times faster than a case-insensitive search."""
    if not _PREFILTER:
        needs = list(_NEEDS.values())
        union = None
        if needs and all(n is not None for n in needs):
            union = re.compile("|".join(_lowered(n.pattern) for n in needs if n))
        _PREFILTER.append(union)
        _SCREENED[:] = [
            (test, bit, re.compile(_lowered(need.pattern)) if need is not None else None)
            for (test, bit), need in zip(CLASS_TESTS.items(), _NEEDS.values(), strict=True)
        ]
    return _PREFILTER[0]


def _lowered(source: str) -> str:
    """A pattern's source with its letters lower-cased, its escapes (``\\S``, ``\\W``) kept."""
    return re.sub(r"\\.|[A-Z]", _lower_letter, source)


def _lower_letter(match: re.Match[str]) -> str:
    found = match.group(0)
    return found if len(found) > 1 else found.lower()


def passed_tests(key: str) -> int:
    """The bits of the registered tests ``key`` passes (remembered)."""
    bits = _PASSED.get(key)
    if bits is None:
        if len(_PASSED) >= _PASSED_LIMIT:
            _PASSED.clear()
        union, lowered = _prefilter(), key.lower()
        if union is not None and not union.search(lowered):
            bits = _PASSED[key] = 0
        else:  # a test is asked only when its own need matches (fast: see the needs)
            bits = _PASSED[key] = sum(
                bit
                for test, bit, need in _SCREENED
                if (need is None or need.search(lowered)) and test(key)
            )
    return bits
