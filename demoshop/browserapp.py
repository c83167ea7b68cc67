"""The demo shop's section built in the browser (``--browser-products N``; off by default).

Two variants of the same ``N`` products (the first ``N`` English products of the
catalogue), grouped by top-level category, each reachable from the shop's home page
("Shop in the app") and each with a home of its own:

``/app/`` -- client-rendered over a JSON API
    Every page is an application shell: ``<div id="root"></div>`` and
    ``/app/app.js``, a small script that reads ``location.pathname``, fetches
    ``/app/api/home.json``, ``/app/api/c/<slug>.json`` or ``/app/api/p/<id>.json``
    and builds the DOM: the category links, a category's product cards, a product's
    name, price, stock and SKU. The HTML holds no product, no state and no link: a
    crawler needs a browser here.
``/state/`` -- embedded state, Next.js-like
    Every page is a shell too (``<div id="__next"></div>``), with its data in
    ``<script id="__NEXT_DATA__" type="application/json">``: the categories, a
    category's products, a product (name, ``price: {amount, currencyCode}``, SKU,
    ``availability``) and its related products, each with its ``url``. A crawler
    reads it from the HTML; the browser is not needed.

Routes: ``/app/``, ``/app/c/<slug>/``, ``/app/p/<id>``, ``/app/app.js``,
``/app/api/...json``; ``/state/``, ``/state/c/<slug>/``, ``/state/p/<id>``,
``/state/_next/main.js``. :meth:`BrowserSection.expected_products` is what a crawler
must store for each variant.
"""

from __future__ import annotations

import json
from decimal import Decimal
from html import escape
from typing import Any

from demoshop.catalog import Catalog, Category, Product, format_price

APP = "/app/"
STATE = "/state/"
VARIANTS = {"app": APP, "state": STATE}
STOCK_TEXT = {"InStock": "In stock", "OutOfStock": "Out of stock", "PreOrder": "Pre-order"}

APP_JS = r"""(function () {
  var root = document.getElementById("root");
  var path = location.pathname, api;
  var m = path.match(/^\/app\/p\/(\d+)$/), c = path.match(/^\/app\/c\/([\w-]+)\/$/);
  if (m) api = "/app/api/p/" + m[1] + ".json";
  else if (c) api = "/app/api/c/" + c[1] + ".json";
  else api = "/app/api/home.json";
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  fetch(api).then(function (r) { return r.json(); }).then(function (data) {
    document.title = data.title + " | Demo Shop";
    if (data.product) {
      var p = data.product, a = el("article", {"class": "product"});
      a.appendChild(el("h1", {}, p.name));
      var price = el("p", {"class": "price"});
      price.appendChild(el("span", {"class": "price-now"}, p.price_text));
      a.appendChild(price);
      a.appendChild(el("p", {"class": "stock"}, p.stock_text));
      var form = el("form", {"class": "add-to-cart", "action": "/cart/add", "method": "post"});
      form.appendChild(el("button", {}, "Add to cart"));
      a.appendChild(form);
      var codes = el("table", {"class": "product-codes"}), row = el("tr");
      row.appendChild(el("th", {}, "SKU")); row.appendChild(el("td", {}, p.sku));
      codes.appendChild(row); a.appendChild(codes);
      root.appendChild(a);
      return;
    }
    root.appendChild(el("h1", {}, data.title));
    var list = el("ul", {"class": data.products ? "products" : "categories"});
    (data.products || data.categories).forEach(function (item) {
      var li = el("li", {"class": data.products ? "card" : ""});
      li.appendChild(el("a", {"href": item.url}, item.name));
      if (item.price_text) li.appendChild(el("span", {"class": "card-price"}, item.price_text));
      list.appendChild(li);
    });
    root.appendChild(list);
  });
})();
"""

STATE_JS = r"""(function () {
  var data = JSON.parse(document.getElementById("__NEXT_DATA__").textContent).props.pageProps;
  var root = document.getElementById("__next"), p = data.product;
  var h = document.createElement("h1");
  h.textContent = p ? p.name : (data.category ? data.category.name : "Shop in the app");
  root.appendChild(h);
})();
"""


def _shell(title: str, body: str, head: str = "") -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en-US">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)} | Demo Shop</title>\n{head}</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )


