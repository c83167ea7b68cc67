"""Pages of the demo shop that fool a naive product extractor (pure: strings in, strings out).

None of these pages is a product page, yet each shows what a product page shows:

* ``/x/picks/<n>/`` (n = 1, 2, 3): "staff picks", a plain category listing in a
  markup other than the shop's own cards (a table: name link, price, stock
  wording, an add-to-cart button per row) holding exactly ``n`` products. With
  one row it has one heading, one price, one stock word and one buy button.
* ``/search?q=...``: search results (``<ol>`` of results with prices); the
  crawler never follows search links (and robots.txt disallows them), but the
  extractor must not take a one-result search for a product either.

Product pages carry a "customers also viewed" carousel of other products with
prices, stock wording and buy buttons (:func:`carousel`).
"""

from __future__ import annotations

from html import escape
from weakref import WeakKeyDictionary

from demoshop.catalog import Catalog, Product, format_price

PICK_SIZES = (1, 2, 3)
STOCK_WORDS = {"InStock": "Available", "OutOfStock": "Sold out", "PreOrder": "Coming soon"}


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def pick_path(size: int) -> str:
    return f"/x/picks/{size}/"


def picks(catalog: Catalog, size: int) -> list[Product]:
    """The ``size`` products of the picks page of that size (deterministic)."""
    ranked = sorted(catalog.listed, key=lambda p: (p.id * 7919 + size * 104729) % 1009)
    return ranked[:size]


def trap_paths(catalog: Catalog) -> set[str]:
    """The crawlable trap pages (listings a correct crawler fetches, with no product)."""
    return {pick_path(n) for n in PICK_SIZES if len(catalog.products) >= n}


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
    found = [
        p for p in catalog.products if wanted and all(w in p.name.casefold() for w in wanted)
    ][:10]
    items = "".join(
        f'<li class="result"><h2><a href="{_e(p.path)}">{_e(p.name)}</a></h2>'
        f"<p>{_e(p.description[:80])}…</p>"
        f'<p><b class="amount">{format_price(p.price)}</b> · {STOCK_WORDS[p.availability]}</p>'
        f'<button class="add-to-cart" data-id="{p.id}">Add to cart</button></li>\n'
        for p in found
    )
    body = (
        f"<h1>{_e(words)}</h1>\n<p>{len(found)} result{'s' if len(found) != 1 else ''}</p>\n"
        + (f'<ol class="search-results">\n{items}</ol>\n' if found else "<p>Nothing found.</p>\n")
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
