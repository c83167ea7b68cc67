"""discover_links: same-site, canonical, no dead ends, no listing permutations."""

from __future__ import annotations

from scrapy.http import HtmlResponse, TextResponse

from crawler.extraction import SiteProfile, discover_links
from crawler.extraction.links import clean_link
from tests.unit.test_extraction import load_case

BASE = "https://shop.example/c/shoes?page=2"


def links_of(body: str, url: str = BASE, profile: SiteProfile | None = None) -> list[str]:
    html = f"<html><head></head><body>{body}</body></html>"
    response = HtmlResponse(url=url, body=html.encode("utf-8"), encoding="utf-8")
    return discover_links(response, profile)


def test_absolute_fragment_free_deduplicated_in_page_order() -> None:
    body = """
      <a href="/p/b">B</a> <a href="p/a#reviews">A</a> <a href="/p/b#top">B again</a>
      <a href="https://shop.example/p/c?b=2&amp;a=1">C</a> <a href="/p/c?a=1&amp;b=2">C sorted</a>
      <a href="#">top</a> <a href=" /p/d ">D</a>
    """
    assert links_of(body) == [
        "https://shop.example/p/b",
        "https://shop.example/c/p/a",
        "https://shop.example/p/c?a=1&b=2",
        "https://shop.example/p/d",
    ]


def test_path_case_is_kept_and_query_canonicalised() -> None:
    assert links_of('<a href="/P/Red-Shoe?z=1&amp;a=2">x</a>') == [
        "https://shop.example/P/Red-Shoe?a=2&z=1"
    ]


def test_only_same_site_http_links() -> None:
    body = """
      <a href="https://other.example/p/1">other</a>
      <a href="https://cdn.shop.example/p/2">sub-domain</a>
      <a href="https://www.shop.example/p/3">www</a>
      <a href="http://shop.example/p/4">http on default port</a>
      <a href="https://shop.example:8443/p/5">other port</a>
      <a href="mailto:hi@shop.example">mail</a> <a href="tel:+1555">tel</a>
      <a href="javascript:void(0)">js</a> <a href="ftp://shop.example/f">ftp</a>
      <a href="data:text/html,hi">data</a>
    """
    assert links_of(body) == [
        "https://www.shop.example/p/3",
        "http://shop.example/p/4",
    ]


def test_explicit_ports_must_match() -> None:
    url = "http://127.0.0.1:8765/"
    body = '<a href="/p/1">same</a> <a href="http://127.0.0.1:9999/p/2">other port</a>'
    assert links_of(body, url=url) == ["http://127.0.0.1:8765/p/1"]


def test_files_are_skipped() -> None:
    body = "".join(
        f'<a href="/files/x.{ext}">x</a>'
        for ext in ("jpg", "JPEG", "png", "webp", "svg", "css", "js", "pdf", "zip", "mp4", "xml")
    )
    assert links_of(body + '<a href="/p/ok.html">ok</a>') == ["https://shop.example/p/ok.html"]


def test_dead_ends_are_skipped() -> None:
    paths = [
        "/cart", "/cart/add?id=1", "/checkout/", "/basket", "/wishlist/", "/compare",
        "/catalog/product_compare/add/product/1/", "/login", "/logout", "/register",
        "/account", "/my-account/orders/", "/customer/account/login/", "/account/login",
        "/search?q=red", "/search/red", "/catalogsearch/result/?q=red", "/?s=red",
        "/c/shoes?q=red", "/product/x/?add-to-cart=88", "/index.php?route=checkout/cart",
    ]
    body = "".join(f'<a href="{p}">x</a>' for p in paths)
    assert links_of(body + '<a href="/c/boots">boots</a>') == ["https://shop.example/c/boots"]


def test_sort_filter_and_view_permutations_are_dropped() -> None:
    queries = [
        "sort=price", "sort_by=price-ascending", "order=asc", "orderby=popularity", "dir=desc",
        "view=list", "mode=grid", "limit=48", "per_page=48", "product_list_order=name",
        "product_list_mode=list", "product_list_limit=36", "product_list_dir=desc",
        "filter_color=red", "filter.v.price.gte=10", "min_price=10&max_price=50",
        "price=10-20", "page=2&sort=price",
    ]
    body = "".join(f'<a href="/c/shoes?{q}">x</a>' for q in queries)
    assert links_of(body, url="https://shop.example/c/shoes") == []


def test_pagination_is_kept() -> None:
    body = """
      <a href="/c/shoes?page=3">3</a> <a href="/c/shoes?p=4">4</a> <a href="/c/shoes?pg=5">5</a>
      <a href="/c/shoes/?paged=6">6</a> <a href="/c/shoes/page/7/">7</a>
    """
    assert links_of(body) == [
        "https://shop.example/c/shoes?page=3",
        "https://shop.example/c/shoes?p=4",
        "https://shop.example/c/shoes?pg=5",
        "https://shop.example/c/shoes/?paged=6",
        "https://shop.example/c/shoes/page/7/",
    ]


def test_tracking_and_variant_params_are_stripped() -> None:
    body = """
      <a href="/p/hat?utm_source=x&amp;utm_medium=y">a</a>
      <a href="/p/hat?_pos=1&amp;_sid=ab&amp;_ss=r">b</a>
      <a href="/p/hat?variant=123">c</a> <a href="/p/hat?gclid=1&amp;id=7">d</a>
    """
    assert links_of(body) == ["https://shop.example/p/hat", "https://shop.example/p/hat?id=7"]


def test_the_page_itself_and_rel_next_and_base_href() -> None:
    html = """<html><head><base href="https://shop.example/en/"><link rel="next" href="list?page=3">
      </head><body><a href="https://shop.example/c/shoes?page=2">self</a>
      <a href="p/1">p1</a></body></html>"""
    response = HtmlResponse(url=BASE, body=html.encode(), encoding="utf-8")
    assert discover_links(response) == [
        "https://shop.example/en/list?page=3",
        "https://shop.example/en/p/1",
    ]