class BrowserSection:
    """The section's pages (path -> (content type, body)) and what a crawler must store."""

    def __init__(self, catalog: Catalog, size: int) -> None:
        english = [p for p in catalog.products if p.language == "en"]
        self.products: list[Product] = english[:size]
        tops: dict[str, list[Product]] = {}
        for product in self.products:
            top = product.category.parent or product.category
            tops.setdefault(top.slug, []).append(product)
        self.categories: dict[str, tuple[Category, list[Product]]] = {
            slug: ((items[0].category.parent or items[0].category), items)
            for slug, items in tops.items()
        }

    # -- addresses -------------------------------------------------------------------
    @staticmethod
    def product_path(variant: str, product: Product) -> str:
        return f"{VARIANTS[variant]}p/{product.id}"

    @staticmethod
    def category_path(variant: str, slug: str) -> str:
        return f"{VARIANTS[variant]}c/{slug}/"

    def page_paths(self, variant: str) -> set[str]:
        """The HTML pages of one variant a crawler fetches (its home, categories, products)."""
        return (
            {VARIANTS[variant]}
            | {self.category_path(variant, slug) for slug in self.categories}
            | {self.product_path(variant, p) for p in self.products}
        )

    def expected_products(self, variant: str, base_url: str) -> dict[str, dict[str, Any]]:
        """URL -> the fields a crawler must store for each product of ``variant``."""
        base = base_url.rstrip("/")
        return {
            base + self.product_path(variant, p): {
                "name": p.name,
                "price": p.price,
                "currency": p.currency,
                "availability": p.availability,
                "sku": p.sku,
            }
            for p in self.products
        }

    # -- pages -------------------------------------------------------------------------
    def pages(self) -> dict[str, tuple[str, bytes]]:
        out: dict[str, tuple[str, bytes]] = {}
        html = "text/html; charset=utf-8"
        js = "application/javascript; charset=utf-8"
        out[APP + "app.js"] = (js, APP_JS.encode())
        out[STATE + "_next/main.js"] = (js, STATE_JS.encode())
        for path, data in self._documents():
            out["/app/api/" + path + ".json"] = ("application/json", _json(data))
        out[APP] = (html, self._app_shell("Shop in the app"))
        out[STATE] = (html, self._state_page("Shop in the app", "/", self._home_props("state")))
        for slug, (top, items) in self.categories.items():
            out[self.category_path("app", slug)] = (html, self._app_shell(top.name))
            props = self._category_props("state", top, items)
            out[self.category_path("state", slug)] = (
                html,
                self._state_page(top.name, "/c/[slug]", props),
            )
        for product in self.products:
            out[self.product_path("app", product)] = (html, self._app_shell(product.name))
            props = {
                "product": self._product_state(product),
                "related": [self._card("state", p) for p in self._related(product)],
            }
            out[self.product_path("state", product)] = (
                html,
                self._state_page(product.name, "/p/[id]", props),
            )
        return out

    def _documents(self) -> list[tuple[str, dict[str, Any]]]:
        """The JSON API of the client-rendered variant: (path, data)."""
        docs = [("home", self._home_props("app"))]
        for slug, (top, items) in self.categories.items():
            docs.append((f"c/{slug}", self._category_props("app", top, items)))
        for product in self.products:
            data = {
                "title": product.name,
                "product": {
                    "name": product.name,
                    "price_text": format_price(product.price),
                    "stock_text": STOCK_TEXT[product.availability],
                    "sku": product.sku,
                },
            }
            docs.append((f"p/{product.id}", data))
        return docs

    def _home_props(self, variant: str) -> dict[str, Any]:
        return {
            "title": "Shop in the app",
            "categories": [
                {"name": top.name, "url": self.category_path(variant, slug)}
                for slug, (top, _) in self.categories.items()
            ],
        }

    def _category_props(self, variant: str, top: Category, items: list[Product]) -> dict[str, Any]:
        return {
            "title": top.name,
            "category": {"name": top.name, "slug": top.slug},
            "products": [self._card(variant, p) for p in items],
        }

    def _card(self, variant: str, product: Product) -> dict[str, Any]:
        card: dict[str, Any] = {
            "id": product.id,
            "name": product.name,
            "url": self.product_path(variant, product),
            "price_text": format_price(product.price),
        }
        if variant == "state":
            card["price"] = _money(product.price, product.currency)
            card["sku"] = product.sku
        return card

    def _product_state(self, product: Product) -> dict[str, Any]:
        return {
            "__typename": "Product",
            "id": product.id,
            "name": product.name,
            "sku": product.sku,
            "brand": product.brand,
            "price": _money(product.price, product.currency),
            "availability": product.availability,
            "url": self.product_path("state", product),
        }

    def _related(self, product: Product) -> list[Product]:
        top = product.category.parent or product.category
        return [p for p in self.categories[top.slug][1] if p.id != product.id][:4]

    @staticmethod
    def _app_shell(title: str) -> bytes:
        body = '<div id="root"></div>\n<script src="/app/app.js"></script>\n'
        return _shell(title, body).encode()

    @staticmethod
    def _state_page(title: str, route: str, props: dict[str, Any]) -> bytes:
        data = {"props": {"pageProps": props}, "page": route, "query": {}, "buildId": "demo"}
        text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        body = (
            '<div id="__next"></div>\n'
            f'<script id="__NEXT_DATA__" type="application/json">{text}</script>\n'
            '<script src="/state/_next/main.js" defer></script>\n'
        )
        return _shell(title, body).encode()

    def home_link(self) -> str:
        """The section's entry on the shop's home page."""
        return (
            '<section class="apps"><h2>Shop in the app</h2><ul>'
            f'<li><a href="{APP}">The app</a></li>'
            f'<li><a href="{STATE}">The app, server-rendered state</a></li></ul></section>\n'
        )


def _money(amount: Decimal, currency: str) -> dict[str, str]:
    return {"amount": f"{amount:.2f}", "currencyCode": currency}


def _json(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()
