"""Pages of the demo shop that fool a naive product extractor (pure: strings in, strings out).

None of these pages is a product page, yet each shows what a product page shows:

* ``/x/picks/<n>/`` (n = 1, 2, 3): "staff picks", a plain category listing in a
  markup other than the shop's own cards (a table: name link, price, stock
  wording, an add-to-cart button per row) holding exactly ``n`` products. With
  one row it has one heading, one price, one stock word and one buy button.
* ``/x/shelf/<markup>/<n>/`` (markup ``md`` with n = 1, 2, 3; ``ld`` with n = 1):
  a category grid headed "Products in <category>", ``n`` cards each with its
  product marked up as a schema.org Product (microdata on the card, or one JSON-LD
  Product per card), a linked name, a price, stock wording and a buy button, and a
  pager whose "1" links ``?page=1`` (the same page: the shop serves it too). With
  one card, the page holds exactly one structured product: the card's.
* ``/search?q=...``: search results (``<ol>`` of results with prices); the
  crawler never follows search links (and robots.txt disallows them), but the
  extractor must not take a one-result search for a product either.

Product pages carry a "customers also viewed" carousel of other products with
prices, stock wording and buy buttons (:func:`carousel`).
"""

from __future__ import annotations

import json
from html import escape
from weakref import WeakKeyDictionary

from demoshop.catalog import Catalog, Product, format_price

PICK_SIZES = (1, 2, 3)
#: (markup, cards) of the shelf pages: microdata cards, JSON-LD cards.
SHELVES = (("md", 1), ("md", 2), ("md", 3), ("ld", 1))
SCHEMA = "https://schema.org/"
STOCK_WORDS = {"InStock": "Available", "OutOfStock": "Sold out", "PreOrder": "Coming soon"}


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def pick_path(size: int) -> str:
    return f"/x/picks/{size}/"


def picks(catalog: Catalog, size: int) -> list[Product]:
    """The ``size`` products of the picks page of that size (deterministic)."""
    ranked = sorted(catalog.listed, key=lambda p: (p.id * 7919 + size * 104729) % 1009)
    return ranked[:size]


def shelf_path(markup: str, size: int) -> str:
    return f"/x/shelf/{markup}/{size}/"


def shelf_paths(catalog: Catalog) -> set[str]:
    return {shelf_path(m, n) for m, n in SHELVES if len(shelf(catalog, m, n)) == n}


def trap_paths(catalog: Catalog) -> set[str]:
    """The crawlable trap pages (listings a correct crawler fetches, with no product)."""
    return {pick_path(n) for n in PICK_SIZES if len(catalog.products) >= n} | shelf_paths(catalog)


def shelf(catalog: Catalog, markup: str, size: int) -> list[Product]:
    """The ``size`` products of a shelf: the first English pages of one leaf category."""
    leaves = [leaf for leaf in catalog.leaves() if leaf.products]
    if not leaves:
        return []
    leaf = leaves[(size * 7 + len(markup)) % len(leaves)]
    return [p for p in leaf.products if p.language == "en"][:size]


def shelf_body(catalog: Catalog, markup: str, size: int) -> tuple[str, str]:
    """(body, head) of a shelf page (see the module doc)."""
    shown = shelf(catalog, markup, size)
    cards = []
    head = ""
    for p in shown:
        md = markup == "md"
        item = f' itemscope itemtype="{SCHEMA}Product"' if md else ""
        offer = f' itemprop="offers" itemscope itemtype="{SCHEMA}Offer"' if md else ""
        meta = (
            f'<meta itemprop="price" content="{p.price:.2f}">'
            f'<meta itemprop="priceCurrency" content="{p.currency}">'
            f'<link itemprop="availability" href="{SCHEMA}{p.availability}">'
            if md
            else ""
        )
        cards.append(
            f'<div class="card"{item}><a href="{_e(p.path)}"><img src="{_e(p.images[0])}" '
            f'alt=""></a><h2 class="card-title"><a href="{_e(p.path)}"'
            f"{' itemprop=url' if md else ''}>"
            f"<span{' itemprop=name' if md else ''}>{_e(p.name)}</span></a></h2>"
            f'<div class="card-offer"{offer}>{meta}<span class="card-price">'
            f'{format_price(p.price)}</span> <span class="stock">{STOCK_WORDS[p.availability]}'
            f'</span></div><button class="add-to-cart" data-id="{p.id}">Add to cart</button>'
            "</div>\n"
        )
        if not md:
            data = {
                "@context": "https://schema.org",
                "@type": "Product",
                "name": p.name,
                "url": p.path,
                "sku": p.sku,
                "image": p.images[0],
                "offers": {
                    "@type": "Offer",
                    "price": f"{p.price:.2f}",
                    "priceCurrency": p.currency,
                    "availability": SCHEMA + p.availability,
                },
            }
            text = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
            head += f'<script type="application/ld+json">{text}</script>\n'
    category = shown[0].category.name if shown else "this category"
    body = (
        f"<h1>Products in {_e(category)}</h1>\n"
        f'<p class="count">{len(shown)} {"product" if len(shown) == 1 else "products"}</p>\n'
        f'<div class="cards">\n{"".join(cards)}</div>\n'
        '<nav class="pagination">Page <a href="?page=1" aria-current="page">1</a></nav>\n'
    )
    return body, head


