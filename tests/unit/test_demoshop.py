"""The demo shop: its catalogue (pure), its pages (in-process) and its server (a real process)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import pytest

from demoshop import Catalog, ShopProcess, ShopStartError
from demoshop.catalog import (
    LANGUAGE_CURRENCY,
    PLAIN_LANGUAGES,
    format_price,
    gtin13_check_digit,
)
from demoshop.localized import TEXTS, local_price
from demoshop.site import ShopSite
from demoshop.traps import PICK_SIZES, pick_path, picks, search_results, shelf_paths

REPO = Path(__file__).resolve().parents[2]
ROBOTS_DISALLOWED = ("/cart", "/account", "/search")


# --- helpers -------------------------------------------------------------------------


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href is not None:
                self.hrefs.append(href)


def links_of(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return parser.hrefs


def crawler_should_follow(base: str, href: str) -> str | None:
    """The policy of a correct crawler: the absolute URL to fetch, or None."""
    url = urljoin(base, href).split("#", 1)[0]
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.netloc != urlsplit(base).netloc:
        return None
    if parts.path.startswith(ROBOTS_DISALLOWED):
        return None
    query = parse_qsl(parts.query, keep_blank_values=True)
    if any(key != "page" for key, _ in query):
        return None  # sort and view variants of listings
    if query == [("page", "1")]:
        return url.split("?", 1)[0]  # page 1 is the bare listing
    return url


def get(url: str, method: str = "GET", agent: str = "demoshop-tests") -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, method=method, headers={"User-Agent": agent})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read(), response.geturl()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), url


@pytest.fixture(scope="module")
def shop() -> Iterator[ShopProcess]:
    with ShopProcess(products=80, seed=3) as running:
        yield running


# --- catalogue ---------------------------------------------------------------------------


def test_catalog_is_deterministic() -> None:
    first, again = Catalog.build(200, seed=1), Catalog.build(200, seed=1)
    assert first.expected_products() == again.expected_products()
    assert first.crawlable_paths() == again.crawlable_paths()
    assert Catalog.build(200, seed=2).expected_products() != first.expected_products()
    # A product depends on (seed, id) only: a smaller shop is a prefix of a bigger one.
    small = Catalog.build(50, seed=1)
    assert [small.expected_product(p.path) for p in small.products] == [
        first.expected_product(p.path) for p in first.products[:50]
    ]


def test_catalog_shape() -> None:
    catalog = Catalog.build(600, seed=1)
    assert 4 <= len(catalog.categories) <= 6
    assert all(2 <= len(top.children) <= 4 for top in catalog.categories)
    stock = Counter(p.availability for p in catalog.products)
    assert set(stock) == {"InStock", "OutOfStock", "PreOrder"}
    assert 0.10 < stock["OutOfStock"] / 600 < 0.20
    assert 0 < stock["PreOrder"] / 600 < 0.08
    assert len({p.path for p in catalog.products}) == 600
    for product in catalog.products:
        assert product.price > 0 and product.price == product.price.quantize(Decimal("0.01"))
        assert product.list_price is None or product.list_price > product.price
        assert product.currency == LANGUAGE_CURRENCY[product.language]
        assert product.language == "en" or product.markup == "plain"
        assert len(product.gtin13) == 13 and product.gtin13.isdigit()
        assert int(product.gtin13[-1]) == gtin13_check_digit(product.gtin13[:12])
        assert 1 <= len(product.images) <= 3
        assert all(src.startswith("/img/") for src in product.images)
        assert re.fullmatch(r"/p/[a-z0-9-]+-\d+\.html", product.path)
        assert [name for name, _ in product.breadcrumbs][0] == "Home"
    assert any(p.list_price for p in catalog.products)
    assert any(p.rating for p in catalog.products) and any(not p.rating for p in catalog.products)
    assert Counter(p.markup for p in catalog.products) == {"jsonld": 200, "microdata": 200,
                                                          "plain": 200}
    languages = Counter(p.language for p in catalog.products if p.markup == "plain")
    assert set(languages) == {lang for lang, _ in PLAIN_LANGUAGES}
    assert gtin13_check_digit("400638133393") == 1  # a real EAN: 4006381333931


def test_catalog_paths() -> None:
    catalog = Catalog.build(200, seed=1, page_size=12)
    listings, products = catalog.listing_paths(), catalog.product_paths()
    assert catalog.crawlable_paths() == listings | products
    assert not listings & products
    assert "/" in listings
    assert not any("page=1" in p and not re.search(r"page=1\d", p) for p in listings)
    for leaf in catalog.leaves():
        pages = -(-len(leaf.products) // 12) or 1
        assert leaf.path in listings
        assert {f"{leaf.path}?page={n}" for n in range(2, pages + 1)} <= listings
        assert f"{leaf.path}?page={pages + 1}" not in listings
    assert catalog.page_count == len(listings) + 200
    expected = catalog.expected_product(catalog.products[0].path, "http://127.0.0.1:8000/")
    assert expected["url"] == "http://127.0.0.1:8000" + catalog.products[0].path
    assert set(expected) >= {"path", "url", "name", "price", "currency", "availability", "sku",
                             "gtin", "brand"}
    assert catalog.expected_product(expected["url"])["name"] == expected["name"]
    with pytest.raises(KeyError):
        catalog.expected_product("/p/nothing-0.html")


def test_price_version_changes_prices_not_identity() -> None:
    before, after = Catalog.build(300, seed=1), Catalog.build(300, seed=1, price_version=1)
    assert before.crawlable_paths() == after.crawlable_paths()
    changed = flipped = 0
    for old, new in zip(before.products, after.products, strict=True):
        assert (old.path, old.name, old.sku, old.gtin13, old.brand) == (
            new.path, new.name, new.sku, new.gtin13, new.brand
        )
        changed += old.price != new.price
        flipped += old.availability != new.availability
    assert 0.2 < changed / 300 < 0.45
    assert 0 < flipped < 40
    assert Catalog.build(300, seed=1, price_version=2).expected_products() != (
        after.expected_products()
    )


# --- pages, in process -------------------------------------------------------------------


def test_product_pages_of_each_markup_show_name_price_stock_breadcrumbs() -> None:
    catalog = Catalog.build(120, seed=1)
    site = ShopSite(catalog)
    for markup in ("jsonld", "microdata", "plain"):
        for product in [p for p in catalog.products if p.markup == markup][:10]:
            html = site.resolve("GET", product.path).body.decode()
            text = unescape(re.sub(r"<[^>]+>", "", html))  # the visible text
            assert "<h1" in html and product.name in text
            if product.language == "en":
                assert format_price(product.price) in text
                assert {"InStock": "In stock", "OutOfStock": "Out of stock",
                        "PreOrder": "Pre-order"}[product.availability] in text
            else:  # a plain page in another language, its own price format and wording
                assert f'lang="{product.language}-' in html
                if product.language != "es":  # es splits the cents into <sup>
                    assert local_price(product.price, product.language, product.currency) in text
                assert TEXTS[product.language][product.availability] in text
                assert TEXTS[product.language]["buy"] in text
            assert 'class="breadcrumb"' in html
            assert product.category.path in html and 'href="/"' in html
            has_json_ld = "application/ld+json" in html
            has_microdata = "itemscope" in html
            assert has_json_ld == (markup == "jsonld")
            assert has_microdata == (markup == "microdata")
            if markup == "jsonld":
                blocks = re.findall(
                    r'<script type="application/ld\+json">(.*?)</script>', html, re.S
                )
                data = [json.loads(block) for block in blocks]
                item = next(d for d in data if d["@type"] == "Product")
                assert item["name"] == product.name and item["gtin13"] == product.gtin13
                assert Decimal(str(item["offers"]["price"])) == product.price
                assert item["offers"]["availability"].endswith("/" + product.availability)
                assert any(d["@type"] == "BreadcrumbList" for d in data)
            elif markup == "microdata":
                assert f'itemprop="price" content="{product.price:.2f}"' in html
                assert f'itemprop="gtin13" content="{product.gtin13}"' in html
            elif product.language == "en":
                assert f"<th>SKU</th><td>{product.sku}</td>" in html
                assert f"<th>EAN</th><td>{product.gtin13}</td>" in html
            else:  # the shop's code under the language's own label
                assert TEXTS[product.language]["sku"] in text and product.sku in text


def test_listing_pages_carry_no_product_data_and_trap_links() -> None:
    catalog = Catalog.build(120, seed=1)
    site = ShopSite(catalog)
    shelves = shelf_paths(catalog)  # their cards carry product markup, on purpose
    for path in catalog.listing_paths():
        html = site.resolve("GET", path).body.decode()
        if path not in shelves:
            assert "application/ld+json" not in html and "itemscope" not in html
        hrefs = links_of(html)
        assert {"/cart", "/account/login", "https://example.com/",
                "mailto:shop@example.com"} <= set(hrefs)
        assert any(h.startswith("/search?q=") for h in hrefs)
    leaf = next(c for c in catalog.leaves() if c.products)
    hrefs = links_of(site.resolve("GET", leaf.path).body.decode())
    assert {"?sort=price_asc", "?sort=name", "?view=grid"} <= set(hrefs)
    assert any(h.startswith("/cart/add?id=") for h in hrefs)
    product_hrefs = links_of(site.resolve("GET", catalog.products[0].path).body.decode())
    assert "#reviews" in product_hrefs or not catalog.products[0].rating


# --- the real server ------------------------------------------------------------------------


def test_walking_the_allowed_links_finds_exactly_the_crawlable_pages(shop: ShopProcess) -> None:
    start = len(shop.read_access_log())
    seen: set[str] = set()
    queue = [shop.url]
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        status, body, final = get(url, agent="walker")
        assert status == 200 and final == url, url
        for href in links_of(body.decode()):
            follow = crawler_should_follow(url, href)
            if follow is not None and follow not in seen:
                queue.append(follow)
    walked = {urlsplit(u).path + (f"?{urlsplit(u).query}" if urlsplit(u).query else "")
              for u in seen}
    assert walked == shop.catalog.crawlable_paths()
    assert shop.pages == len(walked)
    entries = shop.wait_for_requests(start + len(walked))[start:]
    assert Counter(e.path for e in entries) == Counter(walked)  # each page fetched once
    assert {(e.method, e.status, e.user_agent) for e in entries} == {("GET", 200, "walker")}


def test_trap_links_answer_so_the_access_log_shows_them(shop: ShopProcess) -> None:
    leaf = next(c for c in shop.catalog.leaves() if c.products)
    for path in ("cart", "cart/add?id=1", "account/login", "search?q=tv",
                 leaf.path[1:] + "?sort=name", leaf.path[1:] + "?sort=price_asc",
                 leaf.path[1:] + "?view=grid", "img/p/1-1.png"):
        status, body, _ = get(shop.url + path, agent="trap-test")
        assert status == 200 and body, path
    sorted_page = get(shop.url + leaf.path[1:] + "?sort=name")[1].decode()
    assert f'<link rel="canonical" href="{leaf.path}">' in sorted_page
    entries = shop.wait_for_requests(1)
    assert ("/cart/add?id=1", 200, "trap-test") in {(e.path, e.status, e.user_agent)
                                                      for e in entries}


def test_robots_txt(shop: ShopProcess) -> None:
    status, body, _ = get(shop.url + "robots.txt")
    assert status == 200
    assert body.decode().splitlines() == [
        "User-agent: *", "Disallow: /cart", "Disallow: /account", "Disallow: /search",
        f"Sitemap: {shop.url}sitemap_index.xml",
    ]


def test_unknown_pages_and_bad_pagination(shop: ShopProcess) -> None:
    leaf = shop.catalog.leaves()[0]
    last = leaf.page_count(shop.catalog.page_size)
    base = leaf.path[1:]
    for path in ("nothing", "p/nothing-99999.html", "c/nothing/", f"{base}?page={last + 1}",
                 f"{base}?page=0", f"{base}?page=x"):
        assert get(shop.url + path)[0] == 404, path
    # ?page=1 is page 1, as the pager links it (a crawler must make it one URL); with a
    # sort or view it redirects to that variant's bare URL.
    status, _, final = get(shop.url + leaf.path[1:] + "?page=1")
    assert status == 200 and final == shop.url + leaf.path[1:] + "?page=1"
    status, _, final = get(shop.url + leaf.path[1:] + "?page=1&sort=name")
    assert status == 200 and final == shop.url + leaf.path[1:] + "?sort=name"
    entries = shop.wait_for_requests(3)
    statuses = {(e.path, e.status) for e in entries}
    assert {(leaf.path + "?page=1", 200), (leaf.path + "?page=1&sort=name", 301)} <= statuses


def test_access_log_lines(shop: ShopProcess) -> None:
    get(shop.url + "?ua-test=1", method="HEAD", agent="Agent With Spaces/1.0")
    time.sleep(0.05)
    line = shop.access_log.read_text().splitlines()[-1]
    stamp, method, path, status, agent = line.split("\t")
    assert abs(float(stamp) - time.time()) < 10
    assert (method, path, status, agent) == ("HEAD", "/?ua-test=1", "200", "Agent With Spaces/1.0")
    assert shop.read_access_log()[-1].status == 200


def test_keep_alive_pipelining_head_and_bad_requests(shop: ShopProcess) -> None:
    with socket.create_connection(("127.0.0.1", shop.port), timeout=5) as sock:
        sock.sendall(
            b"GET /robots.txt HTTP/1.1\r\nHost: x\r\n\r\n"
            b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /cart HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"
            b"GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
    assert statuses == [b"200", b"200", b"405", b"404"]
    assert data.count(b"Disallow: /cart") == 1
    with socket.create_connection(("127.0.0.1", shop.port), timeout=5) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        assert sock.recv(1000).startswith(b"HTTP/1.1 400 ")
        assert sock.recv(1000) == b""  # closed


def test_latency_does_not_cost_throughput() -> None:
    with ShopProcess(products=10, latency_ms=300) as slow:
        results: list[int] = []
        threads = [
            threading.Thread(target=lambda: results.append(get(slow.url)[0])) for _ in range(10)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
    assert results == [200] * 10
    assert 0.3 <= elapsed < 1.5  # ten concurrent requests, not ten times 300 ms


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_clean_exit_on_signal(sig: int) -> None:
    shop = ShopProcess(products=5).start()
    try:
        assert get(shop.url)[0] == 200
        assert shop.stop(sig) == 0
    finally:
        shop.cleanup()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_non_loopback_hosts_are_refused(host: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "demoshop", "--host", host, "--products", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=10,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "loopback only" in result.stderr


def test_shop_process_reports_a_failed_start() -> None:
    shop = ShopProcess(products=1, host="10.1.2.3")
    with pytest.raises(ShopStartError, match=r"(?s)exit status 2; .*loopback only"):
        shop.start()
    assert not shop.running and not shop.access_log.parent.exists()


def test_listening_line_is_the_first_line() -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "demoshop", "--products", "7", "--host", "localhost"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline().rstrip("\n")
            pages = Catalog.build(7).page_count
            assert re.fullmatch(
                rf"demoshop listening on http://127\.0\.0\.1:\d+/ \(7 products, {pages} pages\)",
                line,
            ), line
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(10) == 0


def _extract(site: ShopSite, target: str) -> dict[str, Any] | None:
    from scrapy.http import HtmlResponse

    from crawler.extraction import extract_product

    page = site.resolve("GET", target)
    assert page.status == 200, target
    response = HtmlResponse(url="http://127.0.0.1:8000" + target, body=page.body)
    return extract_product(response)


def test_trap_pages_are_listings_of_one_two_and_three_products() -> None:
    catalog = Catalog.build()
    site = ShopSite(catalog)
    assert {pick_path(n) for n in PICK_SIZES} <= catalog.listing_paths()
    home = site.resolve("GET", "/").body.decode()
    for size in PICK_SIZES:
        assert f'href="{pick_path(size)}"' in home
        shown = picks(catalog, size)
        assert len(shown) == size
        body = site.resolve("GET", pick_path(size)).body.decode()
        assert all(p.path in body for p in shown)
        assert body.count("Add to cart</button>") == size


def test_every_page_of_the_shop_types_right_and_extracts_its_product() -> None:
    """Zero-configuration extraction over the whole default shop: each product page
    gives exactly its product (every language and markup), every other page none."""
    catalog = Catalog.build()
    site = ShopSite(catalog)
    products = catalog.product_paths()
    languages = set()
    for path in sorted(catalog.crawlable_paths()):
        product = _extract(site, path)
        if path not in products:
            assert product is None, f"{path} is no product page, got {product and product['name']}"
            continue
        expected = catalog.expected_product(path)
        languages.add(expected["language"])
        assert product is not None, path
        got = {k: product[k] for k in ("name", "price", "currency", "availability", "sku")}
        assert got == {k: expected[k] for k in got}, path
        assert product["provenance"]["price"] == (
            "visible" if expected["markup"] == "plain" else
            "json-ld" if expected["markup"] == "jsonld" else "microdata"
        ) or product["price"] == expected["price"]
    assert languages == set(LANGUAGE_CURRENCY)


def test_search_results_of_one_or_many_products_are_no_product() -> None:
    catalog = Catalog.build()
    site = ShopSite(catalog)
    one = catalog.products[0].name
    _, found = search_results(catalog, one)
    assert [p.name for p in found] == [one]
    many = catalog.products[0].brand.split()[0]
    assert len(search_results(catalog, many)[1]) > 3
    for words in (one, many):
        assert _extract(site, "/search?q=" + words.replace(" ", "+")) is None


def test_sitemaps_list_every_product_with_its_lastmod(tmp_path) -> None:
    import gzip as _gzip

    from scrapy.utils.sitemap import Sitemap

    from demoshop.sitemaps import BASE_LASTMOD, changed_products, sitemap_paths

    changed_at = "2030-05-06T07:08:09+00:00"
    with ShopProcess(
        products=130,
        sitemap_only=7,
        price_version=1,
        changed_at=changed_at,
        access_log=tmp_path / "log",
    ) as shop:
        status, body, _ = get(shop.url + "sitemap_index.xml")
        assert status == 200
        children = [entry["loc"] for entry in Sitemap(body)]
        assert {shop.url.rstrip("/") + p for p in sitemap_paths(shop.catalog)} == {
            *children,
            shop.url + "sitemap_index.xml",
        }
        listed = {}
        for child in children:
            status, data, _ = get(child)
            assert status == 200 and data[:2] == b"\x1f\x8b"
            listed.update({e["loc"]: e["lastmod"] for e in Sitemap(_gzip.decompress(data))})
        assert set(listed) == set(shop.expected_products())
        base = shop.url.rstrip("/")
        moved = {base + shop.catalog.product(i).path for i in changed_products(shop.catalog)}
        assert moved and {u for u, m in listed.items() if m == changed_at} == moved
        assert {m for u, m in listed.items() if u not in moved} == {BASE_LASTMOD}
        # the sitemap-only products are linked from no page
        hidden = shop.catalog.sitemap_only_paths()
        assert len(hidden) == 7
        for path in shop.catalog.listing_paths() | (shop.catalog.product_paths() - hidden):
            _, page, _ = get(base + path)
            assert not any(h.encode() in page for h in hidden), path


def test_a_shop_in_its_own_session_ends_with_the_process_that_started_it(tmp_path: Path) -> None:
    # the demo runs its shop in a session of its own (a terminal's Ctrl-C must not
    # reach it); a demo killed outright must not leave the shop behind (seen: a test
    # that killed a stuck demo left its shop serving for 45 minutes)
    code = (
        "from demoshop.process import ShopProcess\n"
        # its access log here: the starter, killed outright, cleans up nothing
        f"shop = ShopProcess(products=3, own_session=True, access_log={str(tmp_path / 'a.log')!r})"
        ".start()\n"
        "print(shop.process.pid, flush=True)\n"
        "import time; time.sleep(120)\n"
    )
    starter = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    shop_pid = int(starter.stdout.readline())  # type: ignore[union-attr]
    starter.kill()
    starter.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(shop_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(shop_pid, signal.SIGKILL)
    raise AssertionError("the shop outlived the process that started it")
