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
from decimal import Decimal
from functools import lru_cache
from typing import Any

from lxml import etree
from lxml.etree import _Element
from scrapy.http import TextResponse
from scrapy.utils.response import get_base_url

from crawler.policy.seeds import seed_fingerprint

from .first_tags import first_descendant
from .normalize.availability import availability_from_text
from .normalize.currency import currency_from_text, currency_hint_for_url
from .normalize.price import parse_price
from .normalize.text import normalize_text
from .normalize.urls import join_url
from .product import Extraction, extract
from .tree import page_root
from .visible.dom import SKIPPED_TAGS, hidden_with_class, text_of
from .visible.index import PageIndex
from .visible.name import select_h1
from .visible.price_text import LIST_BEFORE, MONEY_TEXT
from .visible.records import (
    _ACTION,
    Records,
    _jaccard,
    _link_target,
    _tag_paths,
    find_records,
)
from .visible.records import _SIMILAR as SIMILAR

_STRUCK_TAGS = frozenset({"del", "s", "strike"})
_STRUCK_CLASS = re.compile(
    r"(?:^|[-_\s])(?:old|was|regular|strike|struck|crossed|compare|before|list|rrp|msrp|"
    r"original)(?:$|[-_\s]|price)",
    re.I,
)
_BLOCK_TAGS = frozenset(
    {"div", "p", "li", "td", "th", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6", "ul",
     "ol", "section", "article", "figure", "figcaption", "dd", "dt", "dl", "header",
     "footer", "button", "table", "tbody"}
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# "from £10", "ab 10 €", "dès 10 €", "desde": the lowest of several prices, not the price
_FROM_BEFORE = re.compile(r"(?:\bfrom|\bab|\bdès|\bdesde|\bda|\bstarting at|\bod)\s*:?\s*$", re.I)
# "£2.50 / kg", "£2.50 per 100 g": a unit price beside the price
_UNIT_AFTER = re.compile(r"^\s*(?:/|per\b|pro\b|le\b|el\b|al\b)", re.I)
# a link to an action, not to a product page
_ACTION_PATH = re.compile(
    r"(?:/|[?&])(?:cart|basket|checkout|wishlist|wish-list|compare|add-to-cart|login|account)"
    r"(?:[/=?&.]|$)",
    re.I,
)
_RATING = re.compile(
    r"(\d(?:[.,]\d{1,2})?)\s*(?:out of|/|von|sur|de|su|z|of)\s*(5|10)\b", re.I
)
_RATING_CLASS = re.compile(r"rating|stars?\b|review", re.I)


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
    listed: list[dict[str, Any]] = []
    seen: set[str] = set()
    for region in records.regions:
        if any(a in strips for node in region[:1] for a in (node, *node.iterancestors())):
            continue  # a strip headed as other products' ("Bestsellers")
        for node in _with_alike_siblings(idx, region):
            card = read_card(node, response, hint)
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


def read_card(card: _Element, response: TextResponse, hint: str | None) -> dict[str, Any] | None:
    """The listed product of one card, or None (no link to a page, no name, or neither
    a price nor stock wording: no product's card)."""
    link, name = _name_link(card)
    if link is None or not name:
        return None
    target = _link_target(link.get("href") or "")
    if target is None:
        return None
    base = get_base_url(response)  # (response.urljoin's base, remembered for the page)
    url = seed_fingerprint(join_url(base, target))  # w3lib's canonical form, fast
    texts = _texts(card, _name_elements(card, link))
    price, regular, currency = _price(texts, hint)
    if currency is None:  # a bare "$" with no country to tell which: no price stored
        price = regular = None
    availability = _availability(texts)
    if price is None and availability is None:
        return None  # a category tile, a promotion, a banner
    return {
        "url": url,
        "name": name,
        "price": price,
        "currency": currency if price is not None else None,
        "regular_price": regular if price is not None else None,
        "availability": availability,
        "image": _image(card, base),
        "rating": _rating(card, texts),
        "position": 0,
    }


def _label(el: _Element) -> str:
    return normalize_text(text_of(el)) or ""


def _name_link(card: _Element) -> tuple[_Element | None, str | None]:
    """(the link that names the card's product, the name): a link in or around a
    heading, else the longest link text that is no action, else an image link (named by
    the card's heading or the image's ``alt``)."""
    links = [
        a for a in card.iter("a")
        if a.get("href") and _link_target(a.get("href") or "") is not None
        and not _ACTION_PATH.search(a.get("href") or "")
    ]
    if not links:
        return None, None
    heading = next((h for h in card.iter(*_HEADINGS) if _label(h)), None)
    if heading is not None:
        for a in links:
            if heading in a.iterancestors():  # <h3><a>name</a></h3>
                return a, _label(a) or _label(heading)
            if a in heading.iterancestors():  # <a><h3>name</h3> ...</a>
                return a, _label(heading)
    labels = [(a, _label(a)) for a in links]  # (each link's text read once)
    named = [(a, text) for a, text in labels if len(text) >= 3 and not _ACTION.search(text)]
    if named:
        return max(named, key=lambda pair: len(pair[1]))
    for a in links:
        img = a.find(".//img")
        if img is not None:
            name = _label(heading) if heading is not None else normalize_text(img.get("alt"))
            return a, name
    return None, None


def _name_elements(card: _Element, link: _Element) -> set[_Element]:
    """The elements whose text is the name (the link, a heading around it or in it)."""
    names = {link}
    for el in card.iter(*_HEADINGS):
        if link in el.iterdescendants() or el in link.iterdescendants():
            names.add(el)
    return names


def _texts(card: _Element, names: set[_Element]) -> list[tuple[str, bool]]:
    """The card's visible text outside its name, in pieces: (text, struck through),
    a piece per block (a paragraph, a cell, a line) or per struck run."""
    pieces: list[tuple[str, bool]] = []
    current: list[str] = []
    current_struck = [False]

    def flush() -> None:
        if current:  # (most boundaries close a block whose text was flushed already)
            text = normalize_text("".join(current))
            if text:
                pieces.append((text, current_struck[0]))
            current.clear()

    def walk(el: _Element, struck: bool) -> None:
        tag = el.tag
        if not isinstance(tag, str) or tag in SKIPPED_TAGS or el in names:
            return
        cls = None
        attributes = el.keys()
        if attributes:  # (most elements of a card have none, or a class alone)
            cls = el.get("class") if "class" in attributes else None
            hiding = cls or "hidden" in attributes or "style" in attributes
            if hiding and hidden_with_class(el, cls):
                return
        here = struck or tag in _STRUCK_TAGS or bool(cls and _struck_class(cls))
        boundary = tag in _BLOCK_TAGS or here != current_struck[0]
        if boundary:
            if current:
                flush()
            current_struck[0] = here
        text = el.text
        if text:
            current.append(text)
        for child in el:
            walk(child, here)
            tail = child.tail
            if tail:
                if current_struck[0] != here:
                    flush()
                    current_struck[0] = here
                current.append(tail)
        if boundary:
            if current:
                flush()
            current_struck[0] = struck

    walk(card, False)
    flush()
    return pieces


@lru_cache(maxsize=1024)
def _struck_class(cls: str) -> bool:
    """The class says struck through (a class attribute repeats on every card)."""
    return bool(_STRUCK_CLASS.search(cls))


@lru_cache(maxsize=1024)
def _rating_class(cls: str) -> bool:
    return bool(_RATING_CLASS.search(cls))


def _price(
    texts: list[tuple[str, bool]], hint: str | None
) -> tuple[Decimal | None, Decimal | None, str | None]:
    """(the price, the struck-through regular price, the currency) of the card's text
    pieces; no price when it is ambiguous (see the module doc)."""
    selling: list[tuple[Decimal, str | None]] = []
    regular: list[Decimal] = []
    ambiguous = False
    for text, struck in texts:
        for match in MONEY_TEXT.finditer(text):
            amount = match.group(0)
            currency = currency_from_text(amount, hint)
            value = parse_price(amount, currency)
            if value is None:
                continue
            before, after = text[: match.start()], text[match.end():]
            if _UNIT_AFTER.match(after):
                continue  # a unit price
            if struck or LIST_BEFORE.search(before):
                regular.append(value)
            elif _FROM_BEFORE.search(before):
                ambiguous = True
            else:
                selling.append((value, currency))
    values = {value for value, _ in selling}
    if ambiguous or len(values) != 1:
        return None, None, None
    price, currency = selling[0]
    if any(c != currency for _, c in selling):
        return None, None, None
    was = max(regular) if regular else None
    return price, was if was is not None and was > price else None, currency


def _availability(texts: list[tuple[str, bool]]) -> str | None:
    """The card's stock wording: one state, else None (none, or two that disagree)."""
    states = {state for text, _ in texts if (state := availability_from_text(text))}
    return states.pop() if len(states) == 1 else None


def _image(card: _Element, base: str) -> str | None:
    for img in card.iter("img"):
        src = img.get("src") or img.get("data-src") or img.get("data-original")
        if src and not src.startswith("data:"):
            return join_url(base, src.strip())
    return None


def _rating(card: _Element, texts: list[tuple[str, bool]]) -> dict[str, float] | None:
    """The card's rating from "4.5 out of 5" in its text or a rating element's label."""
    labels = [text for text, _ in texts]
    for el in card.iter(etree.Element):
        cls = el.get("class")
        if cls and _rating_class(cls):
            labels.extend(v for v in (el.get("aria-label"), el.get("title")) if v)
    for text in labels:
        match = _RATING.search(text)
        if match:
            value = float(match.group(1).replace(",", "."))
            if value <= float(match.group(2)):
                return {"value": value}
    return None
