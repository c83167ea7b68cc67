"""Nothing lost silently (issue 16, point 4): every page that gives no product says why
(:func:`crawler.extraction.extract`), a number in a heading does not make an error
page, and a source of the extractor that raises costs only its own fields."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from scrapy.http import HtmlResponse, TextResponse

from crawler.extraction import REJECTED_REASONS, extract, extract_product
from crawler.extraction import product as product_module

URL = "https://shop.example/p/pillow-404.html"


def _page(heading: str, title: str | None = None, head: str = "", body: str = "") -> HtmlResponse:
    html = (
        f"<html><head><title>{title or heading} | Shop</title>{head}</head><body>"
        f"<nav class=breadcrumb><a href=/>Home</a> <a href=/c/bed/>Bedding</a></nav>"
        f"<h1>{heading}</h1>{body}</body></html>"
    )
    return HtmlResponse(url=URL, body=html.encode(), encoding="utf-8")


BUY_BOX = (
    "<p class=price>$39.99</p><p class=stock>In stock</p>"
    "<button class=add-to-cart>Add to cart</button><table><tr><th>SKU</th><td>MF-404</td></tr>"
    "</table>"
)


def _json_ld(*names: str) -> str:
    return "".join(
        '<script type="application/ld+json">'
        + json.dumps(
            {
                "@context": "https://schema.org",
                "@type": "Product",
                "name": name,
                "sku": "P-404",
                "offers": {"@type": "Offer", "price": "24.50", "priceCurrency": "USD"},
            }
        )
        + "</script>"
        for name in names
    )


@pytest.mark.parametrize(
    "heading",
    [
        "Memory Foam Pillow 404",
        "Peugeot 404 model car",
        "Error 500 T-shirt",
        "Server 503 rack (page not found edition)",
    ],
)
def test_a_product_whose_heading_holds_an_error_code_is_a_product(heading: str) -> None:
    shown = extract_product(_page(heading, body=BUY_BOX))
    assert shown is not None and shown["name"] == heading and shown["price"] == Decimal("39.99")
    marked_up = extract_product(_page(heading, head=_json_ld(heading)))
    assert marked_up is not None and marked_up["sku"] == "P-404"


@pytest.mark.parametrize(
    "heading,title",
    [
        ("Page not found", "404"),
        ("404", "Not found"),
        ("Oops!", "Error 404 - page not found"),
        ("Seite nicht gefunden", "Fehler"),
    ],
)
def test_an_error_page_is_known_by_its_wording_and_no_product_evidence(
    heading: str, title: str
) -> None:
    # an error page with a carousel of other products' cards is still an error page
    cards = "".join(
        f"<div class=product-card><a href=/p/{n}.html>Thing {n}</a><span class=price>$5.00"
        "</span></div>"
        for n in range(3)
    )
    result = extract(_page(heading, title, body=f"<p>Sorry.</p>{cards}"))
    assert result.product is None and result.rejected == "error_page"


def test_an_http_error_status_without_a_product_is_an_error_page() -> None:
    response = HtmlResponse(url=URL, status=410, body=b"<html><h1>Gone</h1></html>")
    assert extract(response).rejected == "error_page"


@pytest.mark.parametrize(
    "url,body,reason",
    [
        (
            "https://shop.example/cart",
            "<h1>Your cart</h1><p class=price>$5.00</p>",
            "cart_or_account",
        ),
        ("https://shop.example/", "<h1>Welcome</h1><p>Hello.</p>", "no_product"),
        (
            "https://shop.example/c/x/",
            "<h1>X</h1>" + _json_ld("Alpha Lamp", "Beta Chair"),
            "listing",
        ),
    ],
)
def test_every_page_without_a_product_says_why(url: str, body: str, reason: str) -> None:
    result = extract(HtmlResponse(url=url, body=body.encode(), encoding="utf-8"))
    assert (result.product, result.rejected, result.errors) == (None, reason, [])
    assert reason in REJECTED_REASONS


def test_not_html() -> None:
    response = TextResponse(
        url=URL, body=b'{"a": 1}', encoding="utf-8", headers={"Content-Type": "application/json"}
    )
    assert extract(response).rejected == "not_html"


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise TypeError("to_unicode must receive bytes or str, got list")


BOTH = dict(head=_json_ld("Memory Foam Pillow"), body=BUY_BOX)


def test_a_failing_visible_page_keeps_the_structured_fields(monkeypatch) -> None:
    monkeypatch.setattr(product_module, "read_visible_page", _boom)
    result = extract(_page("Memory Foam Pillow", **BOTH))
    assert result.product is not None and result.product["sku"] == "P-404"
    assert result.product["price"] == Decimal("24.50")
    assert [source for source, _ in result.errors] == ["visible"]
    assert "got list" in result.errors[0][1]


def test_a_failing_structured_reader_keeps_the_visible_fields(monkeypatch) -> None:
    monkeypatch.setattr(product_module, "read_structured_data", _boom)
    result = extract(_page("Memory Foam Pillow", **BOTH))
    assert result.product is not None and result.product["price"] == Decimal("39.99")
    assert result.product["sku"] == "MF-404"
    assert [source for source, _ in result.errors] == ["structured"]


def test_a_failing_merge_is_read_again_from_the_sources_apart(monkeypatch) -> None:
    real = product_module.choose_products

    def fails_on_markup(structured: Any, *args: Any) -> Any:
        if structured.products:
            _boom()
        return real(structured, *args)

    monkeypatch.setattr(product_module, "choose_products", fails_on_markup)
    result = extract(_page("Memory Foam Pillow", **BOTH))
    assert result.product is not None and result.product["price"] == Decimal("39.99")
    assert result.product["provenance"]["price"] == "visible"
    assert [source for source, _ in result.errors] == ["merge"]


def test_extract_product_logs_a_failing_source(monkeypatch, caplog) -> None:
    monkeypatch.setattr(product_module, "read_visible_page", _boom)
    with caplog.at_level("WARNING", logger="crawler.extraction.product"):
        assert extract_product(_page("Memory Foam Pillow", **BOTH)) is not None
    assert any("visible failed on " + URL in r.getMessage() for r in caplog.records)


def test_when_every_attempt_fails_the_page_is_failed_not_silent(monkeypatch) -> None:
    monkeypatch.setattr(product_module, "merge_sources", _boom)
    result = extract(_page("Memory Foam Pillow", **BOTH))
    assert (result.product, result.rejected) == (None, "failed")
    assert [source for source, _ in result.errors] == ["merge"]


def test_a_page_is_parsed_once_for_its_product_and_its_links(monkeypatch) -> None:
    # structured data (extruct), page typing, fields and links share Scrapy's one tree
    import lxml.etree
    import lxml.html

    from crawler.extraction import discover_links

    parses = []

    def counting(module: Any, name: str) -> None:
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            parses.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    # Scrapy's selector parses with etree.fromstring, extruct with lxml.html.fromstring
    counting(lxml.etree, "fromstring")
    counting(lxml.html, "fromstring")
    microdata = (
        '<div itemscope itemtype="https://schema.org/Product"><span itemprop="name">'
        "Memory Foam Pillow</span></div>"
    )
    response = _page(
        "Memory Foam Pillow",
        head=_json_ld("Memory Foam Pillow") + '<meta property="og:type" content="product">',
        body=BUY_BOX + microdata + '<a href="/c/bedding/">Bedding</a>',
    )
    assert extract_product(response) is not None
    assert "https://shop.example/c/bedding/" in discover_links(response)
    assert len(parses) == 1
