"""Tests of class-and-id strings that readers find elements by
(:meth:`.index.PageIndex.with_class`), answered for all tests at once per string."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

# The tests of class-and-id strings that readers find elements by (PageIndex.with_class),
# each a pure function of the string, registered at import (register_class_test). A
# page's distinct strings are asked all of them at once, the answers kept as bits per
# string, remembered across pages (at most _PASSED_LIMIT strings, then forgotten at once).
CLASS_TESTS: dict[Callable[[str], object], int] = {}
_PASSED: dict[str, int] = {}
# A worker crawls many shops at once, ~300 distinct strings a page each: 4096 strings
# were forgotten every dozen shops (a cold page costs several ms more); 32768 strings
# are a few MB.
_PASSED_LIMIT = 32768
_T = TypeVar("_T", bound=Callable[[str], object])


def register_class_test(test: _T) -> _T:
    """Have :meth:`PageIndex.with_class` answer ``test`` (a pure function of a
    class-and-id string) from the bits of the tests each string passes, looked up once
    per string for all tests, instead of one call per string and test; returns it."""
    if test not in CLASS_TESTS:
        CLASS_TESTS[test] = 1 << len(CLASS_TESTS)
        _PASSED.clear()
    return test


def passed_tests(key: str) -> int:
    """The bits of the registered tests ``key`` passes (remembered)."""
    bits = _PASSED.get(key)
    if bits is None:
        if len(_PASSED) >= _PASSED_LIMIT:
            _PASSED.clear()
        bits = _PASSED[key] = sum(bit for test, bit in CLASS_TESTS.items() if test(key))
    return bits
