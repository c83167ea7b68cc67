"""Which structured nodes describe the page's own product.

A page may mark up one Product, a ProductGroup with its variants, one Product
per variant, or its product and related ones. :func:`choose_products` keeps the
main product's nodes, its variants and its group: the one product the page is about
(its URL, its heading, the one offered among products without offers, the one whose
every name word the heading shows); several unrelated products are a listing.
"""

from __future__ import annotations

import re
from typing import Any

from .nodes import first_str, name_key
from .pageurl import same_page, same_path
from .structured import StructuredData, is_product_node, types_of
from .visible.page import VisiblePage

#: (nodes describing the main product, its variants, its ProductGroup)
MainProduct = tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any] | None]


def choose_products(
    structured: StructuredData, visible: VisiblePage, url: str, canonical: str | None
) -> MainProduct | None:
    """(nodes describing the main product, its variants, its ProductGroup), or None
    when the structured products are a listing. ``([], [], None)`` when there are none."""
    nodes = structured.products
    if not nodes:
        return [], [], None
    groups = [n for n in nodes if "ProductGroup" in types_of(n)]
    group = groups[0] if groups else None
    variants: list[dict[str, Any]] = []
    if group is not None:
        raw = group.get("hasVariant") or []
        variants = [v for v in (raw if isinstance(raw, list) else [raw]) if is_product_node(v)]
        singles = [n for n in nodes if n is not group and name_key(n.get("name")) != name_key(
            group.get("name"))]
        # other top-level products besides the group: its variants listed separately
        variants += [n for n in singles if not any(n is v for v in variants)]
        same = [group] + [n for n in nodes if n is not group and n not in singles]
        return same, variants, group

    h1 = (visible.name or "").casefold()
    names = {name_key(n.get("name")) for n in nodes}
    if len(names) == 1:
        return nodes, [], None
    # One Product per variant: shared group id, the page's own URL, or names that
    # all start with the page heading.
    group_ids = {
        str(n.get("productGroupID") or n.get("inProductGroupWithID") or first_str(
            n.get("isVariantOf")) or "") for n in nodes
    }
    urls = [n.get("url") if isinstance(n.get("url"), str) else None for n in nodes]
    if (
        (len(group_ids) == 1 and "" not in group_ids)
        or (all(urls) and all(same_path(u, url) for u in urls))
        or (h1 and all(name_key(n.get("name")).startswith(h1) for n in nodes))
    ):
        return [], nodes, None
    # Related products marked up too: keep the one product that is this page.
    matching = [
        n for n in nodes
        if same_page(n.get("url"), url)
        or (canonical and same_page(n.get("url"), canonical))
        or (h1 and name_key(n.get("name")) == h1)
    ]
    keys = {name_key(n.get("name")) for n in matching}
    if len(keys) == 1:
        return matching, [], None
    # One product with an offer among products without any (class: product pages whose
    # markup also describes a recommendation strip's products, named and linked but not
    # offered): the offered one is the page's.
    offered = [n for n in nodes if n.get("offers")]
    offered_names = {name_key(n.get("name")) for n in offered}
    if offered and len(offered) < len(nodes) and len(offered_names) == 1:
        return offered, [], None
    # The one product the heading names (class: marketplaces marking up sponsored and
    # "also bought" products beside their own, whose heading adds words to its name:
    # "Norvik Premium Kettle Z114 1.7 L, Black" for "Premium Kettle Z114").
    named = [n for n in nodes if _heading_names(h1, name_key(n.get("name")))]
    if len({name_key(n.get("name")) for n in named}) == 1:
        return named, [], None
    return None


def _heading_names(heading: str, name: str) -> bool:
    """Every word of ``name`` (two at least) is a word of the page's ``heading``."""
    words = set(re.findall(r"\w+", name))
    return len(words) >= 2 and words <= set(re.findall(r"\w+", heading))
