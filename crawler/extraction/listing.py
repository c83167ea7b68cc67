"""Listed products: the product cards of a listing page, read one by one.

A page that :func:`.product.extract` types as a listing (``rejected == "listing"``)
shows other products' cards: a category page, a search result, a shelf. The cards
are the **data records** that typed it (:func:`.visible.records.find_records`, the
one mechanism): each record of a priced region, outside the page's header, footer
and navs and outside a block headed as other products' ("Bestsellers",
"Recommended": :func:`.visible.records.headed_strips`), is read as one *listed
product*; so are the siblings of a region's records that are alike them (a
promotion tile among the cards breaks the run of alike records that the typing
takes, not the listing).

A card gives:

* ``url``: the page its name links to (else its image's link, else its first link to
  a page that is no cart, wish list or comparison), absolute and canonical as the
  dupefilter sees it (w3lib's ``canonicalize_url``), so that it names the product's
  row;
* ``name``: that link's text (a heading's, an image's ``alt`` when the link shows only
  an image), as the card shows it (a name cut short stays cut);
* ``price``: the one amount of money the card shows outside its name, that is not
  struck through (``<del>``, ``<s>``, ``<strike>``, a class saying old/was/regular/
  compare, a list-price label before it: "Was £20", "RRP") nor a unit price ("£2.50
  / kg"); ``regular_price``: the struck-through amount, when it is more than the price.
  Precision before recall: two different amounts that neither strike nor label tell
  apart, or a price "from" an amount, give no price;
* ``currency``: the amount's sign or code (a bare ``$`` only with the site's country
  hint, as everywhere); an amount whose currency neither tells gives no price (the
  product's own page, with its structured data, does);
* ``availability``: the card's stock wording ("In stock", "Sold out", "Only 3 left"),
  None when it says nothing of stock or says two things;
* ``image`` (the first image's address), ``rating`` (``{"value": float}`` from a
  "4.5 out of 5" wording or a rating element's label), ``position`` (1-based among
  the page's listed products).

A card with neither a price nor stock wording is no listed product (a category tile,
a promotion tile, a banner); a card without a link to a page is none either (the
records are found by their links). A product page gives no listed products: its
recommendation strips are other products' cards, but the page is no listing.

Limits: only cards that the records mechanism sees (a card is found by its link, see
:mod:`.visible.records`); prices written as images or by scripts are not read; a
rating drawn as stars without a number or a label gives none.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree
from lxml.etree import _Element
from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from crawler.policy.seeds import seed_fingerprint

from .card_text import card_availability, card_price, card_rating, card_texts, rating_class
from .first_tags import first_descendant
from .normalize.currency import currency_hint_for_url
from .normalize.text import normalize_text
from .normalize.urls import join_url
from .product import Extraction, extract
from .tree import page_root
from .visible.dom import text_of
from .visible.index import PageIndex
from .visible.name import select_h1
from .visible.records import (
    _ACTION,
    Records,
    _jaccard,
    _link_target,
    _tag_paths,
    find_records,
)
from .visible.records import _SIMILAR as SIMILAR

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# a link to an action, not to a product page
_ACTION_PATH = re.compile(
    r"(?:/|[?&])(?:cart|basket|checkout|wishlist|wish-list|compare|add-to-cart|login|account)"
    r"(?:[/=?&.]|$)",
    re.I,
)

def read_listing(
    response: TextResponse, extraction: Extraction | None = None
) -> list[dict[str, Any]]:
    """The listed products of a listing page (see the module doc), ``[]`` for any other
    page. ``extraction``: the page's :func:`.product.extract` when the caller has it
    (the spider does), else it is read here: only a page typed as a listing has cards,
    read from the walk and the data records the extraction found (not found again)."""
    if extraction is None:
        extraction = extract(response)
    if extraction.rejected != "listing":
        return []
    visible = extraction.visible
    if visible is not None and visible.index is not None and visible.record_set is not None:
        return read_cards(response, (visible.index, visible.record_set))
    return read_cards(response)


def read_cards(
    response: TextResponse, found: tuple[PageIndex, Records] | None = None
) -> list[dict[str, Any]]:
    """The cards of the page's data records as listed products, whatever the page's
    type (:func:`read_listing` asks the typing first). ``found``: the page's walk and
    records as its extraction found them (:class:`.visible.page.VisiblePage`), else
    they are found here, as the extraction finds them."""
    if found is None:
        found = _walk_and_records(response)
    idx, records = found
    strips = set(records.strips)
    hint = currency_hint_for_url(response.url)
    base = get_base_url(response)  # (response.urljoin's base)
    listed: list[dict[str, Any]] = []
    seen: set[str] = set()
    for region in records.regions:
        if any(a in strips for node in region[:1] for a in (node, *node.iterancestors())):
            continue  # a strip headed as other products' ("Bestsellers")
        for node in _with_alike_siblings(idx, region):
            card = read_card(node, response, hint, base)
            if card is None or card["url"] in seen:
                continue
            seen.add(card["url"])
            card["position"] = len(listed) + 1
            listed.append(card)
    listed.sort(key=lambda c: c["position"])
    return listed


def _walk_and_records(response: TextResponse) -> tuple[PageIndex, Records]:
    """The page's walk and data records, found as :func:`.visible.page.read_visible_page`
    finds them."""
    root = page_root(response)
    body = first_descendant(root, "body")
    idx = PageIndex(body if body is not None else root)
    title_el = first_descendant(root, "title")
    url = response.url
    h1 = select_h1(idx, text_of(title_el) if title_el is not None else "", url)
    return idx, find_records(idx, h1, url)


def _with_alike_siblings(idx: PageIndex, region: list[_Element]) -> list[_Element]:
    """The region's records and their parent's other children of the same tag that are
    alike one of them (tag paths), in document order: the cards a tile among them cut
    off from the run of alike records."""
    parent = region[0].getparent()
    if parent is None:
        return region
    members = set(region)
    shapes = [_tag_paths(node) for node in region[:3]]
    out: list[_Element] = []
    for child in parent.iterchildren(region[0].tag):
        if child in members:
            out.append(child)
        elif child in idx.order:
            paths = _tag_paths(child)
            if any(_jaccard(paths, shape) >= SIMILAR for shape in shapes):
                out.append(child)
    return out


def read_card(
    card: _Element, response: TextResponse, hint: str | None, base: str | None = None
) -> dict[str, Any] | None:
    """The listed product of one card, or None (no link to a page, no name, or neither
    a price nor stock wording: no product's card). ``base``: the page's base URL
    (``get_base_url(response)``), when the caller has it."""
    links, heading, title, images, rated = _parts(card)
    link, name = _name_link(links, heading, title)
    if link is None or not name:
        return None
    target = _link_target(link.get("href") or "")
    if target is None:
        return None
    texts = card_texts(card, _name_elements(card, link))
    price, regular, currency = card_price(texts, hint)
    if currency is None:  # a bare "$" with no country to tell which: no price stored
        price = regular = None
    availability = card_availability(texts)
    if price is None and availability is None:
        return None  # a category tile, a promotion, a banner
    if base is None:
        base = get_base_url(response)  # (response.urljoin's base)
    return {
        "url": seed_fingerprint(join_url(base, target)),  # w3lib's canonical form, fast
        "name": name,
        "price": price,
        "currency": currency if price is not None else None,
        "regular_price": regular if price is not None else None,
        "availability": availability,
        "image": _image(images, base),
        "rating": card_rating(rated, texts),
        "position": 0,
    }


def _parts(
    card: _Element,
) -> tuple[list[_Element], _Element | None, str, list[_Element], list[_Element]]:
    """Of the card's elements, in one pass: (its links to a page that is no action, its
    first heading that shows a text and that text, its images, its elements of a rating
    class), each in document order."""
    links: list[_Element] = []
    images: list[_Element] = []
    rated: list[_Element] = []
    heading, title = None, ""
    for el in card.iter(etree.Element):
        tag = el.tag
        if tag == "a":
            href = el.get("href")
            if href and _link_target(href) is not None and not _ACTION_PATH.search(href):
                links.append(el)
        elif tag == "img":
            images.append(el)
        elif heading is None and tag in _HEADINGS:
            title = _label(el)
            if title:
                heading = el
        cls = el.get("class")
        if cls and rating_class(cls):
            rated.append(el)
    return links, heading, title, images, rated


def _label(el: _Element) -> str:
    """The element's text (:func:`.visible.dom.text_of`), normalized; that of a heading
    around a link alone ("<h3><a>name</a></h3>") read from the two elements' texts."""
    if len(el) == 1:
        child = el[0]
        if not len(child) and isinstance(child.tag, str):
            return normalize_text((el.text or "") + (child.text or "") + (child.tail or "")) or ""
    return normalize_text(text_of(el)) or ""


