"""Embedded state: the data a front-end framework put in the page, read as a structured source.

Shops built in the browser send an application shell, and the server often embeds
the data the page is built from for the framework to pick up: Next.js
``__NEXT_DATA__``, Nuxt ``__NUXT__`` / ``__NUXT_DATA__``, ``window.__INITIAL_STATE__``,
``__PRELOADED_STATE__``, ``__APOLLO_STATE__`` (a normalized GraphQL cache),
``<script type="application/json">`` (:mod:`.blocks`, :mod:`.devalue`). Reading it
costs a JSON parse; no browser is needed for these pages.

:func:`read_embedded_state` finds, whatever the framework, the page's product by its
shape (a name with a price or offers, and a SKU, a stock state, an image, a brand or
a product type: :mod:`.shape`), and the URLs the state holds (:mod:`.walk`):

* the product is the product-shaped node whose URL is the page's, else the one
  that is not one of several (not a card of a list, nor a member of a map of
  products), the shallowest first; none when every product-shaped node is listed,
  or when the only unlisted one links to another page beside a list of products
  (a listing's featured card): the page is then a listing when two or more are listed;
* the URLs are those of products and listings (link-like keys holding a site path
  or an http(s) URL; API, asset and framework routes left out).

Hooks (small on purpose):

* :func:`add_embedded_state` -- called by :func:`crawler.extraction.product.extract`:
  when the page's JSON-LD, microdata and RDFa give no product, the state's product
  joins the structured data, provenance ``embedded-state``; a state that lists
  products types the page as a listing;
* :func:`state_urls` -- called by :func:`crawler.extraction.links.discover_links`
  for pages whose markup links to fewer than :data:`FEW_LINKS` pages (an
  application shell): the state's URLs are followed too.

Both read the state once per response (a cache keyed by the response, as Scrapy's
``get_base_url``). Hostile scripts are bounded in size, depth and nodes
(:mod:`.blocks`, :mod:`.devalue`, :mod:`.walk`), and neither hook raises.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin
from weakref import WeakKeyDictionary

from scrapy.http import TextResponse

from ..pageurl import same_path
from ..structured import StructuredData
from ..tree import page_root
from .blocks import has_state_markers, state_blocks
from .shape import product_node, url_of
from .walk import Candidate, walk_state

logger = logging.getLogger(__name__)

SYNTAX = "embedded-state"
#: Pages whose markup gives fewer followable links than this also follow the state's.
FEW_LINKS = 10


@dataclass
class EmbeddedState:
    """What a page's state blocks hold."""

    #: The page's product as a schema.org node (see :mod:`.shape`), or None.
    product: dict[str, Any] | None = None
    #: Two or more listed products and no product of the page's own.
    listing: bool = False
    #: Link-like values of the state, as written (relative or absolute), in order.
    urls: list[str] = field(default_factory=list)
    #: Where the blocks came from (``__NEXT_DATA__``, ``__NUXT__``, ``application/json``...).
    sources: list[str] = field(default_factory=list)


_EMPTY = EmbeddedState()
_cache: WeakKeyDictionary[TextResponse, EmbeddedState] = WeakKeyDictionary()


def read_embedded_state(root: Any, page_url: str) -> EmbeddedState:
    """The product and URLs of the page's state blocks (see the module doc)."""
    state = EmbeddedState()
    candidates: list[Candidate] = []
    for block in state_blocks(root):
        state.sources.append(block.source)
        walked = walk_state(block.data)
        candidates.extend(walked.candidates)
        state.urls.extend(walked.urls)
    main = _main_candidate(candidates, page_url)
    if main is not None:
        node = product_node(main.node)
        if node.get("url"):
            node["url"] = urljoin(page_url, node["url"])
        state.product = node
    else:
        state.listing = sum(c.listed for c in candidates) >= 2
    return state


def _main_candidate(candidates: list[Candidate], page_url: str) -> Candidate | None:
    if not candidates:
        return None
    for candidate in candidates:
        url = url_of(candidate.node)
        if url and same_path(urljoin(page_url, url), page_url):
            return candidate
    singles = sorted((c for c in candidates if not c.listed), key=lambda c: (c.depth, c.order))
    if not singles:
        return None
    main = singles[0]
    listed = sum(c.listed for c in candidates)
    if listed >= 2 and url_of(main.node):  # it links elsewhere: a featured card
        return None
    return main


def state_of(response: TextResponse) -> EmbeddedState:
    """The response's embedded state, read once (an empty state for a page without)."""
    found = _cache.get(response)
    if found is not None:
        return found
    state = _EMPTY
    if has_state_markers(response.text):
        state = read_embedded_state(page_root(response), response.url)
    _cache[response] = state
    return state


def add_embedded_state(structured: StructuredData, response: TextResponse) -> None:
    """Add the state's product to a page's structured data that has none (see the module
    doc); a state listing products marks the page as a listing."""
    if structured.products:
        return
    state = state_of(response)
    if state.product is not None:
        node = dict(state.product)
        structured.products.append(node)
        structured.syntaxes[id(node)] = SYNTAX
    elif state.listing:
        structured.has_product_list = True


def state_urls(response: TextResponse, markup_links: int) -> list[str]:
    """The state's URLs, for a page whose markup gave ``markup_links`` followable links
    (none when that is :data:`FEW_LINKS` or more); never raises."""
    if markup_links >= FEW_LINKS:
        return []
    try:
        return state_of(response).urls
    except Exception:  # noqa: BLE001 -- the markup's links stand; the state's are a bonus
        logger.debug("Embedded state unreadable on %s", response.url, exc_info=True)
        return []


def has_embedded_state(response: TextResponse) -> bool:
    """Does the page embed a state with a product, a listing or URLs? (for rendering
    decisions: such a page needs no browser); never raises."""
    try:
        state = state_of(response)
    except Exception:  # noqa: BLE001
        return False
    return state.product is not None or state.listing or bool(state.urls)
