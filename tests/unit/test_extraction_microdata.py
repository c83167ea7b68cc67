"""The quicker microdata extractor finds what extruct's own finds (crawler.extraction.microdata)."""

from __future__ import annotations

import extruct._extruct as runner
import pytest
from extruct.w3cmicrodata import LxmlMicrodataExtractor
from lxml import html

from crawler.extraction.microdata import OWN_PROPERTIES
from crawler.extraction.structured import load_extruct

load_extruct()  # installs the quicker extractor, as a worker's first page with microdata does

PAGE = """<html><body itemscope itemtype="https://schema.org/WebPage">
<span itemprop="name">Lamps</span>
<div itemscope itemtype="https://schema.org/Product" itemprop="mainEntity">
  <h1 itemprop="name">  Trail
     Lamp </h1><span itemprop="sku">TL-1<!-- old --></span>
  <p itemprop="description">Bright, <b>light</b> (and small).<script>x=1</script></p>
  <script itemprop="color">red</script><span itemprop="material"></span>
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
    <span itemprop="price">12.50</span><meta itemprop="priceCurrency" content="EUR">
    <div><span itemprop="seller" itemscope><i itemprop="name">Shop</i></span></div>
  </div>
  <div itemprop="review" itemscope><span itemprop="author">Ann</span></div>
  <span itemprop="brand">Acme</span>
</div>
<div itemscope itemref="more"><span itemprop="name">Ref</span></div>
<p id="more"><span itemprop="extra">shared</span></p>
</body></html>"""


def test_the_quicker_extractor_is_installed() -> None:
    assert runner.MicrodataExtractor is not LxmlMicrodataExtractor
    assert issubclass(runner.MicrodataExtractor, LxmlMicrodataExtractor)


def test_items_are_those_extruct_finds() -> None:
    root = html.fromstring(PAGE)
    base = "https://shop.example/p/1"
    quick = runner.MicrodataExtractor().extract_items(root, base)
    assert quick == LxmlMicrodataExtractor().extract_items(root, base)
    product = quick[0]["properties"]["mainEntity"]["properties"]
    assert product["name"] == "Trail Lamp" and product["sku"] == "TL-1"


@pytest.mark.parametrize("path", ["//*[@itemscope]", "//*[@itemprop]"])
def test_properties_and_texts_are_those_extruct_finds(path: str) -> None:
    root = html.fromstring(PAGE)
    quick, own = runner.MicrodataExtractor(), LxmlMicrodataExtractor()
    for node in root.xpath(path):
        assert quick._extract_textContent(node) == own._extract_textContent(node)
        if node.get("itemscope") is not None:
            assert OWN_PROPERTIES(node, item=node) == own._xp_prop(node)
