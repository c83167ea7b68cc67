"""Site profiles: small declarative JSON files that tune extraction for one site.

A profile is selected by the domain of the URL and may

* override any product field with a CSS or XPath selector (fields it does not
  name still come from the zero-configuration extractor);
* say which pages are product pages (``is_product``);
* give the site's default ``currency`` (used for a bare ``$`` and for prices
  shown without any symbol);
* restrict link discovery (``follow.allow`` / ``follow.deny`` regexes,
  ``follow.restrict_css`` / ``follow.restrict_xpath``);
* set or silence the data checks on the site (``checks``, :mod:`crawler.datachecks`);
* for the ``finance`` spider, give a quote's fields (``quote.fields``: ``symbol``,
  ``price``, ``volume``... and ``day_range``) and say which pages are quote pages
  (``quote.is_quote``), see :mod:`crawler.extraction.quotes`.

Profiles live in ``crawler/profiles/*.json`` (:data:`PROFILES_DIR`) and are
loaded and validated once at start-up with :meth:`ProfileRegistry.from_dir`;
every problem is reported as a :class:`ProfileError` naming the file and the
field. The format, with a complete example, is in ``docs/extraction.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lxml import etree
from parsel import Selector
from parsel.csstranslator import HTMLTranslator

from crawler.core import items
from crawler.datachecks.checks import CheckConfigError, validate_overrides

from .normalize.currency import ISO_CURRENCIES

PROFILES_DIR = Path(__file__).resolve().parent.parent / "profiles"

#: Fields a profile may override (``rating_value``/``rating_count`` build ``rating``),
#: derived from :class:`crawler.core.items.Product`.
PROFILE_FIELDS = items.PROFILE_FIELDS
_TOP_LEVEL = frozenset(
    {
        "name", "domains", "currency", "is_product", "fields", "follow", "notes", "max_rps",
        "quote", "checks",
    }
)
#: Fields a profile may give a quote (``quote.fields``), from :class:`crawler.core.items.Quote`,
#: and ``day_range`` (low and high in one text).
QUOTE_PROFILE_FIELDS = items.QUOTE_PROFILE_FIELDS | {"day_range"}
_QUOTE_KEYS = frozenset({"is_quote", "fields"})
_FOLLOW_KEYS = frozenset({"allow", "deny", "restrict_css", "restrict_xpath"})
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9-]{1,63}$")
_translator = HTMLTranslator()


class ProfileError(ValueError):
    """A site profile is invalid; the message names the file and the field."""


@dataclass(frozen=True)
class FieldSelector:
    """One CSS or XPath query. CSS may use parsel's ``::text`` and ``::attr(name)``."""

    kind: str  # "css" or "xpath"
    query: str

    def getall(self, selector: Selector) -> list[str]:
        """The matched strings; matched elements give their text (``img``: its src)."""
        results = selector.css(self.query) if self.kind == "css" else selector.xpath(self.query)
        out: list[str] = []
        for item in results:
            root = item.root
            if isinstance(root, str):
                out.append(root)
            elif isinstance(root, (int, float, bool)):
                out.append(str(root))
            elif getattr(root, "tag", None) == "img":
                out.append(root.get("data-src") or root.get("src") or "")
            elif getattr(root, "tag", None) == "meta":
                out.append(root.get("content") or "")
            elif hasattr(root, "itertext"):
                out.append(" ".join(root.itertext()))
            else:
                out.append(item.xpath("string()").get() or "")
        return out


