"""Page typing: is this page a product detail page?

Only product detail pages give a product; category, listing, search, cart,
checkout, account and error pages give none (their links are still followed).
In the order :func:`crawler.extraction.product.extract_product` asks:

* :func:`typed_by_profile` -- a site profile's ``is_product`` selector decides
  alone when there is one;
* :func:`is_negative_page` -- a cart, checkout, search or account page, by its
  heading or its path: never a product, whatever its markup says;
* several unrelated structured products are a listing
  (:func:`crawler.extraction.main_product.choose_products` gives None);
* :func:`is_error_page` -- an error page is known by what the server or the page
  says (an HTTP error status; "page not found", "404", "error" in the heading or
  the title) AND the page lacking product evidence (no structured product, no
  ``og:type`` product, no product shown): a number in a heading is no error
  ("Memory Foam Pillow 404", "Peugeot 404 model car", "Error 500 T-shirt" are
  products when the page shows them as products);
* :func:`is_product_page` -- without a structured product, the page must list
  no products and either say ``og:type`` product (:func:`og_says_product`) or
  show one (:func:`shows_product`), or show one that cannot be bought now
  (:func:`shows_unavailable_product`); a page with a grid of priced cards and no
  price of its own is a listing unless its structured product is the page's
  (its URL, its heading, or most words of its title); a page whose one
  structured product is a card linking away (:func:`is_card_of_listing`: its name
  is a link to another page, and the heading names something else, "Products in
  Fiction") is a listing of one card.
"""

from __future__ import annotations

import re
from typing import Any

from scrapy.http import TextResponse

from .main_product import MainProduct
from .nodes import as_list, name_key
from .normalize.text import normalize_text
from .pageurl import same_page, same_path
from .profiles import SiteProfile
from .structured import StructuredData
from .visible.dom import text_of
from .visible.page import VisiblePage
from .weigh import page_title

_NEGATIVE_HEADING = re.compile(
    r"shopping (?:cart|bag|basket)|your (?:cart|bag|basket)|^(?:cart|basket|bag|checkout)$|"
    r"checkout|search results|results for|wish ?list|sign in|log ?in|my account",
    re.I,
)
#: What an error page says of itself in its heading or <title>, in a few languages.
_ERROR_WORDING = re.compile(
    r"\b(?:404|410|500|503)\b|\berror\b|not found|no longer (?:exists|available)|"
    r"nicht gefunden|introuvable|no (?:se ha )?encontrad|non trovat|nie znaleziono|"
    r"n[aã]o encontrad|niet gevonden|hittades inte",
    re.I,
)
_NEGATIVE_PATH = re.compile(
    r"/(?:cart|checkout|basket|search|catalogsearch|wishlist|account|login|my-account)"
    r"(?:/|$|\.)",
    re.I,
)


def typed_by_profile(response: TextResponse, profile: SiteProfile | None) -> bool | None:
    """What the site's profile says of the page: None when it has no ``is_product``
    selector, else whether the selector matches."""
    if profile is None or profile.is_product is None:
        return None
    return bool(profile.is_product.getall(response.selector))


def is_negative_page(heading: str | None, url_path: str) -> bool:
    """A cart, checkout, search or account page, by its heading or its path."""
    return bool((heading and _NEGATIVE_HEADING.search(heading)) or _NEGATIVE_PATH.search(url_path))


def is_error_page(
    status: int,
    texts: tuple[str | None, ...],
    structured: StructuredData,
    visible: VisiblePage,
    main: MainProduct,
) -> bool:
    """An error page: an HTTP error status or error wording in ``texts`` (the heading,
    the title), on a page with no product evidence (see the module doc)."""
    says_error = status >= 400 or any(t and _ERROR_WORDING.search(t) for t in texts)
    if not says_error:
        return False
    nodes, variants, _ = main
    evidence = (
        bool(nodes or variants) or og_says_product(structured.opengraph) or (shows_product(visible))
    )
    return not evidence


def og_says_product(og: dict[str, str]) -> bool:
    """OpenGraph types the page as a product (``og:type`` product, with a title)."""
    return "product" in (og.get("og:type") or "").lower() and bool(og.get("og:title"))


