"""The cyclic garbage collector is paused for one page's extraction and left as the
caller had it."""

from __future__ import annotations

import gc

from scrapy.http import HtmlResponse

from crawler.extraction import extract

PAGE = (
    b"<html><head><title>Lamp</title></head><body><h1>Lamp</h1>"
    b"<p class='price'>$12.50</p><button>Add to cart</button></body></html>"
)


def _response() -> HtmlResponse:
    return HtmlResponse(url="https://shop.example/lamp", body=PAGE, encoding="utf-8")


def test_the_collector_is_paused_during_the_page_and_enabled_after() -> None:
    import crawler.extraction.product as product

    seen: list[bool] = []
    real = product._assemble

    def spy(*args: object, **kwargs: object) -> None:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    assert gc.isenabled()
    product._assemble = spy  # type: ignore[assignment]
    try:
        result = extract(_response())
    finally:
        product._assemble = real  # type: ignore[assignment]
    assert result.product is not None and result.product["name"] == "Lamp"
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    gc.disable()
    try:
        assert extract(_response()).product is not None
        assert not gc.isenabled()
    finally:
        gc.enable()
