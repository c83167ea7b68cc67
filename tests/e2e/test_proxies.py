"""Requests go out through two real local proxies, one of them failing."""

from __future__ import annotations

import pytest

from tests.support.httpproxy import ForwardProxy

from .conftest import page_fetches

pytestmark = pytest.mark.workers


def test_requests_rotate_over_proxies_and_the_failing_one_rests(crawl, shop_factory, tmp_path):
    shop = shop_factory(products=12)
    with ForwardProxy(credentials="crawler:s3cret") as good, ForwardProxy(failing=True) as bad:
        proxy_file = tmp_path / "proxies.txt"
        proxy_file.write_text(f"# our two proxies\n{good.url()}\n\n{bad.url()}\n")
        crawl.seed(shop.url)
        worker = crawl.start_worker(
            "proxied",
            PROXY_LIST=str(proxy_file),
            PROXY_FAILURES_BEFORE_REST=2,
            PROXY_REST_SECONDS=600,
        )
        crawl.wait_workers()
    crawl.assert_clean_logs()

    # every page was fetched, once, through the good proxy (which demands its credentials)
    expected = shop.catalog.crawlable_paths()
    fetched = page_fetches(shop)
    assert set(fetched) == expected
    assert max(fetched.values()) == 1
    base = shop.url.rstrip("/")
    assert {url[len(base) :] for url in good.requests} >= expected
    # the failing proxy had its turns (those handed out before its first answers came
    # back), failed, and was rested once for the rest of the crawl
    assert 2 <= len(bad.requests) < len(expected) / 2, bad.requests
    log = worker.log()
    assert "'proxies/rested': 1," in log
    assert f"'proxies/failures': {len(bad.requests)}," in log
    assert f"Proxy http://127.0.0.1:{bad.port} failed 2 times in a row" in log
    assert f"http://***@127.0.0.1:{good.port}" in log  # named, but redacted
    assert "s3cret" not in log
    # user agents keep rotating behind the proxy
    assert len(set(good.agents)) >= 5
    assert crawl.client.llen("ecommerce:dead") == 0