def is_product_page(
    response: TextResponse,
    structured: StructuredData,
    visible: VisiblePage,
    main: MainProduct,
    canonical: str | None,
) -> bool:
    """A product detail page, by its structured products (``main``), OpenGraph and
    what it shows (see the module doc); for pages no profile types."""
    nodes, variants, _ = main
    url = response.url
    og = structured.opengraph
    if not (nodes or variants):
        if structured.has_product_list:
            return False
        return (
            og_says_product(og)
            or shows_product(visible)
            or shows_unavailable_product(visible, page_title(response))
        )
    if is_card_of_listing(response, nodes + variants, visible.name, canonical):
        return False
    if visible.records >= 2 and visible.price is None:
        # A listing that marks up one Product (e.g. for a rich snippet): the
        # heading must name it, or the page must be its URL.
        titles = " ".join(
            t for t in (page_title(response), normalize_text(og.get("og:title"))) if t
        )
        return any(
            _refers_to(n, url, canonical)
            or name_key(n.get("name")) == (visible.name or "").casefold()
            or _named_in(name_key(n.get("name")), titles)
            for n in nodes + variants
        )
    return True


def is_card_of_listing(
    response: TextResponse, nodes: list[dict[str, Any]], heading: str | None, canonical: str | None
) -> bool:
    """The structured product is a card of a listing, not the page: the heading names
    something else (neither name holds the other) and the product's name is the text of
    a link to another page of the site (outside the breadcrumb trail), as a listing's
    card links its product. The class: category grids, shelves and search results of one
    (or a few) cards, whose cards carry the product markup (microdata or JSON-LD)."""
    names = {name_key(n.get("name")) for n in nodes} - {""}
    if len(names) != 1:
        return False
    name = names.pop()
    head = (heading or "").casefold()
    if not head or name in head or head in name:
        return False
    own = [u for u in (response.url, canonical) if u]
    for a in response.selector.root.iter("a"):
        href = a.get("href")
        if not href or href.startswith("#"):
            continue
        text = normalize_text(text_of(a))
        if text is None or text.casefold() != name:
            continue
        if any("breadcrumb" in (el.get("class") or "").lower() for el in a.iterancestors()):
            continue
        target = response.urljoin(href)
        if not any(same_path(target, u) for u in own):
            return True
    return False


def _refers_to(node: dict[str, Any], url: str, canonical: str | None) -> bool:
    """The node (or one of its offers) names this page's address."""
    values = [node.get("url"), node.get("@id")] + [
        v for o in as_list(node.get("offers")) if isinstance(o, dict) for v in o.values()
    ]
    return any(
        isinstance(v, str) and (same_page(v, url) or bool(canonical and same_page(v, canonical)))
        for v in values
    )


def _named_in(name: str, titles: str) -> bool:
    """Most words of the product's name are in the page's <title>/og:title (a listing's
    title names its category, not one of its products)."""
    words = set(re.findall(r"\w+", name))
    if len(words) < 2:
        return False
    return len(words & set(re.findall(r"\w+", titles.casefold()))) >= 0.8 * len(words)


def shows_product(visible: VisiblePage) -> bool:
    """A page with no structured product is one when it shows one heading, a
    selling price (or a price range) right after it (outside any grid of cards) and at least one
    product signal: add-to-cart control, product code, or stock wording."""
    shows_price = visible.price is not None or bool(visible.price_text)  # or a price range
    return bool(visible.name and shows_price and visible.product_signals >= 1)


_UNAVAILABLE = frozenset({"OutOfStock", "Discontinued"})


def shows_unavailable_product(visible: VisiblePage, title: str | None) -> bool:
    """A product page that sells nothing now: no price and no buy control, but the
    product's title (a heading whose words the page's ``<title>`` repeats), the shop's
    code for it under a label (a details list or table) and a line in its buy area
    saying it is unavailable ("Currently unavailable.", "Derzeit nicht verfügbar.").

    Class of pages: marketplaces' out-of-stock product pages, which drop the price and
    the buy control and keep the title, the images, the unavailability line and the
    details; the other products' cards around them (sponsored strips, "customers also
    viewed") are no listing. A listing's heading names its category, shows no shop code
    of one item and no unavailability line of its own."""
    return bool(
        visible.name
        and visible.price is None
        and not visible.price_text
        and not visible.buy_enabled
        and visible.availability in _UNAVAILABLE
        and any(visible.codes.get(k) for k in ("sku", "mpn", "gtin"))
        and title
        and _named_in(name_key(visible.name), title.casefold())
    )
