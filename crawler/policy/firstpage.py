"""The first page of a listing has one URL: ``/c/10`` and ``/c/10?page=1`` are one page.

The class: shops link the first page of a paginated listing both bare (from menus,
breadcrumbs, category links) and with its page parameter set to 1 (from the pager's
"1" and "Previous" links), and serve both. A pagination parameter whose value is 1
names that first page, so it is dropped: the links a page yields
(:func:`crawler.extraction.links.discover_links`), the seeds a worker takes and the
seeds' fingerprints (:mod:`crawler.policy.seeds`) all use this rule, so the shared
dupefilter sees one fingerprint for the page. Only the value 1 is dropped: page 2
is another page.

A shop may number its pages under any name (``?seite=2``, ``?pageIndex=2``,
``?pn=2``). Such a parameter is learned from the page's own pager
(:func:`learned_first_pages`): the links of one listing (one path, the same other
parameters) that differ only by the parameter's whole-number values, among them 1
and another, never 0 (a pager counting from 0 has its first page at 0), and at
least one of them labelled with its own number (the pager's "1", "2", "3"). Its
value 1 is then the bare listing too, for the links of that page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameters that number a listing's pages (compared lower-case).
PAGE_PARAMS = frozenset(
    {"page", "p", "pg", "paged", "pagenumber", "page_number", "pageno", "page_no", "pagenum"}
)


def is_first_page_param(key: str, value: str) -> bool:
    """``page=1``, ``p=1``, ``pg=1``, ``pageNumber=1``...: the listing's first page."""
    return value.strip() == "1" and key.lower() in PAGE_PARAMS


def without_first_page(url: str) -> str:
    """``url`` without a first-page parameter (the URL itself when it has none)."""
    if "=" not in url or "1" not in url.partition("?")[2]:
        return url  # the common case, without parsing
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return url
    kept = [(k, v) for k, v in pairs if not is_first_page_param(k, v)]
    if len(kept) == len(pairs):
        return url
    return urlunsplit(parts._replace(query=urlencode(kept)))


@dataclass
class _Pager:
    """The values one parameter takes among the links of one listing."""

    values: set[int] = field(default_factory=set)
    labelled: bool = False  # a link's text is its own number: a pager's
    ones: list[str] = field(default_factory=list)  # the links with the value 1


def learned_first_pages(page_url: str, links: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``{link: the link without its page parameter}`` for the links of a page's pager
    that name its first page under a parameter this module does not know by name (see
    the module doc). ``links``: (absolute URL, link text) of the page's links."""
    pagers: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], _Pager] = {}
    for url, text in [*links, (page_url, "")]:
        if "=" not in url:
            continue
        try:
            parts = urlsplit(url)
            pairs = parse_qsl(parts.query, keep_blank_values=True)
        except ValueError:
            continue
        for at, (key, value) in enumerate(pairs):
            if not value.isdigit() or len(value) > 4:
                continue
            rest = tuple(sorted(pairs[:at] + pairs[at + 1 :]))
            pager = pagers.setdefault((parts.netloc, parts.path, key, rest), _Pager())
            pager.values.add(int(value))
            pager.labelled |= text.strip() == value
            if value == "1" and url != page_url:
                pager.ones.append(url)
    twins: dict[str, str] = {}
    for (_, _, _, rest), pager in pagers.items():
        values = pager.values
        if pager.ones and pager.labelled and len(values) >= 2 and 0 not in values:
            for url in pager.ones:
                twins[url] = urlunsplit(urlsplit(url)._replace(query=urlencode(rest)))
    return twins
