"""The OpenGraph extractor's ``//head`` found by lxml's search for the tag
(``extruct_plain._WithHead``) is XPath's: the same elements, in the same order, in
HTML and XML documents, with heads in odd places, prefixed or namespaced."""

from __future__ import annotations

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
]
_XML = [
    "<html xmlns='http://www.w3.org/1999/xhtml'><head/><body><head/></body></html>",
    "<html><head/><body><x:head xmlns:x='urn:x'/><head/></body></html>",
    "<root><a:head xmlns:a='urn:a'/><head xmlns=''/></root>",
]


def test_heads_are_xpaths() -> None:
    roots = [etree.fromstring(text, etree.HTMLParser()) for text in _HTML]
    roots += [etree.fromstring(text) for text in _XML]
    found = 0
    for root in roots:
        for context in (root, *root.iter(etree.Element)):
            expected = context.xpath("//head")
            assert _WithHead(context).xpath("//head") == expected
            found += len(expected)
    assert found > 10
