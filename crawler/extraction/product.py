"""Zero-configuration product extraction: one pure function from a page to a product.

:func:`extract_product` reads the page's sources -- structured data
(:mod:`.structured`; a framework's embedded state, :mod:`.embedded`, when the markup
has no product) and the visible page (:mod:`.visible`) -- types the page
(:mod:`.pagetype`: only a product detail page gives a product), keeps the
structured nodes of its own product (:mod:`.main_product`), merges the sources
field by field (:mod:`.merge`), lets a :class:`~crawler.extraction.profiles.SiteProfile`,
when given, override every field it names (:mod:`.profile_overrides`), and
finishes the item: breadcrumbs exclude the product itself, no currency without a
price (except a price range's: provenance ``price: range``), provenance only for
fields that have a value.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

from scrapy.http import HtmlResponse, TextResponse
from scrapy.utils.response import get_base_url

from crawler.core.items import PAGE_FIELDS

from .embedded import add_embedded_state
from .evidence import PageEvidence, SiteEvidence
from .links import is_html_response
from .main_product import choose_products
from .merge import merge_sources
from .pagetype import is_error_page, is_negative_page, is_product_page, typed_by_profile
from .pageurl import canonical_url
from .profile_overrides import apply_profile
from .profiles import SiteProfile
from .sitepage import observe, settle, uncertain
from .structured import StructuredData, read_structured_data
from .tree import page_root
from .visible.page import VisiblePage, read_visible_page
from .weigh import page_title

logger = logging.getLogger(__name__)

#: The fields read from a product page (derived from :class:`crawler.core.items.Product`).
PRODUCT_FIELDS = PAGE_FIELDS

#: Why a page gave no product (:attr:`Extraction.rejected`), each with what it means.
REJECTED_REASONS = {
    "not_html": "not an HTML page",
    "profile": "the site profile's is_product selector does not match",
    "cart_or_account": "a cart, checkout, search, wish list or account page (heading or path)",
    "error_page": "an error page (HTTP status or wording) with no product evidence",
    "listing": "a listing: several unrelated products, a product list or a grid of cards",
    "no_product": "no product evidence (no structured product, og:type or product shown)",
    "no_name": "a product page without a name",
    "failed": "merging the sources raised and no source alone gave a product (see errors)",
}
_T = TypeVar("_T")


@dataclass
class Extraction:
    """What :func:`extract` made of a page: the product, or why there is none, and the
    sources that failed on the way (the product is then read from the others)."""

    product: dict[str, Any] | None = None
    #: A key of :data:`REJECTED_REASONS` when there is no product, else None.
    rejected: str | None = None
    #: (source, "ExceptionType: message") for each source that raised: ``structured``,
    #: ``embedded-state``, ``visible``, ``merge`` (the typing and merging of the sources),
    #: ``profile``, ``site`` (reading the site's evidence).
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: With a site's evidence given: what the page adds to it, and whether the site's
    #: evidence could settle what the page leaves to a guess (:mod:`.sitepage`).
    evidence: PageEvidence | None = None
    uncertain: bool = False
    #: The visible page read (None when reading it failed): its walk and data records
    #: are those a listing's cards are read from (:mod:`.listing`), not found twice.
    visible: VisiblePage | None = field(default=None, repr=False, compare=False)

    def _reject(self, reason: str) -> None:
        self.product, self.rejected = None, reason

    def _guard(self, source: str, read: Callable[[], _T], fallback: Callable[[], _T]) -> _T:
        try:
            return read()
        except Exception as exc:  # one broken source must not cost the others
            self.errors.append((source, f"{type(exc).__name__}: {exc}"))
            return fallback()


def extract(
    response: TextResponse,
    profile: SiteProfile | None = None,
    site: SiteEvidence | None = None,
) -> Extraction:
    """The product of a page with the reason when there is none, never raising for a
    source that fails: the structured data and the visible page are read apart, and
    when typing or merging them raises, the product is read again from the visible
    page alone, then from the structured data alone (the failures are in ``errors``).

    ``site``: the evidence of the page's site (:mod:`.evidence`; the spider's store
    gives it): the page is read with it (:mod:`.sitepage`), and what the page adds to it
    is in ``evidence`` (``uncertain``: the site's evidence could settle what the page
    leaves to a guess). Without it, the page is read on its own."""
    with _gc_paused():
        return _extract(response, profile, site)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for one page: the extraction makes tens of
    thousands of short-lived objects (freed by their reference counts, hardly ever in
    cycles), each few hundred of which started a collection that walked every young
    object still alive: 5-10% of a page's time. A cycle made meanwhile is collected by
    the next collection after the page."""
    if not gc.isenabled():  # paused already (an outer call, or the caller's choice)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _extract(
    response: TextResponse, profile: SiteProfile | None, site: SiteEvidence | None
) -> Extraction:
    result = Extraction()
    if not is_html_response(response):
        result._reject("not_html")
        return result
    root = page_root(response)
    structured = result._guard(
        "structured",
        lambda: read_structured_data(root, response.text, get_base_url(response)),
        StructuredData,
    )
    # a framework's embedded state when the markup gives no product (.embedded)
    result._guard("embedded-state", lambda: add_embedded_state(structured, response), _none)
    visible = result._guard(
        "visible",
        lambda: read_visible_page(root, response.url, site, bool(structured.products)),
        VisiblePage,
    )
    if visible.index is not None:
        result.visible = visible
    attempts = [(structured, visible), (StructuredData(), visible), (structured, VisiblePage())]
    for at, (data, page) in enumerate(attempts):
        try:
            _assemble(result, response, data, page, profile)
        except Exception as exc:
            if not at:
                result.errors.append(("merge", f"{type(exc).__name__}: {exc}"))
            continue
        if not at or result.product is not None:
            if site is not None:
                result._guard("site", lambda: _with_site(result, visible, structured, site, root),
                              lambda: None)
            return result
    # the sources together raised and neither alone gives a product: the page may hold
    # one, lost to the error (a dead letter, to replay once fixed), not a rejection
    result._reject("failed")
    return result