@dataclass
class SiteProfile:
    """The extraction and link rules of one site."""

    name: str
    domains: tuple[str, ...]
    currency: str | None = None
    is_product: FieldSelector | None = None
    fields: dict[str, FieldSelector] = field(default_factory=dict)
    follow_allow: tuple[re.Pattern[str], ...] = ()
    follow_deny: tuple[re.Pattern[str], ...] = ()
    restrict_css: tuple[str, ...] = ()
    restrict_xpath: tuple[str, ...] = ()
    max_rps: float | None = None  # this site's SITE_MAX_RPS (all workers together); 0: no limit
    is_quote: FieldSelector | None = None
    quote_fields: dict[str, FieldSelector] = field(default_factory=dict)
    #: the data checks' thresholds on this site (crawler.datachecks.checks; false: silenced)
    checks: dict[str, Any] = field(default_factory=dict)
    source: str = "<memory>"

    def matches_host(self, host: str) -> int:
        """Length of the longest of our domains that ``host`` is or is under (0: none)."""
        host = host.lower().rstrip(".")
        best = 0
        for domain in self.domains:
            if host == domain or host.endswith("." + domain):
                best = max(best, len(domain))
        return best

    def allows(self, url: str) -> bool:
        """The ``follow`` regexes: at least one ``allow`` (when given) and no ``deny`` match."""
        if self.follow_allow and not any(p.search(url) for p in self.follow_allow):
            return False
        return not any(p.search(url) for p in self.follow_deny)

    # ---------------------------------------------------------------- loading

    @classmethod
    def from_file(cls, path: str | Path) -> SiteProfile:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ProfileError(f"{path}: not valid JSON: {exc}") from exc
        except OSError as exc:
            raise ProfileError(f"{path}: cannot read: {exc}") from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<memory>") -> SiteProfile:
        """Build and validate a profile; raises :class:`ProfileError`."""

        def fail(where: str, message: str) -> ProfileError:
            return ProfileError(f"{source}: {where}: {message}")

        if not isinstance(data, dict):
            raise fail("(top level)", "a profile must be a JSON object")
        unknown = sorted(set(data) - _TOP_LEVEL)
        if unknown:
            raise fail(unknown[0], f"unknown key (allowed: {', '.join(sorted(_TOP_LEVEL))})")
        domains = data.get("domains")
        if not isinstance(domains, list) or not domains:
            raise fail("domains", "required: a non-empty list of host names")
        clean_domains = []
        for i, domain in enumerate(domains):
            if not isinstance(domain, str) or not _DOMAIN.match(domain.strip().lower()):
                raise fail(f"domains[{i}]", f"not a host name: {domain!r}")
            clean_domains.append(domain.strip().lower())
        name = data.get("name", clean_domains[0])
        if not isinstance(name, str) or not name.strip():
            raise fail("name", "must be a non-empty string")
        currency = data.get("currency")
        if currency is not None and (
            not isinstance(currency, str) or currency not in ISO_CURRENCIES
        ):
            raise fail("currency", f"not a known ISO 4217 code: {currency!r}")
        max_rps = data.get("max_rps")
        if max_rps is not None and (
            isinstance(max_rps, bool) or not isinstance(max_rps, int | float) or max_rps < 0
        ):
            raise fail("max_rps", f"must be a number of requests per second >= 0: {max_rps!r}")
        is_product = (
            _selector(data["is_product"], "is_product", fail) if "is_product" in data else None
        )
        fields_data = data.get("fields", {})
        if not isinstance(fields_data, dict):
            raise fail("fields", "must be an object of field name → selector")
        fields: dict[str, FieldSelector] = {}
        for key, spec in fields_data.items():
            if key not in PROFILE_FIELDS:
                raise fail(
                    f"fields.{key}",
                    f"unknown field (allowed: {', '.join(sorted(PROFILE_FIELDS))})",
                )
            fields[key] = _selector(spec, f"fields.{key}", fail)
        follow = data.get("follow", {})
        if not isinstance(follow, dict):
            raise fail("follow", "must be an object")
        unknown = sorted(set(follow) - _FOLLOW_KEYS)
        if unknown:
            allowed = ", ".join(sorted(_FOLLOW_KEYS))
            raise fail(f"follow.{unknown[0]}", f"unknown key (allowed: {allowed})")
        lists: dict[str, list[str]] = {}
        for key in _FOLLOW_KEYS:
            value = follow.get(key, [])
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise fail(f"follow.{key}", "must be a list of strings")
            lists[key] = value
        patterns: dict[str, tuple[re.Pattern[str], ...]] = {}
        for key in ("allow", "deny"):
            compiled = []
            for i, pattern in enumerate(lists[key]):
                try:
                    compiled.append(re.compile(pattern))
                except re.error as exc:
                    raise fail(f"follow.{key}[{i}]", f"bad regex {pattern!r}: {exc}") from exc
            patterns[key] = tuple(compiled)
        for i, css in enumerate(lists["restrict_css"]):
            _check_css(css, f"follow.restrict_css[{i}]", fail)
        for i, xpath in enumerate(lists["restrict_xpath"]):
            _check_xpath(xpath, f"follow.restrict_xpath[{i}]", fail)
        is_quote, quote_fields = _quote_section(data.get("quote", {}), fail)
        try:
            checks = validate_overrides(data.get("checks", {}), "checks")
        except CheckConfigError as exc:
            where, _, message = str(exc).partition(": ")
            raise fail(where, message) from exc
        return cls(
            name=name.strip(),
            domains=tuple(clean_domains),
            currency=currency,
            is_product=is_product,
            fields=fields,
            follow_allow=patterns["allow"],
            follow_deny=patterns["deny"],
            restrict_css=tuple(lists["restrict_css"]),
            restrict_xpath=tuple(lists["restrict_xpath"]),
            max_rps=None if max_rps is None else float(max_rps),
            is_quote=is_quote,
            quote_fields=quote_fields,
            checks=checks,
            source=source,
        )


