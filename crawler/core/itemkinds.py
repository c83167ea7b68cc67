"""Item kinds: what each spider yields, and the schema that item is held to.

A spider yields items of one kind: the ``ecommerce`` spider products, the
``finance`` spider quotes (and the ``ecommerce`` spider, beside its products, the
listed products of listing pages: :func:`kind_of_item`). The kind decides the JSON
Schema the validation pipeline applies (``crawler/schema/<kind>.schema.json``),
which store pipelines write the items (each store pipeline serves one kind and steps aside for the
others), and what the master's store commands read (``export``, ``recrawl``,
the dashboard's tables).

The master never imports a spider (Scrapy is heavy and a spider checks Redis when
it is built), so the spider -> kind table lives here, next to the kinds: a new
spider adds its line (see ``docs/spiders.md``, "Adding a spider"). A spider
class says its kind too (``item_kind``); ``tests/unit/test_spiders.py`` holds
the two to each other. A spider not in the table yields products.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ItemKind:
    """One kind of item: its name, its plural (tables, collections, messages), its schema;
    ``refreshed_fields``: the fields a listing's card must show of an item for
    ``recrawl --listings`` to spare the item's own page (:mod:`crawler.core.listings`)."""

    name: str
    plural: str
    refreshed_fields: tuple[str, ...] = ("price",)

    @property
    def schema_file(self) -> str:
        return f"{self.name}.schema.json"


PRODUCT = ItemKind("product", "products", refreshed_fields=("price", "availability"))
QUOTE = ItemKind("quote", "quotes")
#: a product card of a listing page, yielded beside products (crawler.core.items.ListedProduct)
LISTED_PRODUCT = ItemKind("listed_product", "listed products")
KINDS: dict[str, ItemKind] = {kind.name: kind for kind in (PRODUCT, QUOTE, LISTED_PRODUCT)}
#: the crawl stat of the listed products that passed validation: no items of their own,
#: a worker's ``items`` (crawler.extensions.workerstats) leaves them out
LISTED_VALID = "validation/listed_valid"
#: the key only a listed product has (its listing page): how it is told from a product
LISTED_KEY = "listing_url"

#: spider name -> the kind of the items it yields
SPIDER_ITEM_KINDS: dict[str, str] = {"ecommerce": PRODUCT.name, "finance": QUOTE.name}
#: the spiders of this project, in the order the master shows them
SPIDERS: tuple[str, ...] = tuple(SPIDER_ITEM_KINDS)


def kind_named(name: str) -> ItemKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown item kind {name!r} (known: {', '.join(KINDS)})") from None


def kind_of_spider(spider: str) -> ItemKind:
    """The kind of the items the spider named ``spider`` yields (products when unknown)."""
    return KINDS[SPIDER_ITEM_KINDS.get(spider, PRODUCT.name)]


def kind_of_item(item: Any, default: ItemKind) -> ItemKind:
    """The kind of one item of a spider whose kind is ``default``: a listed product
    (it names its listing page, :data:`LISTED_KEY`) beside products, else ``default``."""
    if default is PRODUCT:
        try:
            if LISTED_KEY in item:
                return LISTED_PRODUCT
        except TypeError:  # an item that is no mapping: a product of another shape
            return default
    return default


def listed_count(items: list[Any], positions: list[int]) -> int:
    """How many of the items at ``positions`` are listed products (a product spider's)."""
    return sum(1 for at in positions if kind_of_item(items[at], PRODUCT) is LISTED_PRODUCT)


def kind_of(spider: Any) -> ItemKind:
    """The item kind of a spider or spider class: its ``item_kind``, else by its name."""
    declared = getattr(spider, "item_kind", None)
    if isinstance(declared, str) and declared:
        return kind_named(declared)
    return kind_of_spider(str(getattr(spider, "name", "") or ""))