def test_non_html_response_gives_nothing() -> None:
    response = TextResponse(url=BASE, body=b"{}", encoding="utf-8")
    assert discover_links(response) == []


def test_profile_restricts_and_filters() -> None:
    profile = SiteProfile.from_dict(
        {
            "domains": ["shop.example"],
            "follow": {
                "allow": ["/c/", "/p/"],
                "deny": ["/p/gift-card"],
                "restrict_css": ["#grid", "a.next"],
            },
        }
    )
    body = """
      <nav><a href="/c/menu-link">menu</a></nav>
      <div id="grid"><a href="/p/1">1</a> <a href="/p/gift-card">gift</a>
        <a href="/about">about</a></div>
      <a class="next" href="/c/shoes?page=3">next</a>
    """
    assert links_of(body, profile=profile) == [
        "https://shop.example/p/1",
        "https://shop.example/c/shoes?page=3",
    ]


def test_profile_restrict_xpath() -> None:
    profile = SiteProfile.from_dict(
        {"domains": ["shop.example"], "follow": {"restrict_xpath": ["//ul[@class='pager']"]}}
    )
    body = '<a href="/p/1">1</a><ul class="pager"><li><a href="/c/shoes?page=9">9</a></li></ul>'
    assert links_of(body, profile=profile) == ["https://shop.example/c/shoes?page=9"]


def test_magento_listing_fixture_costs_only_products_and_pages() -> None:
    response, _ = load_case("listing_magento_microdata")
    links = discover_links(response)
    assert not [u for u in links if "product_list_" in u or "price=" in u]
    assert not [u for u in links if "wishlist" in u or "checkout" in u]
    assert "https://www.luma-gear.example/men/tops.html?p=3" in links
    # the pager's "1" is the bare listing (crawler/policy/firstpage.py)
    assert "https://www.luma-gear.example/men/tops.html?p=1" not in links
    assert "https://www.luma-gear.example/men/tops.html" in links
    assert "https://www.luma-gear.example/summit-beanie.html" in links


def test_category_fixture() -> None:
    response, _ = load_case("category_plain")
    assert discover_links(response) == [
        "http://outdoor-depot.example/",
        "http://outdoor-depot.example/c/boots/",
        "http://outdoor-depot.example/p/summit-beanie-1.html",
        "http://outdoor-depot.example/p/trail-gloves-2.html",
        "http://outdoor-depot.example/p/ridge-vest-3.html",
        "http://outdoor-depot.example/p/alpine-fleece-jacket-4.html",
        "http://outdoor-depot.example/p/storm-shell-5.html",
        "http://outdoor-depot.example/p/base-layer-top-6.html",
        "http://outdoor-depot.example/c/jackets/page/2/",
        "http://outdoor-depot.example/c/jackets/?pg=3",
    ]


def test_clean_link_unit() -> None:
    base = "https://shop.example/c/"
    assert clean_link("../p/1?b=1&a=2#x", base) == "https://shop.example/p/1?a=2&b=1"
    assert clean_link("", base) is None
    assert clean_link("http://[broken", base) is None
    assert clean_link("http://shop.example:99999/p", base) is None


def test_demoshop_pages_lead_only_to_listings_and_products() -> None:
    import re

    allowed = re.compile(r"^/(?:c/[^?]*|p/[^/?]+\.html)?(?:\?page=\d+)?$")
    for case in ("demoshop_home", "demoshop_listing", "demoshop_product_plain",
                 "demoshop_product_jsonld", "demoshop_product_microdata"):
        response, _ = load_case(case)
        links = discover_links(response)
        assert links, case
        for url in links:
            parts = url.split("://", 1)[1].split("/", 1)
            path = "/" + parts[1] if len(parts) > 1 else "/"
            assert allowed.match(path), (case, url)


def _saved_pages() -> list[tuple[str, bytes]]:
    """Every saved page: the fixtures, and the shared development sets when present."""
    import gzip
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    pages = []
    for folder in ("pages", "holdout"):
        for path in sorted((root / "tests" / "fixtures" / folder).glob("*.html")):
            body = path.read_bytes()
            url = re.search(rb"<!--\s*url:\s*(\S+)", body)
            pages.append((url.group(1).decode() if url else BASE, body))
    shared = next(
        (b / "shared" for b in (root.parent, root.parent.parent) if (b / "shared").is_dir()),
        root / "shared",
    )
    for path in sorted((shared / "product-pages-dev").glob("*.html")):
        pages.append((f"https://www.{path.stem}.com/product", path.read_bytes()))
    truth = shared / "product-pages-intl" / "truth.jsonl"
    if truth.is_file():
        for line in truth.read_text().splitlines():
            case = json.loads(line)
            raw = (truth.parent / case["file"]).read_bytes()
            pages.append((case["url"], gzip.decompress(raw)))
    return pages


def test_the_fast_path_of_link_cleaning_gives_the_full_paths_answers() -> None:
    from scrapy.utils.response import get_base_url

    from crawler.core.sites import site_key
    from crawler.extraction.links import _clean, _hrefs, _PlainLinks

    checked = fast = 0
    for url, body in _saved_pages():
        response = HtmlResponse(url=url, body=body)
        base, site = get_base_url(response), site_key(url)
        plain = _PlainLinks(base, site)
        for href in set(_hrefs(response, None)):
            quick = plain.clean(href)
            checked += 1
            if quick is not False:
                fast += 1
                assert quick == _clean(href, base, site), (url, href)
    assert fast > checked / 3  # the fast path is the common one
