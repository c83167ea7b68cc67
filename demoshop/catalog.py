"""The demo shop's catalogue: categories and products, pure and deterministic.

``Catalog.build(products, seed)`` always returns the same shop for the same
arguments, on any machine and any Python run (nothing depends on ``hash()`` or
on the clock). Each product is a function of ``(seed, id)`` only, so a shop of
100 products is the first 100 products of a shop of 200.

``price_version`` models a later visit to the same shop: about a third of the
products get a new price and a few flip between in stock and out of stock;
names, URLs, codes and the category tree never change.

Site map (every path below is a page a correct crawler fetches exactly once):

* ``/`` the home page;
* ``/c/<top>/`` a top-level category: links to its sub-categories only;
* ``/c/<top>/<sub>/`` a leaf category, page 1 of its product listing, and
  ``/c/<top>/<sub>/?page=N`` for N >= 2 (never ``?page=1``);
* ``/p/<slug>-<id>.html`` a product page (plain ones in several languages and
  currencies: :data:`PLAIN_LANGUAGES`);
* ``/x/picks/<n>/`` listings of 1, 2 and 3 products in another markup, and
  ``/x/shelf/<markup>/<n>/`` category grids headed "Products in <category>" of 1, 2
  and 3 cards, each card marked up as a Product (:mod:`demoshop.traps`): pages a
  crawler fetches that hold no product.

Products whose id ends in 44 have the model number "404" ("Norvik Eco Kettle 404"):
a heading that looks like an error page's, on a product page.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import urlsplit

CURRENCY = "USD"
AVAILABILITIES = ("InStock", "OutOfStock", "PreOrder")
#: Product page markup, chosen by ``id % 3``.
MARKUPS = ("jsonld", "microdata", "plain")
#: Language and currency of plain product pages, chosen by ``id // 3`` (the other
#: markups are English, in USD).
PLAIN_LANGUAGES = (
    ("en", "USD"), ("de", "EUR"), ("fr", "EUR"), ("es", "EUR"), ("pl", "PLN"), ("sv", "SEK"),
)
LANGUAGE_CURRENCY = dict(PLAIN_LANGUAGES)
#: Products whose id ends in these two digits have the model number "404", which looks
#: like an error code in their heading ("Norvik Eco Kettle 404"): they are products.
ERROR_CODE_MODEL_EVERY = 44


def language_of(pid: int) -> str:
    """The language of product ``pid``'s page."""
    if MARKUPS[pid % 3] != "plain":
        return "en"
    return PLAIN_LANGUAGES[(pid // 3) % len(PLAIN_LANGUAGES)][0]

_CENT = Decimal("0.01")

# Top-level categories -> sub-categories -> product nouns.
_TREE: dict[str, dict[str, tuple[str, ...]]] = {
    "Electronics": {
        "Laptops": ("Laptop", "Notebook", "Ultrabook"),
        "Phones": ("Smartphone", "Phone"),
        "Headphones": ("Headphones", "Earbuds", "Headset"),
        "Cameras": ("Camera", "Action Cam", "Lens"),
    },
    "Home & Kitchen": {
        "Cookware": ("Frying Pan", "Saucepan", "Dutch Oven"),
        "Lighting": ("Desk Lamp", "Floor Lamp", "Pendant Light"),
        "Furniture": ("Chair", "Side Table", "Bookshelf"),
        "Small Appliances": ("Kettle", "Toaster", "Blender"),
    },
    "Sports & Outdoors": {
        "Camping": ("Tent", "Sleeping Bag", "Camp Stove"),
        "Cycling": ("Bike Helmet", "Bike Light", "Saddle"),
        "Fitness": ("Yoga Mat", "Kettlebell", "Jump Rope"),
        "Running": ("Running Shoe", "Running Vest"),
    },
    "Books": {
        "Fiction": ("Novel", "Short Stories"),
        "Science": ("Field Guide", "Textbook"),
        "Cooking": ("Cookbook", "Baking Book"),
    },
    "Toys & Games": {
        "Board Games": ("Board Game", "Card Game"),
        "Puzzles": ("Jigsaw Puzzle", "Puzzle Box"),
        "Building Sets": ("Building Set", "Construction Kit"),
    },
    "Garden": {
        "Tools": ("Pruner", "Trowel", "Rake"),
        "Watering": ("Hose", "Watering Can", "Sprinkler"),
        "Plants": ("Herb Kit", "Seed Set"),
    },
    "Clothing": {
        "Jackets": ("Rain Jacket", "Down Jacket"),
        "Shoes": ("Sneaker", "Boot"),
        "Accessories": ("Scarf", "Beanie", "Backpack"),
    },
}

# Some brands need HTML/JSON escaping or are not ASCII: extractors must cope.
_BRANDS = (
    "Norvik", "Aster & Vale", "Bäckström", "Kestrel", "D'Arcy Works", "Lumio",
    "Orbital", "Pinecrest", "Quarry <Pro>", "Halden", "Tessel", "Zephyr",
)
_ADJECTIVES = (
    "Compact", "Classic", "Pro", "Ultra", "Eco", "Deluxe", "Mini", "Smart",
    "Rugged", "Essential", "Premium", "Lite",
)
_BLURBS = (
    "Built to last and easy to care for.",
    "A customer favourite, now in a refreshed design.",
    "Lightweight, quiet and made from recycled materials.",
    "Backed by a two-year warranty.",
    "Designed in Scandinavia, tested in the real world.",
    "Everything you need, nothing you don't.",
)


def _digest(*parts: object) -> bytes:
    text = ":".join(str(part) for part in parts).encode()
    return hashlib.blake2b(text, digest_size=16).digest()


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from ``parts``."""
    return int.from_bytes(_digest(*parts)[:8], "big") / 2.0**64


def _pick(seq: tuple[Any, ...] | list[Any], *parts: object) -> Any:
    return seq[int(_unit(*parts) * len(seq))]


def slugify(text: str) -> str:
    """``"Aster & Vale Pro Desk Lamp"`` -> ``"aster-vale-pro-desk-lamp"`` (ASCII only)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def gtin13_check_digit(first12: str) -> int:
    """The GS1 check digit of a 12-digit GTIN-13 prefix."""
    total = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(first12))
    return (10 - total % 10) % 10


def format_price(price: Decimal) -> str:
    """``Decimal("1299")`` -> ``"$1,299.00"`` (the way the pages show prices)."""
    return f"${price:,.2f}"


@dataclass(frozen=True)
class Category:
    """A category. ``parent`` is None for a top-level category."""

    name: str
    slug: str
    parent: Category | None = None
    children: list[Category] = field(default_factory=list, compare=False, repr=False)
    products: list[Product] = field(default_factory=list, compare=False, repr=False)

    @property
    def path(self) -> str:
        if self.parent is None:
            return f"/c/{self.slug}/"
        return f"/c/{self.parent.slug}/{self.slug}/"

    @property
    def is_leaf(self) -> bool:
        return self.parent is not None

    def page_count(self, page_size: int) -> int:
        """Pages of the listing (a leaf with no products still has its page 1)."""
        if not self.is_leaf:
            return 1
        return max(1, -(-len(self.products) // page_size))

    def page_path(self, page: int) -> str:
        return self.path if page == 1 else f"{self.path}?page={page}"


@dataclass(frozen=True)
class Product:
    """One product as the shop sells it (``price`` is the real selling price)."""

    id: int
    slug: str
    name: str
    brand: str
    sku: str
    gtin13: str
    price: Decimal
    list_price: Decimal | None
    currency: str
    availability: str
    images: tuple[str, ...]
    rating: tuple[float, int] | None
    description: str
    category: Category

    @property
    def path(self) -> str:
        return f"/p/{self.slug}-{self.id}.html"

    @property
    def markup(self) -> str:
        """``"jsonld"``, ``"microdata"`` or ``"plain"`` (no structured data)."""
        return MARKUPS[self.id % 3]

    @property
    def language(self) -> str:
        """The language of the product page (``en`` unless a plain page says otherwise)."""
        return language_of(self.id)

    @property
    def breadcrumbs(self) -> list[tuple[str, str]]:
        """(name, path) from Home to the product itself."""
        sub = self.category
        top = sub.parent
        assert top is not None
        return [("Home", "/"), (top.name, top.path), (sub.name, sub.path), (self.name, self.path)]


class Catalog:
    """The whole shop: a category tree and its products. Build it with ``Catalog.build``."""

    def __init__(
        self,
        *,
        products: list[Product],
        categories: list[Category],
        seed: int,
        price_version: int,
        page_size: int,
        sitemap_only: int = 0,
    ) -> None:
        self.products = products
        # the last ``sitemap_only`` products are linked from no page: only the
        # sitemaps lead to them (new arrivals not yet in any category listing)
        self.sitemap_only = sitemap_only
        self.listed = products[: len(products) - sitemap_only]
        self.categories = categories  # top-level, in display order
        self.seed = seed
        self.price_version = price_version
        self.page_size = page_size
        self._by_path = {p.path: p for p in products}
        self._by_id = {p.id: p for p in products}
        self._position = {
            p.id: at for leaf in self.leaves() for at, p in enumerate(leaf.products)
        }

    # --- construction ------------------------------------------------------

    @classmethod
    def build(
        cls,
        products: int = 200,
        seed: int = 1,
        price_version: int = 0,
        page_size: int = 12,
        sitemap_only: int = 0,
    ) -> Catalog:
        if products < 0:
            raise ValueError("products must be >= 0")
        if page_size < 1:
            raise ValueError("page_size must be >= 1")
        if not 0 <= sitemap_only <= products:
            raise ValueError("sitemap_only must be from 0 to products")
        tops = cls._build_tree(seed)
        leaves = [sub for top in tops for sub in top.children]
        items = [cls._build_product(i, seed, price_version, leaves) for i in range(1, products + 1)]
        for product in items[: products - sitemap_only]:
            product.category.products.append(product)
        return cls(
            products=items,
            categories=tops,
            seed=seed,
            price_version=price_version,
            page_size=page_size,
            sitemap_only=sitemap_only,
        )

    @staticmethod
    def _build_tree(seed: int) -> list[Category]:
        names = sorted(_TREE, key=lambda name: _unit(seed, "top", name))
        count = 4 + int(_unit(seed, "tops") * 3)  # 4 to 6 top-level categories
        tops = []
        for name in sorted(names[:count], key=list(_TREE).index):
            top = Category(name=name, slug=slugify(name))
            subs = sorted(_TREE[name], key=lambda sub: _unit(seed, "sub", name, sub))
            keep = min(len(subs), 2 + int(_unit(seed, "subs", name) * 3))  # 2 to 4
            for sub in sorted(subs[:keep], key=list(_TREE[name]).index):
                top.children.append(Category(name=sub, slug=slugify(sub), parent=top))
            tops.append(top)
        return tops

    @staticmethod
    def _build_product(pid: int, seed: int, version: int, leaves: list[Category]) -> Product:
        leaf = _pick(leaves, seed, "leaf", pid)
        assert leaf.parent is not None
        noun = _pick(_TREE[leaf.parent.name][leaf.name], seed, "noun", pid)
        brand = _pick(_BRANDS, seed, "brand", pid)
        adjective = _pick(_ADJECTIVES, seed, "adj", pid)
        model = f"{chr(65 + int(_unit(seed, 'model', pid) * 26))}{pid * 7 % 1000 + 100}"
        if pid % 100 == ERROR_CODE_MODEL_EVERY:
            model = "404"  # a model number that looks like an error code ("Peugeot 404")
        name = f"{brand} {adjective} {noun} {model}"
        brand_code = slugify(brand).replace("-", "")[:3].upper()

        # Prices: log-uniform from about $4 to $2,500, ending in .99 or .00.
        base = Decimal(int(4 * (625 ** _unit(seed, "price", pid))))
        base += Decimal("0.99") if _unit(seed, "cents", pid) < 0.7 else Decimal(0)
        roll = _unit(seed, "stock", pid)
        availability = "OutOfStock" if roll < 0.15 else "PreOrder" if roll < 0.19 else "InStock"
        if version:
            if _unit(seed, "reprice", version, pid) < 1 / 3:
                factor = Decimal(str(0.75 + 0.5 * _unit(seed, "factor", version, pid)))
                new = (base * factor).quantize(Decimal(1), ROUND_HALF_UP) + Decimal("0.49")
                base = new if new != base else new + 1
            if availability != "PreOrder" and _unit(seed, "flip", version, pid) < 0.06:
                availability = "OutOfStock" if availability == "InStock" else "InStock"
        price = base.quantize(_CENT)
        list_price = None
        if _unit(seed, "sale", pid) < 0.3:
            markup = Decimal(str(1.1 + 0.4 * _unit(seed, "was", pid)))
            list_price = (price * markup).quantize(Decimal(1), ROUND_HALF_UP).quantize(_CENT)
            if list_price <= price:
                list_price = (price + 1).quantize(_CENT)

        first12 = f"{(int(_unit(seed, 'gtin', pid) * 10**6) * 10**6 + pid) % 10**12:012d}"
        gtin = first12 + str(gtin13_check_digit(first12))
        images = tuple(
            f"/img/p/{pid}-{n}.png" for n in range(1, 2 + int(_unit(seed, "imgs", pid) * 3))
        )
        rating = None
        if _unit(seed, "rated", pid) < 0.7:
            value = round(1 + 4 * _unit(seed, "stars", pid) ** 0.5, 1)
            rating = (value, 1 + int(_unit(seed, "reviews", pid) * 480))
        description = (
            f"The {name} from {brand}: {'an' if adjective[0] in 'AEIOU' else 'a'} "
            f"{adjective.lower()} {noun.lower()} for everyday use. "
            + _pick(_BLURBS, seed, "blurb", pid)
        )
        return Product(
            id=pid,
            slug=slugify(name),
            name=name,
            brand=brand,
            sku=f"{brand_code}-{pid:05d}",
            gtin13=gtin,
            price=price,
            list_price=list_price,
            currency=LANGUAGE_CURRENCY[language_of(pid)],
            availability=availability,
            images=images,
            rating=rating,
            description=description,
            category=leaf,
        )

    # --- navigation ---------------------------------------------------------

    def all_categories(self) -> list[Category]:
        """Every category, each top-level one followed by its sub-categories."""
        return [c for top in self.categories for c in (top, *top.children)]

    def leaves(self) -> list[Category]:
        return [sub for top in self.categories for sub in top.children]

    def product(self, path_or_id: str | int) -> Product | None:
        if isinstance(path_or_id, int):
            return self._by_id.get(path_or_id)
        return self._by_path.get(_path_of(path_or_id))

    def category_page(self, category: Category, page: int) -> list[Product]:
        """The products on page ``page`` (1-based) of a leaf category's listing."""
        start = (page - 1) * self.page_size
        return category.products[start : start + self.page_size]

    def featured(self, count: int = 8) -> list[Product]:
        """The products shown on the home page."""
        ranked = sorted(self.listed, key=lambda p: _unit(self.seed, "featured", p.id))
        return ranked[:count]

    def related(self, product: Product, count: int = 4) -> list[Product]:
        """Other products of the same category, shown on a product page."""
        siblings = product.category.products
        if len(siblings) <= 1:
            return []
        if product.id not in self._position:  # sitemap-only: not in its category's listing
            return siblings[:count]
        at = self._position[product.id]
        return [siblings[(at + k) % len(siblings)] for k in range(1, min(count + 1, len(siblings)))]

    # --- what a correct crawler fetches --------------------------------------

    def product_paths(self) -> set[str]:
        return set(self._by_path)

    def sitemap_only_paths(self) -> set[str]:
        """Product pages that no page links to: only the sitemaps list them."""
        return {p.path for p in self.products[len(self.listed) :]}

    def listing_paths(self) -> set[str]:
        """Home, every category page, every pagination page of the leaves and the
        trap listings of :mod:`demoshop.traps`."""
        from demoshop.traps import trap_paths

        paths = {"/", *trap_paths(self)}
        for category in self.all_categories():
            for page in range(1, category.page_count(self.page_size) + 1):
                paths.add(category.page_path(page))
        return paths

    def crawlable_paths(self) -> set[str]:
        """Exactly the pages a correct crawler must fetch, each once."""
        return self.listing_paths() | self.product_paths()

    @property
    def page_count(self) -> int:
        return len(self.crawlable_paths())

    def expected_product(self, path: str, base_url: str | None = None) -> dict[str, Any]:
        """What a correct extractor returns for the product page at ``path``.

        ``path`` may also be an absolute URL. Keys: ``path``, ``url`` (absolute
        when ``base_url`` is given, else the path), ``name``, ``price`` (Decimal),
        ``list_price`` (Decimal or None), ``currency``, ``availability``, ``sku``,
        ``gtin``, ``brand``, ``images`` (paths), ``breadcrumbs`` (names, Home
        first, the product's name last), ``rating`` (``{"value", "count"}`` or
        None), ``description``, ``markup``. Raises KeyError for an unknown path.
        """
        product = self.product(path)
        if product is None:
            raise KeyError(path)
        url = product.path
        if base_url:
            url = base_url.rstrip("/") + product.path
        return {
            "path": product.path,
            "url": url,
            "name": product.name,
            "price": product.price,
            "list_price": product.list_price,
            "currency": product.currency,
            "availability": product.availability,
            "sku": product.sku,
            "gtin": product.gtin13,
            "brand": product.brand,
            "images": list(product.images),
            "breadcrumbs": [name for name, _ in product.breadcrumbs],
            "rating": (
                {"value": product.rating[0], "count": product.rating[1]}
                if product.rating
                else None
            ),
            "description": product.description,
            "markup": product.markup,
            "language": product.language,
        }

    def expected_products(self, base_url: str | None = None) -> dict[str, dict[str, Any]]:
        """``expected_product`` of every product, keyed by its ``url``."""
        return {
            (e := self.expected_product(p.path, base_url))["url"]: e for p in self.products
        }


def _path_of(path_or_url: str) -> str:
    if "://" in path_or_url:
        parts = urlsplit(path_or_url)
        return parts.path
    return path_or_url.split("?", 1)[0].split("#", 1)[0]
