"""Both spiders at once on a real 3-node Redis Cluster started here: nothing shared or lost."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster as ClusterClient

from crawler.core.keys import CrawlKeys
from crawler.core.sites import site_key
from tests.support.cluster import flush_all
from tests.support.quote_site import QuoteSite
from tools.redis_cluster import RedisCluster

from .conftest import page_fetches
from .finance import compare, seed, sqlite_rows, start
from .test_cluster_crawl import ClusterCrawl

pytestmark = pytest.mark.workers

FINANCE = CrawlKeys.layout("finance", cluster=True)
ECOMMERCE = CrawlKeys.layout("ecommerce", cluster=True)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with RedisCluster(primaries=3) as started:
        yield started


@pytest.fixture
def crawl(cluster, tmp_path) -> Iterator[ClusterCrawl]:  # type: ignore[no-untyped-def]
    crawl = ClusterCrawl(cluster, tmp_path)
    flush_all(crawl.client)  # type: ignore[arg-type]
    yield crawl
    crawl.cleanup()


def _workers(crawl: ClusterCrawl, keys: CrawlKeys) -> set[str]:
    return {worker.decode() for worker in crawl.client.hkeys(keys.workers)}


@pytest.mark.timeout(600)
def test_both_spiders_crawl_at_once_on_a_cluster(crawl, shop_factory):
    shop = shop_factory(products=60, latency_ms=5)
    with QuoteSite(60, latency=0.01) as site:
        seed(crawl, "ecommerce", shop.url)
        seed(crawl, "finance", site.url + "cotizaciones/")
        start(crawl, "e1", "ecommerce")
        start(crawl, "f1", "finance")
        crawl.wait_workers()
        crawl.assert_clean_logs()

        products = sqlite_rows(crawl, "select url from products")
        assert sorted(url for (url,) in products) == sorted(
            shop.url.rstrip("/") + path for path in shop.catalog.product_paths()
        )
        quotes = sqlite_rows(
            crawl, "select url, symbol, price, currency, volume, as_of from quotes"
        )
        assert len(quotes) == len({row[0] for row in quotes}) == len(site.instruments)
        right, missed = compare(site, quotes)
        assert right == len(site.instruments), missed
        fetched = page_fetches(shop)
        assert set(fetched) == shop.catalog.crawlable_paths() and max(fetched.values()) == 1
        assert max(site.page_fetches().values()) == 1

        # each spider's keys carry its prefix, its shards hold its own site's requests
        keys = crawl.keys_matching("*")
        assert keys and all(key.startswith(("ecommerce:", "finance:")) for key in keys), keys
        for keys_of, site_url in ((ECOMMERCE, shop.url), (FINANCE, site.url)):
            prefix = keys_of.spider
            shards = {
                key.split(":")[1] for key in crawl.keys_matching(f"{prefix}:{{s*}}:dupefilter")
            }
            assert shards == {keys_of.for_site(site_key(site_url)).tag}
            assert crawl.keys_matching(keys_of.inflight_pattern) == []
        assert _workers(crawl, ECOMMERCE) == {"e1"} and _workers(crawl, FINANCE) == {"f1"}
        for spider, count in (("ecommerce", len(products)), ("finance", len(quotes))):
            result = crawl.master("--spider", spider, "status", "--json")
            assert result.returncode == 0, result.stderr
            status = json.loads(result.stdout)
            assert (status["items_stored"], status["in_flight"]) == (count, 0)
        assert isinstance(crawl.client, ClusterClient)