def _quote_section(
    quote: Any, fail: Any
) -> tuple[FieldSelector | None, dict[str, FieldSelector]]:
    """``quote``: ``{"is_quote": selector, "fields": {field: selector}}`` (both optional)."""
    if not isinstance(quote, dict):
        raise fail("quote", 'must be an object: {"is_quote": ..., "fields": {...}}')
    unknown = sorted(set(quote) - _QUOTE_KEYS)
    if unknown:
        allowed = ", ".join(sorted(_QUOTE_KEYS))
        raise fail(f"quote.{unknown[0]}", f"unknown key (allowed: {allowed})")
    is_quote = _selector(quote["is_quote"], "quote.is_quote", fail) if "is_quote" in quote else None
    fields_data = quote.get("fields", {})
    if not isinstance(fields_data, dict):
        raise fail("quote.fields", "must be an object of field name → selector")
    fields: dict[str, FieldSelector] = {}
    for key, spec in fields_data.items():
        if key not in QUOTE_PROFILE_FIELDS:
            allowed = ", ".join(sorted(QUOTE_PROFILE_FIELDS))
            raise fail(f"quote.fields.{key}", f"unknown field (allowed: {allowed})")
        fields[key] = _selector(spec, f"quote.fields.{key}", fail)
    return is_quote, fields


def _check_css(query: str, where: str, fail: Any) -> None:
    if not query.strip():
        raise fail(where, "empty CSS selector")
    try:
        _translator.css_to_xpath(query)
    except Exception as exc:  # cssselect raises several error types
        raise fail(where, f"bad CSS selector {query!r}: {exc}") from exc


def _check_xpath(query: str, where: str, fail: Any) -> None:
    if not query.strip():
        raise fail(where, "empty XPath expression")
    try:
        etree.XPath(query)
    except etree.XPathSyntaxError as exc:
        raise fail(where, f"bad XPath {query!r}: {exc}") from exc


def _selector(spec: Any, where: str, fail: Any) -> FieldSelector:
    if isinstance(spec, dict) and len(spec) == 1:
        ((kind, query),) = spec.items()
        if kind in ("css", "xpath") and isinstance(query, str):
            if kind == "css":
                _check_css(query, f"{where}.css", fail)
            else:
                _check_xpath(query, f"{where}.xpath", fail)
            return FieldSelector(kind, query)
    raise fail(where, 'a selector must be {"css": "..."} or {"xpath": "..."}')


class ProfileRegistry:
    """All site profiles, looked up by URL."""

    def __init__(self, profiles: Iterable[SiteProfile] = ()) -> None:
        self._profiles: list[SiteProfile] = []
        owners: dict[str, SiteProfile] = {}
        for profile in profiles:
            for domain in profile.domains:
                if domain in owners:
                    raise ProfileError(
                        f"{profile.source}: domains: {domain!r} is already claimed by "
                        f"{owners[domain].source}"
                    )
                owners[domain] = profile
            self._profiles.append(profile)

    @classmethod
    def from_dir(cls, path: str | Path = PROFILES_DIR) -> ProfileRegistry:
        """Load and validate every ``*.json`` profile of a folder (sorted by file name)."""
        folder = Path(path)
        if not folder.is_dir():
            raise ProfileError(f"{folder}: profile folder does not exist")
        return cls(SiteProfile.from_file(p) for p in sorted(folder.glob("*.json")))

    def for_url(self, url: str) -> SiteProfile | None:
        """The profile whose domain is the URL's host or a parent of it (longest wins)."""
        host = urlsplit(url).hostname or ""
        best: SiteProfile | None = None
        best_len = 0
        for profile in self._profiles:
            length = profile.matches_host(host)
            if length > best_len:
                best, best_len = profile, length
        return best

    def __iter__(self) -> Iterator[SiteProfile]:
        return iter(self._profiles)

    def __len__(self) -> int:
        return len(self._profiles)
