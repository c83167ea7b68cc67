"""Structured data of a page: schema.org JSON-LD, microdata, RDFa and OpenGraph.

:func:`read_structured_data` runs ``extruct`` only for the syntaxes the raw
HTML actually contains (a cheap substring test first: the microdata and RDFa
passes are by far the slowest), and turns everything into one shape: plain
nested dicts with short schema.org keys (``{"@type": "Product", "name": ...,
"offers": {...}}``), whatever syntax they came from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from lxml import etree
from lxml.etree import _Element

from crawler.extraction.extruct_plain import plain_opengraph
from crawler.extraction.jsonld import jsonld_items
from crawler.extraction.microdata import speed_up_microdata
from crawler.extraction.xpath_log import bound_microdata_error_log

logger = logging.getLogger(__name__)


@cache
def load_extruct() -> ModuleType:
    """extruct, imported and adapted on the first page that needs it: it brings
    mf2py, BeautifulSoup, rdflib and pyRdfa (a fifth of a worker's imports), which a
    crawl of shops that only use JSON-LD never needs."""
    import extruct

    bound_microdata_error_log()  # extruct's microdata XPath would keep a log entry per item
    speed_up_microdata()  # the same items, properties and texts, found with less work
    plain_opengraph()  # extruct's OpenGraph on a tree of lxml's default elements (.tree)
    return extruct

PRODUCT_TYPES = frozenset(
    {"Product", "ProductGroup", "IndividualProduct", "ProductModel", "SomeProducts", "Book"}
)
LISTING_TYPES = frozenset({"ItemList", "OfferCatalog", "CollectionPage", "SearchResultsPage"})


@dataclass
class StructuredData:
    """Schema.org nodes and OpenGraph properties found on one page."""

    #: Top-level Product-like nodes, JSON-LD first, then microdata, then RDFa.
    products: list[dict[str, Any]] = field(default_factory=list)
    #: BreadcrumbList nodes, in the same order of trust.
    breadcrumb_lists: list[dict[str, Any]] = field(default_factory=list)
    #: True when an ItemList/CollectionPage/SearchResultsPage lists products.
    has_product_list: bool = False
    #: OpenGraph properties (``og:type``, ``product:price:amount``...), first value wins.
    opengraph: dict[str, str] = field(default_factory=dict)
    #: ``id(node)`` of each top-level node -> its syntax (``json-ld``, ``microdata``, ``rdfa``).
    syntaxes: dict[int, str] = field(default_factory=dict)

    def syntax_of(self, node: Any) -> str:
        """The syntax a node came from (nested nodes: that of the first product)."""
        found = self.syntaxes.get(id(node))
        if found:
            return found
        return self.syntaxes.get(id(self.products[0]), "json-ld") if self.products else "json-ld"


def types_of(node: dict[str, Any]) -> set[str]:
    """The short type names of a node (``"http://schema.org/Product"`` → ``Product``)."""
    raw = node.get("@type")
    values = raw if isinstance(raw, list) else [raw]
    return {str(v).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1] for v in values if v}


def is_product_node(node: Any) -> bool:
    return isinstance(node, dict) and bool(types_of(node) & PRODUCT_TYPES)


#: How many "+" of a page :func:`holds_ld_json` reads, at most, before it searches
#: the rest of the page for the whole word
_PLUSES_READ = 64


def holds_ld_json(html: str) -> bool:
    """``"ld+json" in html``, found by its "+": a rare character of a page (a hundred
    in a median page of 340k characters), each found at the speed of ``memchr`` (a
    search for one character), where a search for the word reads every character up
    to it (a page's JSON-LD is often near its end). After :data:`_PLUSES_READ` of them
    (a script's text can hold thousands), the rest of the page is searched for the word."""
    at = html.find("+")
    for _ in range(_PLUSES_READ):
        if at < 0:
            return False
        if at >= 2 and html.startswith("ld+json", at - 2):
            return True
        at = html.find("+", at + 1)
    return at >= 0 and html.find("ld+json", max(at - 2, 0)) >= 0


def read_structured_data(
    root: _Element | None, html: str, base_url: str
) -> StructuredData:
    """Extract and normalise the structured data of one page.

    ``root`` is the already-parsed lxml tree (Scrapy's ``response.selector.root``)
    so JSON-LD, microdata and OpenGraph need no second parse; RDFa needs its own
    DOM and is parsed from ``html`` only when the page uses RDFa attributes.
    """
    data = StructuredData()
    syntaxes = []
    extracted: dict[str, list[Any]] = {}
    if holds_ld_json(html):
        if root is not None:  # each block apart, leniently (see .jsonld)
            extracted["json-ld"] = jsonld_items(root, base_url)
        else:
            syntaxes.append("json-ld")
    if "itemscope" in html:
        syntaxes.append("microdata")
    if 'property="og:' in html or "property='og:" in html or "product:" in html:
        syntaxes.append("opengraph")
    if syntaxes:
        source: Any = root if root is not None else html
        try:
            extracted |= load_extruct().extract(
                source, base_url=base_url, syntaxes=syntaxes, uniform=True, errors="log"
            )
        except Exception:  # a broken page must not break the crawl
            logger.debug("extruct failed on %s", base_url, exc_info=True)
    if "typeof=" in html and ("vocab=" in html or "prefix=" in html) and _rdfa_types_read(root):
        try:
            # extruct's own DOM of the page, as it parses it, without the subtrees that
            # can give pyRdfa nothing (see _drop_inert)
            extruct = load_extruct()
            from extruct.utils import parse_xmldom_html

            document = parse_xmldom_html(html, encoding="UTF-8")
            _drop_inert(document)
            rdfa = extruct.extract(document, base_url=base_url, syntaxes=["rdfa"], errors="log")
            extracted["rdfa"] = rdfa_to_nodes(rdfa.get("rdfa", []))
        except Exception:
            logger.debug("RDFa extraction failed on %s", base_url, exc_info=True)

    for syntax in ("json-ld", "microdata", "rdfa"):
        for node in _flatten_roots(extracted.get(syntax) or []):
            _classify(node, data, syntax)
    for og in extracted.get("opengraph") or []:
        if not isinstance(og, dict):
            continue
        for key, value in og.items():
            if key == "@type":
                key = "og:type"
            if key.startswith("@") or not isinstance(value, str):
                continue
            data.opengraph.setdefault(key, value)
    return data


def _flatten_roots(items: list[Any]) -> list[dict[str, Any]]:
    """Top-level nodes, unwrapping JSON-LD ``@graph`` and lists."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, list):
            out.extend(_flatten_roots(item))
        elif isinstance(item, dict):
            if "@graph" in item and isinstance(item["@graph"], (list, dict)):
                graph = item["@graph"]
                out.extend(_flatten_roots(graph if isinstance(graph, list) else [graph]))
            else:
                out.append(item)
    return out


def _classify(node: dict[str, Any], data: StructuredData, syntax: str) -> None:
    types = types_of(node)
    if types & PRODUCT_TYPES:
        data.products.append(node)
        data.syntaxes[id(node)] = syntax
        return
    if "BreadcrumbList" in types:
        data.breadcrumb_lists.append(node)
        return
    if types & LISTING_TYPES:
        if _lists_products(node):
            data.has_product_list = True
    # WebPage/ItemPage wrappers: their mainEntity and breadcrumb count as top level.
    for key in ("mainEntity", "mainEntityOfPage", "breadcrumb"):
        child = node.get(key)
        for sub in child if isinstance(child, list) else [child]:
            if isinstance(sub, dict) and sub.get("@type"):
                _classify(sub, data, syntax)


def _lists_products(node: dict[str, Any]) -> bool:
    items = node.get("itemListElement") or node.get("mainEntity") or []
    items = items if isinstance(items, list) else [items]
    count = 0
    for item in items:
        if isinstance(item, dict) and not is_product_node(item):
            item = item.get("item", item)
        if is_product_node(item) or (isinstance(item, dict) and item.get("url")):
            count += 1
        elif isinstance(item, dict) and _lists_products(item):
            return True
    return count >= 2


# --------------------------------------------------------------------------- RDFa

#: The RDFa types whose nodes :func:`_classify` reads (a WebPage's mainEntity is typed too).
_RDFA_TYPES_READ = PRODUCT_TYPES | LISTING_TYPES | {"BreadcrumbList"}
_TYPEOF = etree.XPath("//@typeof")


def _rdfa_types_read(root: _Element | None) -> bool:
    """Some ``typeof`` of the page names a type the extractor reads (pyRdfa costs
    80-270 ms on a large page: a page whose RDFa is only, say, data-vocabulary's
    ``v:Breadcrumb`` or ``WebPage`` nodes is not worth it). Without a tree, True."""
    if root is None:
        return True
    return any(
        _short(t).rsplit(":", 1)[-1] in _RDFA_TYPES_READ
        for value in _TYPEOF(root)
        for t in str(value).split()
    )


#: The attributes that make pyRdfa do something at an element itself (its test of
#: "anything to do" in parse.py, and @role: a triple of its own), but @href and @src:
#: an element with only those gives its descendants a subject and completes the
#: "incomplete triples" of an ancestor's @rel/@rev, nothing else. An element with
#: none only hands its context (language, namespaces) down to its children.
_RDFA_ACTIVE = ("resource", "about", "property", "rel", "rev", "typeof", "vocab", "prefix", "role")
#: Each of them apart, and <base href> (the base of every address; pyRdfa looks for it
#: anywhere): an attribute step is fast, a predicate ``[@a or @b ...]`` on every
#: element is not.
_RDFA_ACTIVE_ATTRIBUTES = tuple(
    etree.XPath(f"//@{name}") for name in (*_RDFA_ACTIVE, "href[parent::base]")
)


def _drop_inert(document: Any) -> None:
    """Drop from extruct's DOM of the page every element with no :data:`_RDFA_ACTIVE`
    attribute (nor <base href>) in its subtree, but under a @rel/@rev: pyRdfa makes no
    triple there, completes no triple of an ancestor and only walks it, at a cost per
    element (an execution context each: most of the 220 ms it took on a large page).
    Kept whole: the children of the root (``head``, ``body``: pyRdfa's special cases),
    each ``@property`` element, whose text, markup included, a literal may take, and
    each ``@rel``/``@rev`` element, whose incomplete triples an @href completes."""
    root = document.getroottree().getroot()
    live = {root}
    for search in _RDFA_ACTIVE_ATTRIBUTES:
        for attribute in search(root):
            element = attribute.getparent()
            while element not in live:
                live.add(element)
                element = element.getparent()
    stack = [child for child in root if child in live]
    while stack:
        element = stack.pop()
        if any(element.get(name) is not None for name in ("property", "rel", "rev")):
            continue
        for child in list(element):
            if child in live:
                stack.append(child)
            elif isinstance(child.tag, str):
                element.remove(child)


_MAX_DEPTH = 6


def _short(key: str) -> str:
    return key.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def rdfa_to_nodes(expanded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn pyRdfa's expanded JSON-LD graph into nested schema.org-like dicts.

    Only nodes that have a type and are not referenced by another node become
    roots; references are inlined (to a bounded depth).
    """
    by_id = {n["@id"]: n for n in expanded if isinstance(n, dict) and "@id" in n}
    referenced: set[str] = set()
    for node in by_id.values():
        for key, values in node.items():
            if key.startswith("@") or not isinstance(values, list):
                continue
            for value in values:
                if isinstance(value, dict) and "@id" in value and value["@id"] != node["@id"]:
                    referenced.add(value["@id"])

    def convert(node: dict[str, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if node.get("@type"):
            out["@type"] = [_short(t) for t in node["@type"]]
            if len(out["@type"]) == 1:
                out["@type"] = out["@type"][0]
        for key, values in node.items():
            if key.startswith("@") or not isinstance(values, list):
                continue
            converted = []
            for value in values:
                if not isinstance(value, dict):
                    continue
                if "@value" in value:
                    converted.append(value["@value"])
                elif "@id" in value:
                    target = by_id.get(value["@id"])
                    if target is not None and depth < _MAX_DEPTH and target is not node and (
                        target.get("@type") or len(target) > 1
                    ):
                        sub = convert(target, depth + 1)
                        if not value["@id"].startswith("_:"):
                            sub.setdefault("url", value["@id"])
                        converted.append(sub)
                    else:
                        converted.append(value["@id"])
            if converted:
                out[_short(key)] = converted[0] if len(converted) == 1 else converted
        return out

    roots = []
    for node_id, node in by_id.items():
        if node_id in referenced or not node.get("@type"):
            continue
        roots.append(convert(node, 0))
    return roots
