"""How a seed is crawled and how far: its strategy and scope, carried by every request.

A seed's ``meta`` (see :mod:`crawler.policy.seeds`) may say how to crawl it:

``strategy``
    ``auto`` (the default: the site's sitemaps and its links), ``sitemap`` (only
    the URLs the site's sitemaps list; neither the seed's page nor any listing
    is fetched), ``navigation`` (links only, no sitemaps), ``pagination`` (the
    seed's listing, its other pages and the products they list; nothing else),
    ``direct`` (the seed is a product page: fetch it and nothing more).
``max_pages``
    requests made for the seed, by all workers together (sitemaps included;
    robots.txt aside): a Redis counter per seed, taken before each download.
``max_depth``
    links followed away from the seed's page (Scrapy's ``depth``: the seed is
    0): a page at that depth yields no links. Sitemap URLs are queued whatever
    their depth (a page a sitemap child lists is at depth 2).
``allow`` / ``deny``
    regular expressions (one, or a list) searched in every URL queued for the
    seed, links and sitemap URLs alike; a URL must match an ``allow`` pattern
    when there are any, and no ``deny`` pattern.
``render``
    whether the seed's pages go through the headless browser
    (:mod:`crawler.middlewares.rendering`): ``true`` (every page), ``false``
    (none), ``auto`` (the default: as ``BROWSER_RENDERING`` says). JSON
    ``true``/``false`` and the strings ``"true"``/``"false"``/``"auto"`` are accepted.

:func:`scope_error` validates these values (the master at seed time, the worker
again after popping). :class:`Scope` is their parsed form; :meth:`Scope.to_meta`
is the compact dict every request of the seed carries under ``meta["scope"]``
(keys ``id``, ``s``, ``mp``, ``md``, ``a``, ``d``, ``r``; absent ones take their
default), through the JSON queue serializer, so any worker applies it. A plain
seed carries nothing: its requests are as they were.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

STRATEGIES = ("auto", "sitemap", "navigation", "pagination", "direct")
SCOPE_KEYS = frozenset({"strategy", "max_pages", "max_depth", "allow", "deny", "render"})
RENDER_CHOICES = ("auto", "true", "false")
SCOPE_META_KEY = "scope"
MAX_PATTERNS = 20
MAX_PATTERN_LENGTH = 500
MAX_LIMIT = 10**9


def _patterns(value: Any, name: str) -> tuple[str, ...]:
    patterns = [value] if isinstance(value, str) else value
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ValueError(f"'{name}' must be a regex or a list of regexes")
    if len(patterns) > MAX_PATTERNS:
        raise ValueError(f"'{name}' holds more than {MAX_PATTERNS} patterns")
    for pattern in patterns:
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise ValueError(f"'{name}' pattern longer than {MAX_PATTERN_LENGTH} characters")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"'{name}' pattern {pattern!r} is not a valid regex ({exc})") from None
    return tuple(patterns)


def _limit(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise ValueError(f"'{name}' must be a whole number from 1 to {MAX_LIMIT}")
    return value


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value not in RENDER_CHOICES:
        raise ValueError(f"'render' must be true, false or auto, not {value!r}")
    return str(value)


def scope_error(meta: dict[str, Any]) -> str | None:
    """Why the strategy and scope keys of a seed's ``meta`` are invalid, or None."""
    try:
        Scope.from_seed_meta("", meta)
    except ValueError as exc:
        return str(exc)
    return None


@lru_cache(maxsize=256)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(pattern) for pattern in patterns)


