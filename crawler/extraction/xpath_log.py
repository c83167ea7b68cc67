"""Keep extruct's compiled XPath from keeping an error log that grows with every page.

An ``lxml.etree.XPath`` object keeps every error libxml2 reports while it
evaluates, for as long as the object lives (its ``error_log``; lxml has no
public way to clear it). With libxml2 2.14 (lxml 6) an evaluation of the EXSLT
``set:difference`` function reports a spurious ``ERR_NO_MEMORY`` ("unknown
error") although its result is right, and extruct's microdata extractor
evaluates one, ``LxmlMicrodataExtractor._xp_prop``, compiled once at import, for
every microdata item of every page. That is about 135 bytes a call kept for the
life of the worker: it was the steady growth of a worker's memory over a
100 000-page crawl (see docs/benchmarks.md).

:func:`bound_microdata_error_log` puts a :class:`RecycledXPath` in its place:
the same expression, compiled afresh every ``RECYCLE_EVERY`` evaluations, so
the log it keeps never holds more than that many entries.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

RECYCLE_EVERY = 1000
EXSLT_SETS = {"set": "http://exslt.org/sets"}


class RecycledXPath:
    """An ``etree.XPath`` compiled again every ``every`` calls (its error log with it)."""

    def __init__(
        self, path: str, namespaces: dict[str, str] | None = None, every: int = RECYCLE_EVERY
    ) -> None:
        self.path = path
        self.namespaces = namespaces
        self.every = max(1, every)
        self._calls = 0
        self._xpath = etree.XPath(path, namespaces=namespaces)

    def __call__(self, node: Any, **variables: Any) -> Any:
        self._calls += 1
        if self._calls > self.every:
            self._calls = 1
            self._xpath = etree.XPath(self.path, namespaces=self.namespaces)
        return self._xpath(node, **variables)

    @property
    def error_log(self) -> Any:
        """The log of the XPath in use (at most ``every`` evaluations' errors)."""
        return self._xpath.error_log


def bound_microdata_error_log() -> None:
    """Swap extruct's microdata property XPath for a :class:`RecycledXPath` (once)."""
    from extruct.w3cmicrodata import LxmlMicrodataExtractor

    current = LxmlMicrodataExtractor._xp_prop
    if isinstance(current, RecycledXPath):
        return
    LxmlMicrodataExtractor._xp_prop = RecycledXPath(current.path, EXSLT_SETS)  # type: ignore[assignment]
