"""The page's one parsed tree, shared by structured data, page typing, the visible
fields and link discovery.

Scrapy parses a response when its ``selector`` is first asked for, with lxml.html's
parser, whose element classes are looked up in Python each time lxml makes a Python
object for an element (the page walk makes one for each of ~2,000 elements). The
extractor reads nothing of lxml.html's element classes, so :func:`page_root` parses
the page the way Scrapy does (parsel's ``create_root_node``: the same text, the same
libxml2 options, the same tree) with lxml's own HTML parser, whose elements are
lxml's default class, and keeps the selector as the response's, where
``response.css``, ``response.xpath`` and a site profile's selectors find it: the
page is still parsed once. A response whose selector was made before is read as it
is (every reader takes either kind of element).
"""

from __future__ import annotations

from typing import Any

from lxml import etree
from parsel.selector import create_root_node
from scrapy.http import HtmlResponse, TextResponse
from scrapy.selector import Selector
from scrapy.utils.response import get_base_url


def page_root(response: TextResponse) -> Any:
    """The root element of the response's parsed tree (parsed once, see the module doc)."""
    if response._cached_selector is None and isinstance(response, HtmlResponse):
        root = create_root_node(response.text, etree.HTMLParser, base_url=get_base_url(response))
        selector = Selector(root=root, type="html")
        selector.response = response
        response._cached_selector = selector
    return response.selector.root