def _none() -> None:
    return None


def extract_product(
    response: TextResponse, profile: SiteProfile | None = None
) -> dict[str, Any] | None:
    """The product of a product detail page, or None for any other page.

    Returns a dict with every key of :data:`PRODUCT_FIELDS` (None or ``[]`` when
    unknown): ``price`` is a ``Decimal`` (the current selling price),
    ``currency`` an ISO 4217 code (None without a price), ``availability`` one
    of the schema.org short names, ``rating`` ``{"value": float, "count": int}``.
    A source that fails is logged (WARNING) and the product read from the others;
    :func:`extract` also says why a page gave none.
    """
    result = extract(response, profile)
    for source, error in result.errors:
        logger.warning("Extraction: %s failed on %s (%s)", source, response.url, error)
    return result.product


def _assemble(
    result: Extraction,
    response: TextResponse,
    structured: StructuredData,
    visible: VisiblePage,
    profile: SiteProfile | None,
) -> None:
    """Type the page and merge its sources into ``result`` (may raise)."""
    url = response.url
    by_profile = typed_by_profile(response, profile)
    if by_profile is False:
        return result._reject("profile")
    forced = by_profile is True  # the profile says it is a product page
    if not forced and is_negative_page(visible.name, urlsplit(url).path):
        return result._reject("cart_or_account")
    canonical = canonical_url(response)
    main = choose_products(structured, visible, url, canonical)
    if main is None:  # several unrelated products: a listing
        if not forced:
            return result._reject("listing")
        main = ([], [], None)
    title = page_title(response)  # read once: typing and merging both weigh it
    if not forced:
        texts = (visible.name, title)
        if is_error_page(response.status, texts, structured, visible, main):
            return result._reject("error_page")
        if not is_product_page(response, structured, visible, main, canonical):
            listing = (
                structured.has_product_list
                or visible.records >= 1
                or bool(main[0])
            )
            return result._reject("listing" if listing else "no_product")

    item = merge_sources(response, structured, visible, profile, main, canonical, title)
    if profile is not None and profile.fields:
        try:
            apply_profile(item, response, profile)
        except Exception as exc:  # the generic fields stay
            result.errors.append(("profile", f"{type(exc).__name__}: {exc}"))
    _finish(item)
    if not item["name"]:
        return result._reject("no_name")
    result.product, result.rejected = item, None
    return None


def extract_product_from_html(
    url: str, html: str, profile: SiteProfile | None = None
) -> dict[str, Any] | None:
    """:func:`extract_product` for a URL and its HTML text."""
    response = HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")
    return extract_product(response, profile)


def _finish(item: dict[str, Any]) -> None:
    name = item["name"]
    crumbs = item["breadcrumbs"]
    if name and crumbs and crumbs[-1].casefold() == name.casefold():
        crumbs.pop()
    prov = item["provenance"]
    if item["price"] is None and prov.get("price") != "range":
        item["currency"] = None  # a range's currency stays: the page shows it
    for key in list(prov):
        if item.get(key) in (None, "") and not (key == "price" and prov[key] == "range"):
            del prov[key]


def _with_site(
    result: Extraction,
    visible: VisiblePage,
    structured: StructuredData,
    site: SiteEvidence,
    root: Any,
) -> None:
    """The product's provenance with the site's evidence, and what the page adds to it."""
    if result.product is not None:
        settle(result.product, visible, site, root)
    result.evidence = observe(visible, result.product)
    result.uncertain = uncertain(
        visible, bool(structured.products), result.product, result.rejected
    )
