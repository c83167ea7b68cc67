"""A product in a framework's state, known by its shape, written as a schema.org node.

State blocks name things as their front end likes (``title``, ``productName``,
``salePrice``, ``price: {amount, currencyCode}``, ``priceRange.minVariantPrice``,
``inStock``, ``stockStatus``, ``availableForSale``, ``skuId``...). A dict is a
*product* when it has a name and a price (or ``offers``), plus at least one other
mark of a product: a SKU or GTIN, a stock state, an image, a brand, or a type
naming a product (``__typename``, ``@type``, ``type``). A shipping option or a fee
(``{name, price, currency}``) is not one.

:func:`product_node` turns such a dict into the node the rest of the extractor
reads (``{"@type": "Product", "name", "sku", "offers": {"price", "priceCurrency",
"availability"}, ...}``); the fields are normalised by :mod:`..merge` like JSON-LD's.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..normalize.availability import normalize_availability
from ..normalize.currency import parse_currency
from ..normalize.price import parse_price

# fmt: off
NAME_KEYS = ("name", "title", "productName", "product_name", "displayName", "display_name")
PRICE_KEYS = (
    "price", "salePrice", "sale_price", "currentPrice", "current_price", "finalPrice",
    "final_price", "sellingPrice", "selling_price", "offerPrice", "priceValue", "prices",
    "pricing", "priceRange", "price_range",
)
AMOUNT_KEYS = (
    "amount", "value", "current", "final", "sale", "selling", "raw", "centAmount",
    "minVariantPrice", "min", "regular", "price", "formatted", "formattedValue",
)
CURRENCY_KEYS = ("currency", "currencyCode", "priceCurrency", "currency_code", "currencyIso")
SKU_KEYS = ("sku", "SKU", "skuId", "sku_id", "productCode", "itemNumber", "articleNumber",
            "partNumber", "mpn")
GTIN_KEYS = ("gtin", "gtin13", "gtin12", "gtin14", "gtin8", "ean", "upc", "barcode")
STOCK_KEYS = ("availability", "stockStatus", "stock_status", "inStock", "in_stock", "isInStock",
              "is_in_stock", "available", "availableForSale", "isAvailable", "stock",
              "inventoryStatus", "stockLevel", "quantityAvailable", "inventory_quantity")
IMAGE_KEYS = ("image", "images", "imageUrl", "image_url", "thumbnail", "featuredImage", "media")
BRAND_KEYS = ("brand", "vendor", "manufacturer", "brandName")
URL_KEYS = ("url", "href", "link", "canonicalUrl", "canonical_url", "permalink", "productUrl",
            "path", "uri", "seoUrl")
TYPE_KEYS = ("__typename", "@type", "type", "kind", "_type", "entityType")
# fmt: on


def _first(node: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = node.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        text = " ".join(value.split())
        return text if 0 < len(text) <= 300 and "://" not in text else None
    return None


def name_of(node: dict[str, Any]) -> str | None:
    return _text(_first(node, NAME_KEYS))


def price_of(node: dict[str, Any], depth: int = 0) -> tuple[Decimal | None, str | None]:
    """(amount, currency) of a price however it is written: a number, a text, a dict
    (``amount``/``value``/``centAmount`` with ``fractionDigits``, a currency beside
    it), a range's minimum, or the first of a list of prices."""
    currency = parse_currency(_first(node, CURRENCY_KEYS)) if isinstance(node, dict) else None
    raw = _first(node, PRICE_KEYS) if depth == 0 else _first(node, AMOUNT_KEYS)
    if isinstance(raw, list):
        raw = raw[0] if raw else None
    if isinstance(raw, dict):
        if depth >= 3:
            return None, currency
        if "centAmount" in raw and isinstance(raw.get("centAmount"), int):
            digits = raw.get("fractionDigits", 2)
            cents = Decimal(raw["centAmount"])
            scaled = cents.scaleb(-int(digits if isinstance(digits, int) else 2))
            return scaled, parse_currency(_first(raw, CURRENCY_KEYS)) or currency
        amount, inner = price_of(raw, depth + 1)
        return amount, inner or currency
    if isinstance(raw, bool) or raw is None:
        return None, currency
    if isinstance(raw, (int, float)):
        return (Decimal(str(raw)) if raw >= 0 else None), currency
    if isinstance(raw, str):
        return parse_price(raw, currency), currency or parse_currency(raw)
    return None, currency


