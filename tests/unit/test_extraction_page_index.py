"""The page index: its class searches and the extent of excluded blocks
(crawler.extraction.visible.index), which the readers rely on."""

from __future__ import annotations

from lxml import html

from crawler.extraction.visible.availability import _STOCK_CLASS
from crawler.extraction.visible.buy import _BUY_CLASS
from crawler.extraction.visible.index import CLASS_TESTS, PageIndex

PAGE = """<html><body>
<header class="site-header"><nav><a class="btn">Home</a></nav><span class="stock">x</span></header>
<div id="main" class="product"><h1>Lamp</h1>
  <p class="stock in-stock">In stock</p><span class="price">$5</span>
  <div class="hidden"><span class="stock">hidden</span></div>
  <button class="btn buy">Add to cart</button>
  <section class="related"><div><span class="stock">Out</span></div></section>
  <p class="after">after</p>
</div>
<footer><p class="stock">f</p></footer>
</body></html>"""


def _index() -> PageIndex:
    return PageIndex(html.fromstring(PAGE).find(".//body"))


def test_registered_class_tests_answer_as_a_plain_search() -> None:
    idx = _index()
    for test in (_STOCK_CLASS.search, _BUY_CLASS.search):
        assert test in CLASS_TESTS  # answered from the page's bits
        expected = [pos for pos, key in enumerate(idx.classes) if test(key)]
        assert idx.with_class(test) == expected
    unregistered = lambda key: "after" in key  # noqa: E731 -- asked string by string
    assert [idx.classes[p] for p in idx.with_class(unregistered)] == ["after "]


def test_excluded_blocks_end_with_their_subtree() -> None:
    idx = _index()
    marked = [idx.elements[p].get("class") or idx.elements[p].tag
              for p, inside in enumerate(idx.section) if inside]
    assert marked == ["site-header", "nav", "btn", "stock", "related", "div", "stock", "footer",
                      "stock"]
    after = idx.classes.index("after ")
    assert not idx.section[after] and idx.parent_of(after) == idx.classes.index("product main")
