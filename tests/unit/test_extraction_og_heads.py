"""The OpenGraph extractor's ``//head``, found among the top-level elements of an HTML
tree or by lxml's search for the tag (``extruct_plain._WithHead``), is XPath's: the same
elements, in the same order, in HTML and XML documents, with heads in odd places,
prefixed or namespaced."""

from __future__ import annotations

import random

import lxml.html
from lxml import etree

from crawler.extraction.extruct_plain import _WithHead

_HTML = [
    "<html><head><title>a</title></head><body><p>x</p></body></html>",
    "<p>no head</p>",
    "<html><body><head><meta property='og:title' content='b'></head>"
    "<div><head></head></div></body></html>",
    "<html><head></head><body><svg><head/></svg><svg:head></svg:head><HEAD></HEAD>"
    "<x:head xmlns:x='urn:x'></x:head><!-- <head> --></body></html>",
    "<?xml version='1.0'?><html xmlns='http://www.w3.org/1999/xhtml'><head/></html>",
    # heads the HTML parser meets out of place: only those under the root are kept
    "<head><meta property='og:a' content='1'></head><head><meta content='2'></head>",
    "<!-- c --><html><head/><Head></Head></html><html><head></head></html>",
    "<table><head></head></table><template><head></head></template><math><head/></math>",
    "<html><head><noscript><head></head></noscript></head><frameset><head/></frameset>",
    "<p>x</p><head><title>t</title></head>",
]
_XML = [
    "<html xmlns='http://www.w3.org/1999/xhtml'><head/><body><head/></body></html>",
    "<html><head/><body><x:head xmlns:x='urn:x'/><head/></body></html>",
    "<root><a:head xmlns:a='urn:a'/><head xmlns=''/></root>",
]


def test_heads_are_xpaths() -> None:
    roots = [etree.fromstring(text, etree.HTMLParser()) for text in _HTML]
    roots += [lxml.html.document_fromstring(text) for text in _HTML]
    roots += [etree.fromstring(text) for text in _XML]
    found = 0
    for root in roots:
        for context in (root, *root.iter(etree.Element)):
            expected = context.xpath("//head")
            assert _WithHead(context).xpath("//head") == expected
            found += len(expected)
    assert found > 10


def test_heads_of_html_in_any_order_are_xpaths() -> None:
    """Pages of stray, repeated and nested ``html``/``head``/``body`` tags among others."""
    rng = random.Random(43)
    tags = ["<html>", "</html>", "<head>", "</head>", "<body>", "</body>", "<div>", "</div>",
            "<svg>", "</svg>", "<template>", "<p>x", "<!-- c -->", "<title>t</title>",
            "<meta property='og:a' content='1'>", "<noscript>", "<table>", "<frameset>"]
    compared = 0
    for _ in range(3000):
        text = "".join(rng.choice(tags) for _ in range(rng.randint(1, 14)))
        root = etree.fromstring(text, etree.HTMLParser())
        if root is None:
            continue
        assert _WithHead(root).xpath("//head") == root.xpath("//head"), text
        compared += 1
    assert compared > 2000
