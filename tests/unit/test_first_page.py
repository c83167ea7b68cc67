"""The first page of a listing is one URL (issue 16, point 5): ``?page=1`` (and
``p=1``, ``pg=1``, ``pageNumber=1``...) is dropped from links and seeds, so the
dupefilter sees one fingerprint for ``/category/10`` and ``/category/10?page=1``."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.request import RequestFingerprinter

from crawler.extraction import discover_links
from crawler.policy.firstpage import without_first_page

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


# Issue 29, point 1: a pager's first page under a parameter of the shop's own name
# (class: shops numbering their pages as ?seite=, ?pageIndex=, ?pn=...).
@pytest.mark.parametrize("param", ["seite", "pageIndex", "pn"])
def test_the_pagers_own_parameter_names_its_first_page(param: str) -> None:
    body = (
        f'<a href="/category/10">Kettles</a><p>Page 2 of 3: <a href="?{param}=1">previous</a> '
        f'<a href="?{param}=1">1</a> 2 <a href="?{param}=3">3</a></p>'
    ).encode()
    page = f"https://shop.example/category/10?{param}=2"
    links = discover_links(HtmlResponse(url=page, body=body, encoding="utf-8"))
    assert links == [
        "https://shop.example/category/10", f"https://shop.example/category/10?{param}=3"
    ]


def test_numbered_links_that_are_no_pager_are_kept() -> None:
    """Product links numbered 1, 2, 3 by an ``id`` (their text is a name, not the number)
    and a pager counting from 0 (its page 1 is the second page) keep their value 1."""
    body = (
        b'<a href="/item?id=1">Kettle</a><a href="/item?id=2">Toaster</a>'
        b'<a href="/item?id=3">Blender</a>'
        b'<a href="/category/10?start=0">1</a><a href="/category/10?start=1">2</a>'
        b'<a href="/category/10?start=2">3</a>'
    )
    page = "https://shop.example/category/10?start=2"
    links = discover_links(HtmlResponse(url=page, body=body, encoding="utf-8"))
    assert "https://shop.example/item?id=1" in links
    assert "https://shop.example/category/10?start=1" in links


def test_the_last_page_of_two_names_the_first_under_its_own_parameter() -> None:
    body = b'<p>Page 2 of 2: <a href="?seite=1">previous</a> <a href="?seite=1">1</a> 2</p>'
    page = "https://shop.example/category/10?seite=2"
    links = discover_links(HtmlResponse(url=page, body=body, encoding="utf-8"))
    assert links == ["https://shop.example/category/10"]