def availability_of(node: dict[str, Any]) -> str | None:
    for key in STOCK_KEYS:
        if key not in node:
            continue
        value = node[key]
        if isinstance(value, bool):
            return "InStock" if value else "OutOfStock"
        if isinstance(value, (int, float)) and key in (
            "stock",
            "stockLevel",
            "quantityAvailable",
            "inventory_quantity",
        ):
            return "InStock" if value > 0 else "OutOfStock"
        if isinstance(value, str):
            found = normalize_availability(value)
            if found:
                return found
        if isinstance(value, dict):  # {"status": "IN_STOCK"}, {"inStock": true}
            inner = availability_of(value) or normalize_availability(
                value.get("status") or value.get("state") or value.get("value")
            )
            if inner:
                return inner
    return None


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        text = str(value).strip()
        return text if 0 < len(text) <= 80 else None
    return None


def _product_typed(node: dict[str, Any]) -> bool:
    for key in TYPE_KEYS:
        value = node.get(key)
        if isinstance(value, str) and "product" in value.lower():
            return True
    return False


def is_product_shaped(node: dict[str, Any]) -> bool:
    """A name, a price or offers, and one more mark of a product (see the module doc)."""
    if name_of(node) is None:
        return False
    if "offers" not in node and price_of(node)[0] is None:
        return False
    return bool(
        _scalar(_first(node, SKU_KEYS))
        or _scalar(_first(node, GTIN_KEYS))
        or availability_of(node)
        or _first(node, IMAGE_KEYS)
        or _first(node, BRAND_KEYS)
        or _product_typed(node)
    )


def url_of(node: dict[str, Any]) -> str | None:
    value = _first(node, URL_KEYS)
    if isinstance(value, str) and (value.startswith("/") or value.startswith("http")):
        return value
    return None


def _images(value: Any) -> list[str]:
    out: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            item = _first(item, ("url", "src", "originalSrc", "href"))
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
        if len(out) >= 20:
            break
    return out


def product_node(node: dict[str, Any]) -> dict[str, Any]:
    """The schema.org Product node of a product-shaped dict (see the module doc)."""
    out: dict[str, Any] = {"@type": "Product", "name": name_of(node)}
    offers = node.get("offers")
    if isinstance(offers, (dict, list)):
        out["offers"] = offers
    else:
        amount, currency = price_of(node)
        offer: dict[str, Any] = {"@type": "Offer"}
        if amount is not None:
            offer["price"] = str(amount)
        if currency:
            offer["priceCurrency"] = currency
        availability = availability_of(node)
        if availability:
            offer["availability"] = f"https://schema.org/{availability}"
        out["offers"] = offer
    for key, keys in (("sku", SKU_KEYS[:-1]), ("mpn", ("mpn",)), ("gtin", GTIN_KEYS)):
        value = _scalar(_first(node, keys))
        if value:
            out[key] = value
    brand = _first(node, BRAND_KEYS)
    if isinstance(brand, dict):
        brand = brand.get("name") or brand.get("title")
    if isinstance(brand, str) and brand.strip():
        out["brand"] = {"@type": "Brand", "name": brand.strip()}
    images = _images(_first(node, IMAGE_KEYS))
    if images:
        out["image"] = images
    description = node.get("description")
    if isinstance(description, str) and description.strip():
        out["description"] = description
    url = url_of(node)
    if url:
        out["url"] = url
    return out