def picks_body(catalog: Catalog, size: int) -> str:
    rows = "".join(
        "<tr>"
        f'<td><a href="{_e(p.path)}"><img src="{_e(p.images[0])}" alt=""> {_e(p.name)}</a></td>'
        f"<td>{_e(p.brand)}</td>"
        f'<td class="cost">{format_price(p.price)}</td>'
        f"<td>{STOCK_WORDS[p.availability]}</td>"
        f'<td><form action="/cart/add" method="post"><input type="hidden" name="id" '
        f'value="{p.id}"><button type="submit">Add to cart</button></form></td>'
        "</tr>\n"
        for p in picks(catalog, size)
    )
    word = "pick" if size == 1 else "picks"
    return (
        f"<h1>Staff {word} of the week</h1>\n"
        f"<p>Our team chose {size} {'item' if size == 1 else 'items'} for you.</p>\n"
        '<table class="catalogue"><thead><tr><th>Item</th><th>Brand</th><th>Cost</th>'
        f"<th>Stock</th><th></th></tr></thead>\n<tbody>\n{rows}</tbody></table>\n"
    )


def search_results(catalog: Catalog, words: str) -> tuple[str, list[Product]]:
    """(body, results): products whose name holds every word of the query."""
    wanted = [w for w in words.casefold().split() if w]
    found = [p for p in catalog.products if wanted and all(w in p.name.casefold() for w in wanted)][
        :10
    ]
    items = "".join(
        f'<li class="result"><h2><a href="{_e(p.path)}">{_e(p.name)}</a></h2>'
        f"<p>{_e(p.description[:80])}…</p>"
        f'<p><b class="amount">{format_price(p.price)}</b> · {STOCK_WORDS[p.availability]}</p>'
        f'<button class="add-to-cart" data-id="{p.id}">Add to cart</button></li>\n'
        for p in found
    )
    body = f"<h1>{_e(words)}</h1>\n<p>{len(found)} result{'s' if len(found) != 1 else ''}</p>\n" + (
        f'<ol class="search-results">\n{items}</ol>\n' if found else "<p>Nothing found.</p>\n"
    )
    return body, found


_CAROUSEL_MODULUS = 997
_CAROUSEL_INVERSE = pow(31, -1, _CAROUSEL_MODULUS)
_by_residue: WeakKeyDictionary[Catalog, dict[int, list[Product]]] = WeakKeyDictionary()


def _carousel_picks(catalog: Catalog, product: Product, count: int) -> list[Product]:
    """The ``count`` other products with the smallest ``(id * 31 + product.id * 17) % 997``,
    in catalogue order among equals: what a stable sort of the whole catalogue by that key
    gives, found in O(count) from the products grouped by id modulo 997 (a sort per
    product page made rendering a 100 000-product shop quadratic)."""
    groups = _by_residue.get(catalog)
    if groups is None:
        groups = {}
        for other in catalog.listed:
            groups.setdefault(other.id % _CAROUSEL_MODULUS, []).append(other)
        _by_residue[catalog] = groups
    picks: list[Product] = []
    for key in range(_CAROUSEL_MODULUS):
        # (id * 31 + product.id * 17) % 997 == key  <=>  id % 997 == residue
        residue = (key - product.id * 17) * _CAROUSEL_INVERSE % _CAROUSEL_MODULUS
        for other in groups.get(residue, ()):
            if other.id != product.id:
                picks.append(other)
                if len(picks) == count:
                    return picks
    return picks


def carousel(catalog: Catalog, product: Product, count: int = 4) -> str:
    """A "customers also viewed" strip of other products, each with price and a buy button."""
    ranked = _carousel_picks(catalog, product, count)
    if not ranked:
        return ""
    slides = "".join(
        f'<div class="slide"><a href="{_e(p.path)}">{_e(p.name)}</a>'
        f'<span class="cost">{format_price(p.price)}</span>'
        f"<span>{STOCK_WORDS[p.availability]}</span>"
        f'<button class="add-to-cart" data-id="{p.id}">Add to cart</button></div>'
        for p in ranked
    )
    return f'<div class="carousel"><h2>Customers also viewed</h2>{slides}</div>\n'
