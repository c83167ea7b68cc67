"""A bounded walk of a parsed state: its product-shaped nodes and the URLs it holds.

:func:`walk_state` visits every dict and list of a state block once (shared
members and cycles are visited once), at most :data:`MAX_NODES` values and
:data:`MAX_DEPTH` levels deep, and resolves the references of a normalized
GraphQL cache as it goes: Apollo's ``{"__ref": "Product:1"}`` (and Apollo 2's
``{"type": "id", "id": "Product:1"}``) are read as the entry they name in the
cache they belong to (any dict holding a ``ROOT_QUERY``). A cache is walked from
its ``ROOT_QUERY``, so entries reached through a list field are listed, and the
one a single field names is the page's; a cache without ``ROOT_QUERY`` is a list
of entries.

Each product-shaped dict (:func:`.shape.is_product_shaped`) becomes a
:class:`Candidate`, *listed* when it is a member of a list (even alone in it), or
it or an ancestor is one of several members of a list, or of a dict that maps ids
to products (three or more product-shaped members): a listing's cards, related
products, a cart. A candidate found inside
another candidate (its variants) is not a separate product.

URLs are the string values of link-like keys (``url``, ``href``, ``path``,
``canonicalUrl``...) that are site paths or http(s) URLs, without API, asset and
framework routes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .shape import URL_KEYS, is_product_shaped, name_of

MAX_NODES = 100_000
MAX_DEPTH = 40
MAX_URLS = 2000
#: A dict with at least this many product-shaped members is a map of listed products.
MAP_MEMBERS = 3
_URL_KEYS = frozenset(URL_KEYS) | {
    "as",
    "slugPath",
    "categoryUrl",
    "pageUrl",
    "linkUrl",
    "next",
    "nextUrl",
    "next_url",
    "nextPageUrl",
}
_NOT_A_PAGE = re.compile(
    r"^/(?:_next|_nuxt|api|static|assets|graphql|__)|/api/|\.(?:js|css|json|png|jpe?g|gif|"
    r"svg|webp|avif|ico|woff2?|ttf|map)(?:\?|$)|[\s{}\[\]<>]",
    re.I,
)


@dataclass
class Candidate:
    """A product-shaped dict of the state, where it was found."""

    node: dict[str, Any]
    listed: bool
    depth: int
    order: int


@dataclass
class WalkResult:
    candidates: list[Candidate] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)


def _ref_key(value: dict[str, Any]) -> str | None:
    ref = value.get("__ref")
    if isinstance(ref, str):
        return ref
    if value.get("type") == "id" and isinstance(value.get("id"), str) and "generated" in value:
        return str(value["id"])
    return None


def _card(member: Any) -> bool:
    """A product-shaped member of a list is a card, even alone in it (a listing of one)."""
    return isinstance(member, dict) and is_product_shaped(member)


def _resolved(node: dict[str, Any], refs: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its members that are references replaced by their entries (one
    level: a product's ``price: {"__ref": "Money:1"}`` is read as the Money entry)."""
    copy: dict[str, Any] | None = None
    for key, member in node.items():
        if isinstance(member, dict):
            ref = _ref_key(member)
            if ref is not None and isinstance(refs.get(ref), dict):
                if copy is None:
                    copy = dict(node)
                copy[key] = refs[ref]
    return node if copy is None else copy


def _caches(data: Any, depth: int = 0) -> list[dict[str, Any]]:
    """The normalized caches (dicts with a ``ROOT_QUERY``) in the first levels of a state."""
    if not isinstance(data, dict) or depth > 4:
        return []
    if "ROOT_QUERY" in data:
        return [data]
    found: list[dict[str, Any]] = []
    for value in list(data.values())[:50]:
        found.extend(_caches(value, depth + 1))
    return found


def walk_state(data: Any) -> WalkResult:
    """The candidates and URLs of one parsed state block (see the module doc)."""
    result = WalkResult()
    caches = _caches(data)
    refs: dict[str, Any] = {}
    for cache in caches:
        refs.update(cache)
    cache_ids = {id(cache) for cache in caches}
    seen: set[int] = set()
    budget = checks = MAX_NODES
    # (value, depth, listed, inside a candidate)
    stack: list[tuple[Any, int, bool, bool]] = [(data, 0, False, False)]
    while stack and budget > 0:
        value, depth, listed, inside = stack.pop()
        if isinstance(value, dict):
            ref = _ref_key(value)
            if ref is not None:
                value = refs.get(ref)
                if not isinstance(value, dict):
                    continue
        if not isinstance(value, (dict, list)) or id(value) in seen or depth > MAX_DEPTH:
            continue
        seen.add(id(value))
        budget -= 1
        if isinstance(value, list):
            several = len(value) > 1
            stack.extend(
                (member, depth + 1, listed or several or _card(member), inside)
                for member in reversed(value)
            )
            continue
        if id(value) in cache_ids:
            root = value.get("ROOT_QUERY")
            if isinstance(root, dict):
                stack.append((root, depth + 1, listed, inside))
            else:  # entries only: peers
                stack.extend((entry, depth + 1, True, inside) for entry in value.values())
            continue
        if refs:
            value = _resolved(value, refs)
        product = is_product_shaped(value)
        if product and not inside:
            result.candidates.append(Candidate(value, listed, depth, len(result.candidates)))
        _collect_urls(value, result.urls)
        members = list(value.values())
        as_map = listed
        if not listed and len(members) >= MAP_MEMBERS and checks > 0:
            named = [m for m in members[:50] if isinstance(m, dict) and name_of(m) is not None]
            checks -= len(named) + 1
            as_map = len(named) >= MAP_MEMBERS and sum(map(is_product_shaped, named)) >= MAP_MEMBERS
        stack.extend((member, depth + 1, as_map, inside or product) for member in reversed(members))
    return result


def _collect_urls(node: dict[str, Any], urls: list[str]) -> None:
    if len(urls) >= MAX_URLS:
        return
    for key, value in node.items():
        if key in _URL_KEYS and isinstance(value, str) and _page_like(value):
            urls.append(value)


def _page_like(value: str) -> bool:
    """A site path (``/p/boot-1``) or an http(s) URL, not an API, asset or framework route."""
    if value.startswith("//") or not value.startswith(("/", "http://", "https://")):
        return False
    return len(value) <= 2048 and _NOT_A_PAGE.search(value) is None
