"""The visible page: every product field a shopper sees, read in one pass (the
details the structured data mostly gives, when first asked for)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from lxml.etree import _Element

from ..evidence import FIELDS, SiteEvidence
from ..first_tags import first_descendant
from .availability import not_sold_online, read_availability
from .buy import find_buy_control
from .classtests import prepare_class_tests
from .codes import brand_block, read_code_row, read_codes
from .details import read_breadcrumbs, read_description, read_images, read_rating
from .dom import text_of
from .index import PageIndex
from .name import heading_code, heading_text, select_h1
from .price import range_ends, select_price
from .records import Records, find_records
from .site_reading import read_at, template_test
from .url_code import shown_url_code

# every reader's class tests are registered by now (their modules are imported above)
prepare_class_tests()


@dataclass
class VisiblePage:
    """The product as the visible page shows it (every field may be missing)."""

    name: str | None = None
    price: Decimal | None = None
    price_text: str | None = None
    #: True when one selling price stands out in the price box after the heading.
    price_clear: bool = False
    #: (low, high) when the price box shows only a range ("$12.97 - $24.99").
    price_range: tuple[Decimal, Decimal] | None = None
    availability: str | None = None
    #: True when a dedicated stock element (``.stock``, ``.availability``) said it.
    availability_clear: bool = False
    codes: dict[str, str] = field(default_factory=dict)
    add_to_cart: bool = False
    #: One of the buy controls is enabled (not ``disabled``).
    buy_enabled: bool = False
    #: The page says the product cannot be bought online ("in-store only").
    not_sold_online: bool = False
    #: Number of cards in the largest grid of priced blocks (0: no grid).
    grid_cards: int = 0
    #: Records in the largest region of data records (:mod:`.records`; 0: none).
    records: int = 0
    #: The item number of the page's address that the page also shows (:mod:`.url_code`).
    url_code: str | None = None
    #: Fields read where the site's structured data taught their place (:mod:`..evidence`).
    learned: set[str] = field(default_factory=set)
    #: The page's walk and its heading's position in it (for the site's evidence).
    index: PageIndex | None = field(default=None, repr=False, compare=False)
    h1_pos: int = -1
    #: The page's data records (:mod:`.records`): the cards a listing's reader reads.
    record_set: Records | None = field(default=None, repr=False, compare=False)

    # The details below are read when first asked for (each read of the index only):
    # the merge asks for one only when the structured data lacks it, as it mostly does
    # not (about a tenth of a parse's time spared on such a page). A reader that raises
    # then fails the merge (``errors``: "merge", not "visible"), and the product is read
    # from the structured data alone, as when the visible page fails.
    @cached_property
    def breadcrumbs(self) -> list[str]:
        return read_breadcrumbs(self.index) if self.index is not None else []

    @cached_property
    def images(self) -> list[str]:
        idx = self.index
        if idx is None:
            return []
        return read_images(idx, idx.elements[self.h1_pos] if self.h1_pos >= 0 else None)

    @cached_property
    def description(self) -> str | None:
        return read_description(self.index) if self.index is not None else None

    @cached_property
    def rating(self) -> dict[str, float | int] | None:
        return read_rating(self.index) if self.index is not None else None

    @property
    def product_signals(self) -> int:
        return sum(
            (self.add_to_cart, any(self.codes.get(k) for k in ("sku", "mpn", "gtin"))
             or self.url_code is not None, self.availability is not None)
        )


def read_visible_page(
    root: _Element,
    url: str | None = None,
    site: SiteEvidence | None = None,
    structured: bool = False,
) -> VisiblePage:
    """Read the visible product fields of a parsed page (``url``: the page's address,
    for the item number it carries). With ``site``, the evidence of the page's site
    (:mod:`..evidence`): its template's stock statements are not read, and on a page
    without structured data (``structured`` False) the price and stock state are read
    where the site shows them."""
    page = VisiblePage()
    # root.find(".//body") (the first descendant so named), without the path's parsing
    # nor a look-ahead through the whole page (.first_tags)
    body = first_descendant(root, "body")
    idx = PageIndex(body if body is not None else root)
    title_el = first_descendant(root, "title")
    h1 = select_h1(idx, text_of(title_el) if title_el is not None else "", url or "")
    page.grid_cards = idx.find_grids(h1)
    records = page.record_set = find_records(idx, h1, url)
    if records.elements:
        idx.add_cards(records.elements)
        page.records = records.largest
    if h1 is not None:
        page.name = heading_text(h1)
        h1_pos = idx.order[h1]
        page.price, page.price_text, page.price_clear = select_price(idx, h1, h1_pos)
        if page.price is None:
            page.price_range = range_ends(page.price_text)
    else:
        h1_pos = -1
    # the buy control first: its state, then stock wording about this product near it
    page.add_to_cart, buy_pos = find_buy_control(idx)
    page.buy_enabled = buy_pos >= 0
    template = template_test(site) if site is not None else None
    page.availability, page.availability_clear = read_availability(
        idx, h1_pos, page.name, buy_pos, template
    )
    page.index, page.h1_pos = idx, h1_pos
    if site is not None and not structured:
        _read_learned(page, root, idx, site)
    page.codes = read_codes(idx, h1_pos)
    if "sku" not in page.codes:
        row = heading_code(idx, page.name)
        if row:
            page.codes.update({k: v for k, v in read_code_row(row).items() if k not in page.codes})
    if url and "sku" not in page.codes:
        page.url_code = shown_url_code(idx, url)
    if "brand" not in page.codes:
        brand = brand_block(idx, h1_pos)
        if brand:
            page.codes["brand"] = brand
    page.not_sold_online = not_sold_online(idx, h1_pos)
    return page


def _read_learned(page: VisiblePage, root: _Element, idx: PageIndex, site: SiteEvidence) -> None:
    """The price and stock state read where the site shows them (the twins of its
    structured data on its other pages), on a page that has none."""
    for name in FIELDS:
        path = site.position(name)
        read = read_at(root, idx, path, name) if path else None
        if read is None:
            continue
        value, text = read
        if name == "price" and isinstance(value, Decimal):
            page.price, page.price_text, page.price_clear = value, text, True
            page.price_range = None
        elif name == "availability" and isinstance(value, str):
            page.availability, page.availability_clear = value, True
        page.learned.add(name)
