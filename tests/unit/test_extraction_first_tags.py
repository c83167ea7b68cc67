"""``tags_in_order`` (lxml's search for some tags, its look-ahead stopped at a
``<body>``) gives the elements ``root.iter(*tags)`` gives, in the same order, read
whole or stopped at the first: heads, titles, links and metas in the head, in the
body, in SVG, in several bodies, in no body, in XHTML's namespace."""

from __future__ import annotations

from itertools import islice

from lxml import etree

from crawler.extraction.first_tags import first_descendant, tags_in_order

_HTML = [
    "<html><head><title>a</title><link rel=canonical href=/x></head><body><p>x</p></body></html>",
    "<title>b</title><p>no head, no body</p>",
    "<html><head></head><body><title>c</title><svg><title>d</title></svg>"
    "<meta name=description content=e><head></head></body></html>",
    "<html><body><div><body><title>f</title></body></div></body><title>g</title></html>",
    "<html><head><meta property=og:locale content=x><title></title><title>h</title></head>"
    "<body><link rel=canonical href=/y><BODY></BODY><title>i</title></body></html>",
]
_XML = [
    "<html xmlns='http://www.w3.org/1999/xhtml'><head><title>j</title></head>"
    "<body><title>k</title></body></html>",
    "<html><head/><body><x:title xmlns:x='urn:x'/><title/><body><head/></body></body></html>",
]
_TAGS = [
    ("title",), ("link",), ("meta",), ("head",), ("body",), ("title", "body"),
    ("head", "{http://www.w3.org/1999/xhtml}head"), ("{http://www.w3.org/1999/xhtml}title",),
]


def test_same_elements_as_lxml_iter() -> None:
    roots = [etree.fromstring(text, etree.HTMLParser()) for text in _HTML]
    roots += [etree.fromstring(text) for text in _XML]
    found = 0
    for root in roots:
        for start in (root, root.getroottree(), *root):
            for tags in _TAGS:
                expected = list(start.iter(*tags))
                assert list(tags_in_order(start, *tags)) == expected
                assert list(islice(tags_in_order(start, *tags), 1)) == expected[:1]
                found += len(expected)
    assert found > 50


def test_first_descendant_is_the_first_that_iterdescendants_gives() -> None:
    roots = [etree.fromstring(text, etree.HTMLParser()) for text in _HTML]
    roots += [etree.fromstring(text) for text in _XML]
    checked = 0
    for root in roots:
        for start in (root, *root.iter(etree.Element)):
            for tag in ("body", "title", "head", "meta", "{http://www.w3.org/1999/xhtml}title"):
                expected = next(start.iterdescendants(tag), None)
                assert first_descendant(start, tag) is expected
                checked += expected is not None
    assert checked > 20
