"""Seed validation, shared by the master (before pushing) and the workers (after popping).

A seed line is either a bare URL or a JSON object ``{"url": ..., "meta": {...}}``.
Blank lines and lines starting with ``#`` are skipped. Every other line becomes
a :class:`Seed` or a :class:`SeedError` that says, with its line number, why it
was refused; nothing invalid is ever pushed to Redis.

``meta`` is an allow-list (:data:`SEED_META_KEYS`): labels that travel with the
request and can change neither where nor how it is sent, and the seed's
strategy and scope (``strategy``, ``max_pages``, ``max_depth``, ``allow``,
``deny``, ``render``: :mod:`crawler.policy.scope`), whose values are validated here too.
Scrapy reads many meta keys (``proxy``, ``download_timeout``, ``download_maxsize``,
``dont_filter``, ``handle_httpstatus_list``, ``cookiejar``, ``bindaddress``,
``dont_redirect``, ``depth`` ...); whoever can seed must not be able to set them, so a seed with
any other key is refused, by the master and by the worker alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from w3lib.url import canonicalize_url

from crawler.policy.scope import SCOPE_KEYS, scope_error

MAX_URL_LENGTH = 2048
MAX_META_BYTES = 4096
ALLOWED_SCHEMES = ("http", "https")
#: The only keys a seed's ``meta`` may hold: labels, kept with the request (and
#: with its dead letter), read by no downloader component; and how the seed is
#: crawled (:mod:`crawler.policy.scope`).
SEED_LABEL_KEYS = frozenset({"category", "label", "note", "source", "tags"})
SEED_META_KEYS = SEED_LABEL_KEYS | SCOPE_KEYS
_HOST_RE = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._~%!$&'()*+,;=-]+)$")
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_SPACE_OR_CONTROL_RE = re.compile(r"[\s\x00-\x1f\x7f]")  # str.isspace() is \s
# The common shape of a seed, for which validation and canonical form are cheap:
# http(s), a lower-case host of ASCII labels, a port without leading zeros, a path
# of characters w3lib keeps as they are (no %-escapes, no ';' parameters, no
# segment starting with a dot), and a query of plain name=value pairs; no
# fragment. Anything else takes the full path. tests/unit/test_seed_fast_path.py
# holds both paths to the same answers.
_LABEL = r"[a-z0-9-]{1,63}"
_PAIR = r"[A-Za-z0-9._~-]+=[A-Za-z0-9._~-]*"
_SIMPLE_URL_RE = re.compile(
    rf"https?://(?P<host>{_LABEL}(?:\.{_LABEL})*)(?::(?P<port>[1-9][0-9]{{0,4}}))?"
    r"(?P<path>/[A-Za-z0-9._~!$&'()*+,=:@/-]*)?"
    rf"(?:\?(?P<query>{_PAIR}(?:&{_PAIR})*))?"
)


@dataclass(frozen=True)
class Seed:
    """A valid start URL, with optional ``meta`` passed on to its request."""

    url: str
    meta: dict[str, Any] = field(default_factory=dict)
    lineno: int = 0
    # computed on the way by parse_seed_lines for URLs of the common shape
    known_host: str = field(default="", compare=False, repr=False)
    known_fingerprint: str = field(default="", compare=False, repr=False)

    @property
    def fingerprint(self) -> str:
        """Canonical form used to skip URLs that were seeded already."""
        return self.known_fingerprint or seed_fingerprint(self.url)

    @property
    def host(self) -> str:
        """The URL's host, lower-case (``urlsplit(url).hostname``)."""
        return self.known_host or seed_host(self.url)

    def to_json(self) -> str:
        """The payload pushed to ``<spider>:start_urls`` (scrapy-redis JSON format)."""
        if not self.meta:  # the same text as below, a few times faster
            return '{"url":' + json.dumps(self.url) + "}"
        return _PAYLOAD_ENCODER.encode({"url": self.url, "meta": self.meta})


_PAYLOAD_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True)


def seed_fingerprint(url: str) -> str:
    """w3lib's ``canonicalize_url(url)``, computed cheaply for URLs of the common shape.

    The master computes it for every line of a seed file (millions); w3lib's
    general algorithm costs about 60 µs a URL, this about 2 µs for the URLs
    whose canonical form is plain: the same text, with an empty path as ``/``
    and the query's pairs sorted.
    """
    match = _simple_match(url)
    if match is None:
        return canonicalize_url(url)
    return _plain_canonical(url, match)


def _plain_canonical(url: str, match: re.Match[str]) -> str:
    query = match["query"]
    if query is None:
        return url if match["path"] else url + "/"
    head = url[: match.start("query") - 1]
    if not match["path"]:
        head += "/"
    pairs = sorted(tuple(pair.split("=")) for pair in query.split("&"))
    return head + "?" + "&".join(f"{name}={value}" for name, value in pairs)


def seed_host(url: str) -> str:
    """The host of a valid seed URL, lower-case (``urlsplit(url).hostname``)."""
    match = _simple_match(url)
    if match is not None:
        return match["host"]
    return urlsplit(url).hostname or ""


