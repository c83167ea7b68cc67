"""SKU as the shop labels it (issue 42, point 3): the code under the page's own label
(a reference, "Ref.", an item, article or model number, in the page's language) beats
a structured variant id; details lists and tables are read.

Class of pages: shops whose JSON-LD gives a variant's id as ``sku`` while the page
shows the shop's reference under a label, as a label element and its value beside it,
in a line of several rows, or in a details table or list. The pages are generated
(:mod:`tests.support.marketplace_pages`)."""

from __future__ import annotations

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction import extract
from tests.support.marketplace_pages import SHOP_WORDS, button, shop_page

VARIANT_ID = "8433952127436-042"
CODES = {
    "en": [
        '<div class="ref-line"><span class="ref">Ref.</span><span>2712/301/800</span></div>',
        '<p class="meta">Ref. 2712/301/800 · Colour: black · Size: M</p>',
        '<ul class="specs"><li><span>Model number</span><span>2712/301/800</span></li>'
        "<li><span>Colour</span><span>Black</span></li></ul>",
    ],
    "de": [
        '<div><span>Art.-Nr.</span><span>2712/301/800</span></div>',
        "<dl><dt>Farbe</dt><dd>Schwarz</dd><dt>Artikel-Nummer</dt><dd>2712/301/800</dd></dl>",
        "<table><tr><td>Modellnummer</td><td>2712/301/800</td></tr>"
        "<tr><td>Farbe</td><td>Schwarz</td></tr></table>",
    ],
    "fr": [
        '<p class="meta">Réf. 2712/301/800 • Couleur : noir</p>',
        "<dl><dt>Numéro de produit</dt><dd>2712/301/800</dd></dl>",
        "<table><tr><th>Numéro du modèle</th><td>2712/301/800</td></tr>"
        "<tr><th>Couleur</th><td>Noir</td></tr></table>",
    ],
    "es": [
        '<div class="ref-line"><span>Ref.</span> <span>2712/301/800</span></div>',
        "<table><tr><th>Número de artículo</th><td>2712/301/800</td></tr>"
        "<tr><th>Color</th><td>Negro</td></tr></table>",
        "<ul><li><span>Número de modelo</span><span>2712/301/800</span></li>"
        "<li><span>Color</span><span>Negro</span></li></ul>",
    ],
    "ja": [
        "<table><tr><th>製品型番</th><td>2712/301/800</td></tr>"
        "<tr><th>カラー</th><td>ブラック</td></tr></table>",
        "<dl><dt>メーカー型番</dt><dd>2712/301/800</dd></dl>",
        "<ul><li><span>カラー</span><span>ブラック</span></li>"
        "<li><span>モデル番号</span><span>2712/301/800</span></li></ul>",
    ],
}
CASES = [(lang, i) for lang in sorted(CODES) for i in range(3)]


@pytest.mark.parametrize(("lang", "i"), CASES)
def test_the_shops_labelled_code_beats_the_structured_variant_id(lang: str, i: int) -> None:
    words = SHOP_WORDS[lang]
    layout = "abc"[i]
    url, html = shop_page(
        lang, layout, button(words, layout), ld_sku=VARIANT_ID, ld_availability="InStock",
        code_block=CODES[lang][i],
    )
    product = extract(HtmlResponse(url=url, body=html.encode(), encoding="utf-8")).product
    assert product is not None
    assert product["sku"] == "2712/301/800"
    assert product["provenance"]["sku"] == "visible"


@pytest.mark.parametrize(
    "block",
    [
        "<p>Ref. 81070185 · Colour: black</p>",
        '<div><span class="ref">Ref.</span><span>81070185</span></div>',
    ],
)
def test_a_page_without_markup_reads_the_labelled_code(block: str) -> None:
    words = SHOP_WORDS["en"]
    url, html = shop_page("en", "a", button(words, "a"), code_block=block)
    product = extract(HtmlResponse(url=url, body=html.encode(), encoding="utf-8")).product
    assert product is not None and product["sku"] == "81070185"


@pytest.mark.parametrize(
    "block",
    [
        "<div><span>Approx.</span><span>2712/301/800</span></div>",  # no code's label
        "<div><span>Ref.</span><span>see below</span></div>",  # no digit in the value
    ],
)
def test_a_dotted_word_before_a_value_is_no_code_label(block: str) -> None:
    words = SHOP_WORDS["en"]
    url, html = shop_page("en", "a", button(words, "a"), code_block=block)
    product = extract(HtmlResponse(url=url, body=html.encode(), encoding="utf-8")).product
    assert product is not None and product["sku"] is None
