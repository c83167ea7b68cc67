"""A CSS selector asked of one element (``visible.css_match``) matches the elements
lxml's ``CSSSelector`` finds in the whole page; a stylesheet's hidden elements are the
same whichever way its showing rules are matched (``visible.stylesheet``)."""

from __future__ import annotations

import random

import pytest
from lxml import etree
from lxml.cssselect import CSSSelector

from crawler.extraction.visible import stylesheet
from crawler.extraction.visible.css_match import element_test
from crawler.extraction.visible.stylesheet import StyleHiding

_PAGE = """<html><body><div class="a x" id="top"><p class="b">1</p>
<span class="hidden show">2</span><ul><li class="first">a</li><li class="hidden">b</li>
<li data-x="1" class="c hidden">c</li></ul></div><section class="no-js">
<div class="hidden">z</div><p id="oos">q</p><div class="out-of-stock"></div>
<p id="oos2" class="hidden">r</p></section></body></html>"""
_SELECTORS = [
    ".a .b", ".a > #b", "#x ~ .y", ".out-of-stock ~ #oos2", ".out-of-stock + #oos2",
    ".no-js .hidden", "div.show.hidden", "span.hidden.show", "[data-x='1'].hidden",
    "li:first-child", "li:nth-child(2)", "li:last-child.hidden", "ul > li.hidden",
    ".a .hidden", "*", ":not(.x)", "li:hover", "section > *:first-child + p", "ul li + li",
    "body > div p", "DIV.a", "[class~=hidden]", "p:empty", "div:only-child",
]


def test_selectors_asked_of_each_element_match_what_the_page_search_finds() -> None:
    root = etree.fromstring(_PAGE, etree.HTMLParser())
    for selector in _SELECTORS:
        test = element_test(selector)
        assert test is not None, selector
        found = set(CSSSelector(selector)(root))
        for el in root.iter(etree.Element):
            assert test(el) == (el in found), (selector, el.tag, el.get("class"))


def test_selectors_whose_test_could_read_otherwise_have_none() -> None:
    # a position among the page's matches, a pseudo-element, a namespace, lxml's own
    # functions, a group: matched against the whole page instead
    for selector in (":scope > div", "a::before", "svg|a", "p:contains('q')", "a, b", "a {"):
        assert element_test(selector) is None, selector


def test_hidden_elements_are_the_same_asked_one_by_one_or_from_the_whole_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(67)
    blocks = []
    for at in range(120):  # more elements than are asked one by one
        cls = rng.choice(["hidden", "hidden show", "c hidden", "open hidden", "x"])
        wrapper = rng.choice(["no-js", "w", "y"])
        blocks.append(f'<div class="{wrapper}"><p class="{cls}">{at}</p></div>')
    css = (".hidden { display: none } .no-js .hidden, .hidden.show { display: block }"
           " .w > .open { display: flex } #gone { display: none }"
           " .y + #gone { display: block }")
    body = "".join(blocks) + "<p id=gone></p>"
    root = etree.fromstring(
        f"<html><head><style>{css}</style></head><body>{body}</body></html>", etree.HTMLParser()
    )
    elements = [(el, el.get("class"), el.get("id")) for el in root.iter(etree.Element)]
    one_by_one = StyleHiding(root)
    asked = [one_by_one.hides(el, cls, ident) for el, cls, ident in elements]
    monkeypatch.setattr(stylesheet, "_ASKED_ALONE", 0)  # every rule matched in the page
    whole_page = StyleHiding(root)
    assert asked == [whole_page.hides(el, cls, ident) for el, cls, ident in elements]
    assert 0 < sum(asked) < 120