def _simple_match(url: str) -> re.Match[str] | None:
    """The parts of a URL of the common shape (see ``_SIMPLE_URL_RE``), or None."""
    match = _SIMPLE_URL_RE.fullmatch(url)
    if match is None or (match["port"] and int(match["port"]) > 65535):
        return None
    if match["path"] and "/." in match["path"]:
        return None  # dot segments ("/./", "/../"): w3lib resolves them
    return match


@dataclass(frozen=True)
class SeedError:
    """A refused line: its number, the reason, and the text (shortened)."""

    lineno: int
    reason: str
    text: str

    def __str__(self) -> str:
        shown = self.text if len(self.text) <= 80 else self.text[:77] + "..."
        return f"line {self.lineno}: {self.reason}: {shown!r}"


class InvalidSeed(ValueError):
    """Raised by :func:`validate_url` with a human-readable reason."""


def validate_url(url: str) -> str:
    """Return ``url`` stripped if it is an absolute http(s) URL with a host, else raise."""
    if not isinstance(url, str):
        raise InvalidSeed(f"url must be a string, not {type(url).__name__}")
    url = url.strip()
    if not url:
        raise InvalidSeed("empty URL")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidSeed(f"URL longer than {MAX_URL_LENGTH} characters")
    if _simple_match(url) is not None:
        return url  # the common shape passes every check of _validate_in_full
    return _validate_in_full(url)


def _validate_in_full(url: str) -> str:
    if _SPACE_OR_CONTROL_RE.search(url):
        raise InvalidSeed("URL contains whitespace or control characters")
    match = _SCHEME_RE.match(url)
    if not match or not url[match.end():].startswith("//"):
        raise InvalidSeed("not an absolute URL (expected http:// or https://)")
    scheme = match.group(1).lower()
    if scheme not in ALLOWED_SCHEMES:
        raise InvalidSeed(f"scheme {scheme!r} is not http or https")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidSeed(f"malformed URL ({exc})") from None
    host = parts.hostname or ""
    if not host:
        raise InvalidSeed("URL has no host")
    netloc_host = parts.netloc.rsplit("@", 1)[-1]
    if port is not None:
        netloc_host = netloc_host.rsplit(":", 1)[0]
    if not _HOST_RE.match(netloc_host) or host.startswith(".") or ".." in host:
        raise InvalidSeed(f"invalid host {host!r}")
    try:
        host.encode("idna")
    except UnicodeError:
        raise InvalidSeed(f"invalid host {host!r}") from None
    return url


def parse_seed(text: str, lineno: int = 0) -> Seed:
    """Parse one non-blank line (bare URL or JSON object); raise :class:`InvalidSeed`."""
    text = text.strip()
    meta: dict[str, Any] = {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidSeed(f"invalid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(data, dict):
            raise InvalidSeed("JSON seed must be an object")
        unknown = sorted(set(data) - {"url", "meta"})
        if unknown:
            raise InvalidSeed(f"unknown key(s) {', '.join(unknown)} (allowed: url, meta)")
        if "url" not in data:
            raise InvalidSeed("JSON seed has no 'url'")
        url = data["url"]
        given = data.get("meta")
        meta = {} if given is None else given
        if not isinstance(meta, dict):
            raise InvalidSeed("'meta' must be a JSON object")
        forbidden = sorted(set(meta) - SEED_META_KEYS)
        if forbidden:
            raise InvalidSeed(
                f"meta key(s) {', '.join(forbidden)} not allowed: seed meta may only hold "
                f"{', '.join(sorted(SEED_LABEL_KEYS))} (labels that cannot change where or how "
                "the request is sent) and strategy, max_pages, max_depth, allow, deny, render"
            )
        problem = scope_error(meta)
        if problem is not None:
            raise InvalidSeed(problem)
        if len(json.dumps(meta)) > MAX_META_BYTES:
            raise InvalidSeed(f"'meta' larger than {MAX_META_BYTES} bytes")
    elif text.startswith("["):
        raise InvalidSeed("JSON seed must be an object")
    else:
        url = text
    return Seed(url=validate_url(url), meta=meta, lineno=lineno)


def parse_seed_lines(lines: Iterable[str]) -> Iterator[Seed | SeedError]:
    """Yield a :class:`Seed` or :class:`SeedError` per meaningful line (1-based numbers)."""
    for lineno, raw in enumerate(lines, start=1):
        text = raw.strip().lstrip("\ufeff")
        if not text or text.startswith("#"):
            continue
        # the common shape (most lines of a big file): one match does it all
        match = _simple_match(text) if len(text) <= MAX_URL_LENGTH else None
        if match is not None:
            yield Seed(text, {}, lineno, match["host"], _plain_canonical(text, match))
            continue
        try:
            yield parse_seed(text, lineno)
        except InvalidSeed as exc:
            yield SeedError(lineno=lineno, reason=str(exc), text=text)