def _name_link(
    links: list[_Element], heading: _Element | None, title: str
) -> tuple[_Element | None, str | None]:
    """(the link that names the card's product, the name): a link in or around a
    heading, else the longest link text that is no action, else an image link (named by
    the card's heading or the image's ``alt``)."""
    if not links:
        return None, None
    if heading is not None:
        # (sets of the heading's links and ancestors, not a walk up from each link)
        inside, around = set(heading.iterdescendants("a")), set(heading.iterancestors())
        for a in links:
            if a in inside:  # <h3><a>name</a></h3>
                return a, _label(a) or title
            if a in around:  # <a><h3>name</h3> ...</a>
                return a, title
    labels = [(a, _label(a)) for a in links]  # (each link's text read once)
    named = [(a, text) for a, text in labels if len(text) >= 3 and not _ACTION.search(text)]
    if named:
        return max(named, key=lambda pair: len(pair[1]))
    for a in links:
        img = a.find(".//img")
        if img is not None:
            name = title if heading is not None else normalize_text(img.get("alt"))
            return a, name
    return None, None


def _name_elements(card: _Element, link: _Element) -> set[_Element]:
    """The elements whose text is the name (the link, a heading around it in the card or
    in it)."""
    names = {link}
    if len(link):
        names.update(el for el in link.iterdescendants() if el.tag in _HEADINGS)
    if link is not card:
        for el in link.iterancestors():
            if el.tag in _HEADINGS:
                names.add(el)
            if el is card:
                break
    return names


def _image(images: list[_Element], base: str) -> str | None:
    for img in images:
        src = img.get("src") or img.get("data-src") or img.get("data-original")
        if src and not src.startswith("data:"):
            return join_url(base, src.strip())
    return None
