"""Evidence from the whole shop: what many pages of one site say that one page cannot.

A worker meets many pages of a shop. Counted over them, in bounded memory per site
(:class:`SiteEvidence`, at most :data:`MAX_KEYS` counters), they say:

* **the site's template**: a stock statement (an element's short text naming a stock
  state, at one tag path, :func:`.visible.sitepaths.element_path`) seen on most of the
  site's pages (at least :data:`TEMPLATE_SHARE` of them, :data:`MIN_PAGES` pages at
  least) and on pages it cannot describe (a page with no product, or one whose
  structured data says another state; two at least, a tenth of the pages it is on) is
  the template's (a delivery notice, a mini-cart, a "sold out" badge of a
  recommendation strip), not this product's stock: the stock readers skip it;
* **where the site shows a field**: on pages whose structured data gives the price or
  the stock state, the visible element showing the same value (its "twin") is noted
  by its tag path; a path holding :data:`POSITION_SHARE` of :data:`MIN_VOTES` votes at
  least is the site's position of that field, read on the site's pages that lack
  structured data (provenance ``site``);
* **disagreement**: on a page with structured data, a field whose value differs from
  what the site's learned position shows is named in ``provenance["disagrees"]``.

One page seen alone is read as before: :func:`crawler.extraction.extract` uses the
evidence only when given one (the spider's :class:`crawler.extensions.siteevidence.
SiteEvidenceStore`, shared through Redis), and every page it reads adds its own
(:class:`PageEvidence`). Counters are plain integers in one flat mapping, so that
workers add theirs to one Redis hash per site (``HINCRBY``) and read the sum back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: Pages of a site seen before its template and positions are trusted.
MIN_PAGES = 8
#: Share of the site's pages a template statement is seen on.
TEMPLATE_SHARE = 0.5
#: Pages a template statement cannot describe (a page with no product, or whose
#: structured data says another state), at least 2 and this share of those it is on.
OFF_SHARE = 0.1
#: Votes a field's position needs, and its share of the pages with the field.
MIN_VOTES = 4
POSITION_SHARE = 0.7
#: Counters kept per site (the least counted are forgotten beyond it).
MAX_KEYS = 512
#: The fields whose visible twins are learned.
FIELDS = ("price", "availability")
_SEP = "\x1f"


@dataclass(frozen=True)
class PageEvidence:
    """What one page tells of its site: whether it gave a product, its stock
    statements (path, text, state), the fields its structured data gave (field,
    value) and the paths of their visible twins (field, path)."""

    product: bool
    statements: tuple[tuple[str, str, str], ...] = ()
    structured: tuple[tuple[str, str], ...] = ()
    twins: tuple[tuple[str, str], ...] = ()

    def counts(self) -> Counter[str]:
        """The page's counters (see :class:`SiteEvidence`)."""
        counts: Counter[str] = Counter(pages=1, products=int(self.product))
        stock = dict(self.structured).get("availability")
        for path, text, state in set(self.statements):
            key = f"{path}{_SEP}{text}"
            counts[f"t {key}"] += 1
            if not self.product or (stock is not None and _family(stock) != _family(state)):
                counts[f"o {key}"] += 1  # a page the statement cannot describe
        for field, _ in self.structured:
            counts[f"s {field}"] += 1
        for field, path in self.twins:
            counts[f"p {field} {path}"] += 1
        return counts


def _family(state: str) -> str:
    """In stock (can be bought) or not, as the stock states group."""
    return "out" if state in ("OutOfStock", "Discontinued") else "in"


class SiteEvidence:
    """The counters of one site (``pages``, ``products``; ``t``/``o`` per template
    candidate: pages it was seen on, pages it cannot describe; ``s`` per field: pages
    with structured data for it; ``p`` per field and path: twin votes), and what they
    say (:meth:`is_template`, :meth:`position`)."""

    def __init__(self, counts: Mapping[str, int] | None = None, limit: int = MAX_KEYS) -> None:
        self.counts: dict[str, int] = dict(counts or {})
        self.limit = limit
        self._bound()
        self._template: dict[str, frozenset[str]] | None = None
        self._positions: dict[str, str | None] = {}

    @property
    def pages(self) -> int:
        return self.counts.get("pages", 0)

    @property
    def mature(self) -> bool:
        """Enough pages seen for the site's evidence to be trusted."""
        return self.pages >= MIN_PAGES

    def add(self, counts: Mapping[str, int]) -> None:
        """Add counters (a page's, or other workers')."""
        for key, value in counts.items():
            self.counts[key] = self.counts.get(key, 0) + value
        self._bound()
        self._template, self._positions = None, {}

    def replace(self, counts: Mapping[str, int]) -> None:
        """Take the counters read back from the shared store."""
        self.counts = {k: int(v) for k, v in counts.items()}
        self._bound()
        self._template, self._positions = None, {}

    def _bound(self) -> None:
        if len(self.counts) <= self.limit:
            return
        # the page counts and the pages with each field stay; the least counted of the
        # rest (statements and twins' votes) go
        lasting = ("t ", "o ", "p ")
        kept = {k: v for k, v in self.counts.items() if not k.startswith(lasting)}
        ranked = sorted(
            ((v, k) for k, v in self.counts.items() if k.startswith(lasting)), reverse=True
        )[: self.limit * 3 // 4 - len(kept)]
        kept.update((k, v) for v, k in ranked)
        self.counts = kept

    def template(self) -> dict[str, frozenset[str]]:
        """text -> the paths at which it is the site's template (see the module doc)."""
        if self._template is None:
            found: dict[str, set[str]] = {}
            if self.mature:
                least = max(MIN_PAGES, TEMPLATE_SHARE * self.pages)
                for key, seen in self.counts.items():
                    if key.startswith("t ") and seen >= least:
                        off = self.counts.get("o " + key[2:], 0)
                        if off >= max(2, OFF_SHARE * seen):
                            path, _, text = key[2:].partition(_SEP)
                            found.setdefault(text, set()).add(path)
            self._template = {text: frozenset(paths) for text, paths in found.items()}
        return self._template

    def is_template(self, path: str, text: str) -> bool:
        return path in self.template().get(text, ())

    def position(self, field: str) -> str | None:
        """The path where the site shows ``field`` (see the module doc), or None."""
        if field not in self._positions:
            pages = self.counts.get(f"s {field}", 0)
            prefix = f"p {field} "
            votes = [(v, k[len(prefix) :]) for k, v in self.counts.items() if k.startswith(prefix)]
            best = max(votes, default=(0, ""))
            good = pages >= MIN_VOTES and best[0] >= max(MIN_VOTES, POSITION_SHARE * pages)
            self._positions[field] = best[1] if good else None
        return self._positions[field]


def statement_text(text: str) -> str:
    """A stock statement's text as counted: whitespace collapsed, at most 60 characters."""
    return " ".join(text.split())[:60]


def merge_counts(parts: Iterable[Mapping[str, int]]) -> Counter[str]:
    total: Counter[str] = Counter()
    for part in parts:
        total.update(part)
    return total
