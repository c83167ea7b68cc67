"""RDFa (schema.org in ``vocab``/``typeof``/``property`` attributes): read through
pyRdfa only when some ``typeof`` names a type the extractor reads."""

from __future__ import annotations

from decimal import Decimal

import extruct
import lxml.html
from extruct.utils import parse_xmldom_html

from crawler.extraction import extract_product_from_html
from crawler.extraction.structured import _drop_inert, _rdfa_types_read, rdfa_to_nodes

RDFA_PRODUCT = """<html><head><title>Oak Desk Lamp | Shop</title></head>
<body vocab="https://schema.org/">
<ol typeof="BreadcrumbList">
  <li property="itemListElement" typeof="ListItem"><a property="item" typeof="WebPage"
    href="/lamps"><span property="name">Lamps</span></a><meta property="position" content="1">
  </li>
</ol>
<div typeof="Product">
  <h1 property="name">Oak Desk Lamp</h1>
  <span property="sku">ODL-7</span>
  <div property="offers" typeof="Offer">
    <span property="priceCurrency" content="EUR">€</span><span property="price"
      content="49.00">49,00</span>
    <link property="availability" href="https://schema.org/InStock">In stock
  </div>
</div></body></html>"""


def test_an_rdfa_product_is_read() -> None:
    product = extract_product_from_html("https://shop.example/p/oak-desk-lamp", RDFA_PRODUCT)
    assert product is not None
    assert product["name"] == "Oak Desk Lamp"
    assert product["sku"] == "ODL-7"
    assert product["price"] == Decimal("49.00") and product["currency"] == "EUR"
    assert product["availability"] == "InStock"
    assert product["breadcrumbs"] == ["Lamps"]
    assert product["provenance"]["price"] == "rdfa" and product["provenance"]["sku"] == "rdfa"


def test_rdfa_is_read_only_for_the_types_the_extractor_reads() -> None:
    def reads(html: str) -> bool:
        return _rdfa_types_read(lxml.html.fromstring(html))

    assert reads(RDFA_PRODUCT)
    assert reads('<div typeof="schema:Product"></div>')
    assert reads('<div typeof="http://schema.org/BreadcrumbList"></div>')
    assert reads('<div typeof="WebPage ItemList"></div>')
    # data-vocabulary's breadcrumb and bare WebPage nodes give the extractor nothing
    assert not reads('<div typeof="v:Breadcrumb"><a rel="v:url" href="/">Home</a></div>')
    assert not reads('<div typeof="WebPage"></div><p>no RDFa types here</p>')


HANGING_RDFA = """<html><head><base href="https://shop.example/base/"></head>
<body vocab="https://schema.org/"><div><p>Free delivery <b>today</b></p></div>
<div typeof="Product"><h1 property="name">Oak <em>Desk</em> Lamp</h1>
  <div rel="image"><div><a href="lamp.jpg"><span>front</span></a></div></div>
  <div><a href="/elsewhere">unrelated link</a><span lang="fr">texte</span></div>
  <div property="description"><p>Solid <b>oak</b>, brass <a href="/x">switch</a></p></div>
</div></body></html>"""


def test_rdfa_is_the_same_without_the_inert_subtrees() -> None:
    document = parse_xmldom_html(HANGING_RDFA, encoding="UTF-8")
    _drop_inert(document)
    assert document.xpath("//a/@href") == ["lamp.jpg", "/x"]  # the inert link is gone
    pruned = extruct.extract(document, base_url="https://shop.example/p", syntaxes=["rdfa"])
    whole = extruct.extract(HANGING_RDFA, base_url="https://shop.example/p", syntaxes=["rdfa"])
    assert rdfa_to_nodes(pruned["rdfa"]) == rdfa_to_nodes(whole["rdfa"])
    assert rdfa_to_nodes(pruned["rdfa"]) == [
        {
            "@type": "Product",
            "name": "Oak Desk Lamp",
            "image": "https://shop.example/lamp.jpg",
            "description": "Solid oak, brass switch",
        }
    ]
