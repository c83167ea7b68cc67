"""extruct's microdata XPath keeps a bounded error log (a worker's memory stays flat)."""

from __future__ import annotations

from extruct.w3cmicrodata import LxmlMicrodataExtractor
from lxml import etree, html

from crawler.extraction.structured import load_extruct, read_structured_data
from crawler.extraction.xpath_log import EXSLT_SETS, RecycledXPath

PAGE = """<html><body>
<div itemscope itemtype="https://schema.org/Product">
  <h1 itemprop="name">Trail Lamp</h1><span itemprop="sku">TL-1</span>
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
    <span itemprop="price">12.50</span><meta itemprop="priceCurrency" content="EUR">
  </div>
</div></body></html>"""


def test_microdata_error_log_stays_bounded_over_many_pages():
    load_extruct()  # as on a worker's first page with microdata
    recycled = LxmlMicrodataExtractor._xp_prop
    assert isinstance(recycled, RecycledXPath)  # installed when extruct is loaded
    for _ in range(3 * recycled.every + 7):
        data = read_structured_data(html.fromstring(PAGE), PAGE, "https://shop.example/p/1")
    assert data.products[0]["name"] == "Trail Lamp"
    assert data.products[0]["offers"]["price"] == "12.50"
    assert len(recycled.error_log) <= recycled.every


def test_recycled_xpath_finds_what_the_compiled_one_finds():
    load_extruct()
    path = LxmlMicrodataExtractor._xp_prop.path
    compiled = etree.XPath(path, namespaces=EXSLT_SETS)
    recycled = RecycledXPath(path, EXSLT_SETS, every=3)
    item = html.fromstring(PAGE).xpath("//*[@itemscope]")[0]
    for _ in range(10):  # across several recompilations
        assert recycled(item) == compiled(item)
    assert [el.get("itemprop") for el in recycled(item)] == ["name", "sku", "offers"]