@dataclass(frozen=True)
class Scope:
    """A seed's strategy and bounds (see the module doc); ``Scope()`` is a plain seed."""

    strategy: str = "auto"
    max_pages: int = 0
    max_depth: int = 0
    allow: tuple[str, ...] = field(default=())
    deny: tuple[str, ...] = field(default=())
    seed_id: str = ""
    listing: str = ""  # pagination: the path of the seed's listing
    render: str = "auto"  # "true", "false", "auto": see the module doc

    @classmethod
    def from_seed_meta(cls, url: str, meta: dict[str, Any]) -> Scope:
        """The scope a seed's meta asks for; ValueError says why it is invalid."""
        strategy = meta.get("strategy", "auto")
        if strategy not in STRATEGIES:
            raise ValueError(f"'strategy' must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
        scope = cls(
            strategy=strategy,
            max_pages=_limit(meta["max_pages"], "max_pages") if "max_pages" in meta else 0,
            max_depth=_limit(meta["max_depth"], "max_depth") if "max_depth" in meta else 0,
            allow=_patterns(meta["allow"], "allow") if "allow" in meta else (),
            deny=_patterns(meta["deny"], "deny") if "deny" in meta else (),
            render=_render(meta["render"]) if "render" in meta else "auto",
        )
        if scope.plain:
            return scope
        fields = [url, scope.strategy, scope.max_pages, scope.max_depth, scope.allow, scope.deny]
        if scope.render != "auto":  # the ids of seeds without it stay as they were
            fields.append(scope.render)
        text = json.dumps(fields)
        listing = urlsplit(url).path or "/" if strategy == "pagination" else ""
        seed_id = hashlib.sha1(text.encode()).hexdigest()[:12]
        return cls(**{**scope.__dict__, "listing": listing, "seed_id": seed_id})

    @classmethod
    def of(cls, meta: dict[str, Any]) -> Scope:
        """The scope a request carries (``meta["scope"]``); a plain scope when none."""
        data = meta.get(SCOPE_META_KEY)
        if not isinstance(data, dict):
            return PLAIN
        return _from_compact(json.dumps(data, sort_keys=True))

    @property
    def plain(self) -> bool:
        return (
            self.strategy,
            self.max_pages,
            self.max_depth,
            self.allow,
            self.deny,
            self.render,
        ) == ("auto", 0, 0, (), (), "auto")

    @property
    def reads_sitemaps(self) -> bool:
        return self.strategy in ("auto", "sitemap")

    @property
    def follows_links(self) -> bool:
        return self.strategy in ("auto", "navigation", "pagination")

    def to_meta(self) -> dict[str, Any]:
        """The compact form requests carry: ``{}`` for a plain seed."""
        if self.plain:
            return {}
        data: dict[str, Any] = {"id": self.seed_id}
        for key, value, default in (
            ("s", self.strategy, "auto"),
            ("mp", self.max_pages, 0),
            ("md", self.max_depth, 0),
            ("a", list(self.allow), []),
            ("d", list(self.deny), []),
            ("r", self.render, "auto"),
        ):
            if value != default:
                data[key] = value
        if self.listing:
            data["l"] = self.listing
        return {SCOPE_META_KEY: data}

    def allows(self, url: str) -> bool:
        """Does ``url`` pass the seed's allow and deny patterns?"""
        if self.deny and any(p.search(url) for p in _compiled(self.deny)):
            return False
        return not self.allow or any(p.search(url) for p in _compiled(self.allow))


PLAIN = Scope()


@lru_cache(maxsize=256)
def _from_compact(text: str) -> Scope:
    data = json.loads(text)
    meta = {
        "strategy": data.get("s", "auto"),
        **({"max_pages": data["mp"]} if "mp" in data else {}),
        **({"max_depth": data["md"]} if "md" in data else {}),
        **({"allow": data["a"]} if "a" in data else {}),
        **({"deny": data["d"]} if "d" in data else {}),
        **({"render": data["r"]} if "r" in data else {}),
    }
    try:
        scope = Scope.from_seed_meta("", meta)
    except ValueError:  # a request made by hand in Redis: treated as the strictest
        return Scope(strategy="direct", seed_id=str(data.get("id", ""))[:40])
    listing = str(data.get("l", "/")) if scope.strategy == "pagination" else ""
    return Scope(**{**scope.__dict__, "seed_id": str(data.get("id", ""))[:40], "listing": listing})
