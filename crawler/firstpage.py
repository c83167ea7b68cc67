"""The first page of a listing has one URL: ``/c/10`` and ``/c/10?page=1`` are one page.

The class: shops link the first page of a paginated listing both bare (from menus,
breadcrumbs, category links) and with its page parameter set to 1 (from the pager's
"1" and "Previous" links), and serve both. A pagination parameter whose value is 1
names that first page, so it is dropped: the links a page yields
(:func:`crawler.extraction.links.discover_links`), the seeds a worker takes and the
seeds' fingerprints (:mod:`crawler.seeds`) all use this rule, so the shared
dupefilter sees one fingerprint for the page. Only the value 1 is dropped: page 2
is another page.
"""

from __future__ import annotations

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
