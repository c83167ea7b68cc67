"""The listing reader's faster twins of library calls give what the calls give:
:func:`join_url` is ``urljoin``, :func:`parse_price`'s amount is ``price_parser``'s."""

from __future__ import annotations

import itertools
from urllib.parse import urljoin

import pytest
from price_parser import Price

from crawler.extraction.normalize.price import _amount
from crawler.extraction.normalize.urls import join_url

BASES = [
    "http://127.0.0.1:8000/c/x.html",
    "https://Shop.Example/cat/page?x=1#top",
    "https://shop.example",
    "http:/no-host",
    "https://user@shop.example:8443/a/b/",
    "ftp://files.example/dir/",
    "file:///tmp/page.html",
    "https://[::1]/x",
    "",
]
HEADS = ["/", "//", "/p/", "p/", "../", "./", "/a/./b/", "/a/../", "https://", "http://",
         "HTTPS://", "https://other.example", "https://other.example:81/", "mailto:", "?",
         "#", "/.well-known/", "https://ü.example/", "https://u@h/", "https://[::1]/", ""]
TAILS = ["", "x.html", "x.html?id=1&b=2", "x.html?", "x.html#f", "x;p=1", "x y", "x\t",
         " /x", "x?a=/./b", "ü-name?q=é", "a//b", ".", "..", "x\\y", "?a", "%20x"]


@pytest.mark.parametrize("base", BASES)
def test_join_url_is_urljoin(base: str) -> None:
    for head, tail in itertools.product(HEADS, TAILS):
        href = head + tail
        try:
            expected = urljoin(base, href)
        except ValueError:
            with pytest.raises(ValueError):
                join_url(base, href)
            continue
        assert join_url(base, href) == expected, (base, href)


def test_join_url_takes_the_fast_path_for_plain_links() -> None:
    # (the case the listing reader meets on every card: a path from the root)
    assert join_url("http://127.0.0.1:8000/c/x.html", "/p/a-1.html") == (
        "http://127.0.0.1:8000/p/a-1.html"
    )


@pytest.mark.parametrize(
    "text",
    ["£12.99", "1.299,00 €", "$1,299.00", "R$ 1.299,90", "24.990", "12,50 zł", "CHF 1'299.–",
     "¥ 12,800", "no price", "1 299,00 kr", "€ 9,-", "KWD 12.500", "", "12.345.678,9"],
)
def test_amount_is_price_parsers(text: str) -> None:
    assert _amount(text) == Price.fromstring(text).amount
    assert _amount(text, ".") == Price.fromstring(text, decimal_separator=".").amount
