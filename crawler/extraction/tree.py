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

parsel parses the text encoded again in UTF-8, stripped of its whitespace at both ends
and of NUL characters. When the body is that text's UTF-8 already (:func:`utf8_body`)
and holds no NUL, and stripping its ASCII whitespace strips what ``str.strip`` would,
lxml is given the body (parsel's ``create_root_node`` with ``body``): the same bytes,
without the three copies of the text.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from lxml import etree
from parsel.selector import create_root_node
from scrapy.http import HtmlResponse, TextResponse
from scrapy.selector import Selector
from scrapy.utils.response import get_base_url
from w3lib.encoding import read_bom

#: the whitespace ``bytes.strip`` removes
_ASCII_SPACE = " \t\n\r\x0b\x0c"
_LEADING_SPACE = re.compile(f"[{_ASCII_SPACE}]*")


def page_root(response: TextResponse) -> Any:
    """The root element of the response's parsed tree (parsed once, see the module doc)."""
    if response._cached_selector is None and isinstance(response, HtmlResponse):
        text, base_url = response.text, get_base_url(response)
        body = utf8_body(response, text)
        if body is not None and b"\x00" not in body and _strips_alike(text):
            root = create_root_node("", etree.HTMLParser, base_url, body=body, encoding="utf-8")
        else:
            root = create_root_node(text, etree.HTMLParser, base_url)
        selector = Selector(root=root, type="html")
        selector.response = response
        response._cached_selector = selector
    return response.selector.root


def utf8_body(response: TextResponse, text: str) -> bytes | None:
    """The page's body when it is ``text`` encoded in UTF-8, else None: ``text`` is the
    whole of ``response.text``, decoded as UTF-8 from a body without a byte order mark
    and with no invalid byte (each would have become U+FFFD). The body is then used as
    it is instead of encoding the text again."""
    body = response.body
    if len(text) != len(response.text) or read_bom(body)[0] is not None or "\ufffd" in text:
        return None
    try:
        utf8 = codecs.lookup(response.encoding).name == "utf-8"
    except LookupError:
        return None
    return body if utf8 else None


def _strips_alike(text: str) -> bool:
    """``text.strip()`` removes what ``bytes.strip()`` removes of its UTF-8: the first
    and the last characters that are not ASCII whitespace are no other whitespace
    (``str.isspace``: U+00A0, U+3000, U+001C...) either."""
    start, end = _LEADING_SPACE.match(text).end(), len(text)  # type: ignore[union-attr]
    while end > start and text[end - 1] in _ASCII_SPACE:
        end -= 1
    return start == end or not (text[start].isspace() or text[end - 1].isspace())
