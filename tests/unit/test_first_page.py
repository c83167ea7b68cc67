"""The first page of a listing is one URL (issue 16, point 5): ``?page=1`` (and
``p=1``, ``pg=1``, ``pageNumber=1``...) is dropped from links and seeds, so the
dupefilter sees one fingerprint for ``/category/10`` and ``/category/10?page=1``."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.request import RequestFingerprinter

from crawler.extraction import discover_links
from crawler.firstpage import without_first_page

PAGE = "https://shop.example/category/10?page=3"


@pytest.mark.parametrize(
    "href,url",
    [
        ("/category/10?page=1", "https://shop.example/category/10"),
        ("/category/10?p=1", "https://shop.example/category/10"),
        ("/category/10?pg=1&color=red", "https://shop.example/category/10?color=red"),
        ("/category/10?pageNumber=1", "https://shop.example/category/10"),
        ("?page=1", "https://shop.example/category/10"),
        ("/category/10?page=2", "https://shop.example/category/10?page=2"),
        ("/category/10?page=11", "https://shop.example/category/10?page=11"),
        ("/category/10?id=1", "https://shop.example/category/10?id=1"),
    ],
)
def test_a_first_page_link_is_the_bare_listing(href: str, url: str) -> None:
    body = f'<html><body><a href="{href}">1</a></body></html>'.encode()
    assert discover_links(HtmlResponse(url=PAGE, body=body, encoding="utf-8")) == [url]


def test_a_listing_linking_its_own_first_page_yields_no_link_to_itself() -> None:
    body = b'<a href="?page=1">1</a><a href="?page=2">2</a><a href="/category/10">all</a>'
    response = HtmlResponse(url="https://shop.example/category/10", body=body, encoding="utf-8")
    assert discover_links(response) == ["https://shop.example/category/10?page=2"]


def test_one_fingerprint_for_both_forms() -> None:
    fingerprint = RequestFingerprinter().fingerprint
    body = b'<a href="/category/10">Fiction</a><a href="/category/10?page=1">1</a>'
    links = discover_links(HtmlResponse(url=PAGE, body=body, encoding="utf-8"))
    assert len({fingerprint(Request(u)) for u in links}) == 1
    seed = without_first_page("https://shop.example/category/10?page=1")
    assert fingerprint(Request(seed)) == fingerprint(Request(links[0]))


@pytest.mark.parametrize(
    "url",
    ["https://shop.example/", "https://shop.example/c?page=2", "https://shop.example/c?x=1"],
)
def test_other_urls_are_unchanged(url: str) -> None:
    assert without_first_page(url) == url
