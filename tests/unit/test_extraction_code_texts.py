"""The text elements the code rows read (``codes._text_elements``) are those of the
loop they replaced, which asked every text element whether it was excluded (the
other tags' excluded elements are now left out before the loop, and an excluded
label's first child is asked first whether it is an element): on the fixture pages
and on generated pages of headers, cards, labels, comments and long blocks."""

from __future__ import annotations

import random
import re
from pathlib import Path

from lxml import etree
from lxml.etree import _Element
from parsel import Selector

from crawler.extraction.first_tags import first_descendant
from crawler.extraction.visible.codes import _CODE_CLASS, _LABEL_TAGS, _TEXT_TAGS, _text_elements
from crawler.extraction.visible.dom import text_at
from crawler.extraction.visible.index import PageIndex
from crawler.extraction.visible.name import select_h1
from crawler.extraction.visible.records import find_records

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "pages"
_DIGIT = re.compile(r"\d")


def _reference(idx: PageIndex, marked: set[int]) -> dict[int, tuple[str | None, bool]]:
    """The loop as it was: every text element, its exclusion asked of the index."""
    elements, section, order = idx.elements, idx.section, idx.order
    in_card = idx.in_card if idx.cards else None
    long: set[int] = set()
    found: dict[int, tuple[str | None, bool]] = {}
    for pos in reversed(idx.positions(*(idx.by_tag.get(tag, []) for tag in _TEXT_TAGS))):
        el = elements[pos]
        excluded = section[pos] or (in_card is not None and in_card(pos))
        if excluded and el.tag not in _LABEL_TAGS:
            continue
        nodes = len(el)
        if excluded:
            if nodes and next(el.iterchildren(etree.Element), None) is not None:
                continue
        elif nodes > 3 and sum(1 for _ in el.iterchildren(etree.Element)) > 3:
            continue
        raw: str | None
        if nodes:
            raw = None if pos in long else text_at(idx.texts, pos, el)
        else:
            raw = el.text
            if not raw or raw.isspace():
                continue
        if raw is not None and len(raw) > 400:
            raw = None
            parent = el.getparent()
            while parent is not None:
                up = order.get(parent)
                if up is None or up in long:
                    break
                long.add(up)
                parent = parent.getparent()
        if raw is not None and not (":" in raw or "#" in raw or "：" in raw):
            text = raw.strip()
            if not (len(text) <= 120 and text[:1].isalpha() and _DIGIT.search(text)) and not (
                len(text) <= 12 and text.endswith(".") and not nodes
            ):
                raw = None
        if raw is not None or (pos in marked and not excluded):
            found[pos] = (raw, excluded)
    return found


def _index(root: _Element, url: str) -> PageIndex:
    """The page's index with its records' cards, as the visible page reads it."""
    body = first_descendant(root, "body")
    idx = PageIndex(body if body is not None else root)
    title = first_descendant(root, "title")
    h1 = select_h1(idx, title.text or "" if title is not None else "", url)
    idx.find_grids(h1)
    records = find_records(idx, h1, url)
    if records.elements:
        idx.add_cards(records.elements)
    return idx


def _same(root: _Element, url: str = "https://shop.example/p/1") -> int:
    idx = _index(root, url)
    marked = set(idx.with_class(_CODE_CLASS.search))
    expected = _reference(idx, marked)
    idx.texts.clear()
    assert _text_elements(idx, marked) == expected
    return len(expected)


def test_the_fixture_pages_give_the_same_text_elements() -> None:
    pages = sorted(PAGES.glob("*.html"))
    assert len(pages) >= 20
    read = sum(_same(Selector(text=page.read_text(encoding="utf-8")).root) for page in pages)
    assert read > 50  # the pages have code rows to read


_BLOCKS = [
    "<header><nav><ul><li>Home</li><li><span>Item #: 1234</span></li></ul></nav></header>",
    "<footer><p><b>SKU:</b> <span>F-100</span></p><small>Ref. 88</small></footer>",
    "<div class='related-products'><li><a href='/p/{n}'><img src='i.jpg'>Other {n}</a>"
    "<span>$1{n}.00</span></li></div>",
    "<ul>" + "".join(f"<li><a href='/q/{i}'><img src='x.jpg'></a><span>$9.{i}0</span>"
                     f"<span>Item {i}23456</span></li>" for i in range(4)) + "</ul>",
    "<div class='product-sku'><!-- c --><span>AB-123</span></div>",
    "<span><!-- c -->Art.-Nr.:</span><span>4711</span>",
    "<dl><dt>Model</dt><dd>X-200</dd></dl><table><tr><th>EAN</th><td>4006381333931</td></tr></table>",
    "<div><p>{long}</p><span>Code: ZZ9</span></div>",
    "<div><i>a</i><i>b</i><i>c</i><i>d</i>MPN: 77</div>",
    "<aside><label>Ref.</label><em>12345</em></aside>",
    "<p>Item 3928</p><strong>#790485</strong><h5>Part no: P-{n}</h5>",
    "<div class='site-footer'><div><label>Item:</label></div><span>no</span></div>",
    "<footer><li>SKU: 55</li><td>Item # 7</td><span><!-- c --><b>SKU:</b> 12</span></footer>",
]


def test_generated_pages_give_the_same_text_elements() -> None:
    rng = random.Random(42)
    for n in range(300):
        blocks = rng.choices(_BLOCKS, k=rng.randint(1, 9))
        body = "".join(
            b.replace("{n}", str(n)).replace("{long}", "word " * rng.randint(10, 120))
            for b in blocks
        )
        html = f"<html><head><title>P {n}</title></head><body><h1>P {n}</h1>{body}</body></html>"
        _same(Selector(text=html).root)
