"""The page's one tree (crawler.extraction.tree) and extruct on it."""

from __future__ import annotations

import pytest
from lxml import etree
from parsel.selector import create_root_node
from scrapy.http import HtmlResponse

from crawler.extraction import extract_product
from crawler.extraction.structured import read_structured_data
from crawler.extraction.tree import page_root

PAGE = b"""<html><head><title>Lamp</title>
<meta property="og:type" content="product"><meta property="og:title" content="Desk lamp">
</head><body><div itemscope itemtype="https://schema.org/Product">
<h1 itemprop="name">Desk <b>lamp</b><script>x()</script></h1>
<span itemprop="sku">DL-1</span></div></body></html>"""


def _response() -> HtmlResponse:
    return HtmlResponse("https://shop.example/p/lamp", body=PAGE, encoding="utf-8")


def test_the_tree_is_parsed_once_with_lxml_default_elements() -> None:
    response = _response()
    root = page_root(response)
    assert type(root) is etree._Element
    assert response.selector.root is root  # response.css/xpath read the same tree
    assert page_root(response) is root
    assert response.css("h1 b::text").get() == "lamp"


def test_a_selector_made_before_is_kept() -> None:
    response = _response()
    made = response.selector
    assert page_root(response) is made.root


def test_structured_data_is_the_same_on_both_kinds_of_tree() -> None:
    plain, scrapy_tree = _response(), _response()
    read = [
        read_structured_data(root, r.text, r.url)
        for r, root in ((plain, page_root(plain)), (scrapy_tree, scrapy_tree.selector.root))
    ]
    assert (read[0].products, read[0].opengraph) == (read[1].products, read[1].opengraph)
    assert read[0].products[0]["name"] == "Desk lamp"
    assert read[0].opengraph["og:title"] == "Desk lamp"


def test_extraction_is_the_same_on_both_kinds_of_tree() -> None:
    scrapy_tree = _response()
    scrapy_tree.selector  # noqa: B018 -- Scrapy's own tree (lxml.html's elements)
    assert extract_product(_response()) == extract_product(scrapy_tree)


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        (PAGE, "utf-8"),
        (b"\n \t" + PAGE + b"\r\n\x0c", "utf-8"),
        ("\u00a0 ".encode() + PAGE, "utf-8"),  # str.strip removes U+00A0, bytes.strip not
        (PAGE + " \u3000\n".encode(), "utf-8"),
        (b"\x1c" + PAGE, "utf-8"),
        (b" \x00" + PAGE, "utf-8"),
        (b"\xef\xbb\xbf" + PAGE, "utf-8"),  # a byte order mark
        (PAGE.replace(b"Desk", b"D\xffsk"), "utf-8"),  # an invalid byte
        ("<p>Caf\u00e9</p>".encode("cp1252"), "cp1252"),
        (b"  ", "utf-8"),
        (b"", "utf-8"),
    ],
)
def test_the_tree_is_parsels_own(body: bytes, encoding: str) -> None:
    """The tree is the one parsel makes of the response's text, whichever of the text
    or the body lxml was given."""
    response = HtmlResponse("https://shop.example/p/lamp", body=body, encoding=encoding)
    expected = create_root_node(response.text, etree.HTMLParser, base_url=response.url)
    assert etree.tostring(page_root(response)) == etree.tostring(expected)
