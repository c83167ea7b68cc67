"""The master's commands on a real 3-node Redis Cluster (``REDIS_CLUSTER=true``).

The crawl's state is written by hand as the workers would (``tests/support/cluster_crawl.py``)
in the shards of several sites, whose keys are on different nodes; each command's figures
must be the sums over the shards, its writes must land in each site's shard.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from redis.cluster import RedisCluster as ClusterClient

from crawler.core.layout import layout_key
from crawler.pipelines.embedded import EmbeddedStorePipeline
from crawler.scheduling.lanes import queued
from master.cli import main
from tests.support.cluster_crawl import (
    KEYS,
    SITES,
    fill_crawl,
    flush,
    keys_per_node,
    node_of,
    payload,
    site_of_payload,
)
from tests.support.products import make_crawler, make_product
from tests.support.queue import queue_contents
from tools.redis_cluster import RedisCluster

# the module's one 3-node cluster (``cluster``); ``client`` below is this module's own
pytest_plugins = ["tests.integration.cluster_support"]


@pytest.fixture
def client(cluster: RedisCluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClusterClient]:
    """The cluster, emptied; the master's environment pointed at it (16 shards)."""
    monkeypatch.setenv("REDIS_CLUSTER", "true")
    monkeypatch.setenv("REDIS_URL", cluster.url)
    monkeypatch.delenv("REDIS_CLUSTER_SHARDS", raising=False)
    connection = cluster.client()
    flush(connection)
    yield connection
    flush(connection)
    connection.close()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args), prog="master")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_sites_shards_are_spread_over_every_node(client: ClusterClient) -> None:
    """The premise of the other tests: the crawl's keys live on all three nodes."""
    fill_crawl(client)
    nodes = {node_of(client, KEYS.for_site(site).requests) for site in SITES}
    assert len(nodes) == 3
    assert all(count > 0 for count in keys_per_node(client).values())


def test_status_sums_every_shard(
    client: ClusterClient, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    filled = time.time()
    written = fill_crawl(client)
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(f"http://{site}/\n" for site in SITES[:3]))
    code, out, err = run(capsys, "seed", str(seeds), "--allow-private-networks", "127.0.0.1")
    assert code == 0, err

    code, out, err = run(capsys, "status", "--json", "--sites")
    assert code == 0, err
    status = json.loads(out)
    assert status["queued_requests"] == written.queued
    assert status["backoff"]["retries_waiting"] == written.retries
    # the earliest retry of every shard, due 30 s after the fill (however slow the machine)
    waited = time.time() - filled
    assert 30 - waited - 0.1 <= status["backoff"]["next_retry_in"] <= 30
    assert status["seen_fingerprints"] == written.fingerprints
    assert status["in_flight"] == written.leases
    assert status["pending_seeds"] == 3
    assert status["seeded_urls"] == 3
    assert status["dead_letters"] == len(written.dead)
    assert status["items_stored"] == written.stats["items_stored"]
    assert status["items_invalid"] == written.stats["items_invalid"]
    assert status["requests_refused"] == 1
    assert status["live_workers"] == 2 and status["known_workers"] == 3
    assert status["state"] == "running"
    assert [site["site"] for site in status["backoff"]["sites"]] == [written.backoff_site]
    assert status["backoff"]["sites"][0]["rate"] == 0.5
    assert status["sites"]["sites"][0] == {
        "site": SITES[0],
        "pages": 7,
        "products": 5,
        "sitemaps": 0,
        "checks_failing": None,  # no data-check figures were written for it
    }

    code, out, err = run(capsys, "status")
    assert code == 0, err
    assert str(written.queued) in out and str(written.fingerprints) in out
    assert written.backoff_site in out


def test_report_reads_every_worker(
    client: ClusterClient, capsys: pytest.CaptureFixture[str]
) -> None:
    fill_crawl(client)
    code, out, err = run(capsys, "report", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["total"]["workers"] == 3 and report["total"]["live"] == 2
    assert report["total"]["pages"] == 30 + 12 + 5


def test_dead_letters_go_back_to_their_sites_shards(
    client: ClusterClient, capsys: pytest.CaptureFixture[str]
) -> None:
    written = fill_crawl(client)
    code, out, err = run(capsys, "dead", "list", "--json")
    assert code == 0, err
    assert json.loads(out)["total"] == 3
    code, out, err = run(capsys, "dead", "reasons", "--json")
    assert json.loads(out)["reasons"][0] == {"reason": "HTTP 500", "count": 2}

    before = {site: queued(client, KEYS.for_site(site).requests) for site in SITES}
    code, out, err = run(capsys, "dead", "requeue", "--reason", "HTTP 500", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert (result["requests"], result["seeds"], result["remaining"]) == (2, 0, 1)
    for site in (SITES[3], SITES[5]):
        queue = KEYS.for_site(site).requests
        assert queued(client, queue) == before[site] + 1
        assert (
            client.zscore(
                queue, payload(f"http://{site}/d/2" if site == SITES[5] else f"http://{site}/d/1")
            )
            == 0
        )
    code, out, err = run(capsys, "dead", "requeue")
    assert code == 0, err
    assert "1 seeds to ecommerce:{seeds}:start_urls" in out
    assert "ecommerce:{s*}:requests (16 shards)" in out
    assert [json.loads(raw)["url"] for raw in client.lrange(KEYS.start_urls, 0, -1)] == [
        f"http://{SITES[6]}/"
    ]
    assert client.llen(KEYS.dead) == 0
    assert client.get(layout_key(KEYS)) is not None  # the writer recorded the layout

    client.rpush(KEYS.dead, *written.dead)
    code, out, err = run(capsys, "dead", "clear", "--yes")
    assert (code, out.strip()) == (0, "cleared 3 dead letters.")
    assert client.exists(KEYS.dead) == 0


def test_invalid_items(client: ClusterClient, capsys: pytest.CaptureFixture[str]) -> None:
    fill_crawl(client)
    code, out, err = run(capsys, "invalid", "--json")
    assert code == 0, err
    listing = json.loads(out)
    assert listing["total"] == 2 and listing["records"][0]["errors"][0]["field"] == "price"


def test_pause_and_resume(client: ClusterClient, capsys: pytest.CaptureFixture[str]) -> None:
    fill_crawl(client)
    code, out, _ = run(capsys, "pause")
    assert code == 0 and client.exists(KEYS.paused)
    code, out, _ = run(capsys, "status", "--json")
    assert json.loads(out)["state"] == "paused"
    code, out, _ = run(capsys, "resume")
    assert code == 0 and not client.exists(KEYS.paused)


def test_reset_deletes_every_key_on_every_node(
    client: ClusterClient, capsys: pytest.CaptureFixture[str]
) -> None:
    written = fill_crawl(client)
    client.set(layout_key(KEYS), json.dumps({"shards": 16}))
    client.set("other:key", "kept")  # not the crawl's
    found = sum(keys_per_node(client).values())
    code, out, err = run(capsys, "reset", "--yes")
    assert code == 1 and "refusing to reset" in err  # two live workers
    code, out, err = run(capsys, "reset", "--yes", "--force")
    assert code == 0, err
    assert f"queued requests    {written.queued + written.retries:>3}" in out
    assert f"seen fingerprints  {written.fingerprints:>3}" in out
    assert f"deleted {found} keys" in out
    assert sum(keys_per_node(client).values()) == 0
    assert client.get("other:key") == b"kept"


def test_writes_refused_with_another_shard_count(
    client: ClusterClient, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fill_crawl(client)
    client.set(layout_key(KEYS), json.dumps({"shards": 16}))
    monkeypatch.setenv("REDIS_CLUSTER_SHARDS", "8")
    code, out, err = run(capsys, "dead", "requeue")
    assert code == 2
    assert "REDIS_CLUSTER_SHARDS=16" in err
    assert client.llen(KEYS.dead) == 3  # nothing moved


def store_products(path: Path, urls: list[str]) -> None:
    crawler = make_crawler({"EMBEDDED_STORE_PATH": str(path), "REDIS_URL": "redis://127.0.0.1:1/0"})
    pipeline = EmbeddedStorePipeline.from_crawler(crawler)
    products = [make_product(i, url=url) for i, url in enumerate(urls)]
    result = pipeline.store_batch(products)
    assert len(result.stored) == len(urls), result.rejected
    pipeline.disconnect()


def assert_in_their_shards(client: ClusterClient, sites: list[str], each: int) -> None:
    """Every site has ``each`` requests in its shard's queue, and no queue holds others."""
    queues = {KEYS.for_site(site).requests for site in sites}
    found: dict[str, list[str]] = {}
    for queue in queues:
        for raw, _ in queue_contents(client, queue):
            site = site_of_payload(raw)
            assert KEYS.for_site(site).requests == queue
            found.setdefault(site, []).append(queue)
    assert {site: len(found.get(site, [])) for site in sites} == dict.fromkeys(sites, each)


def test_recrawl_queues_each_url_in_its_sites_shard(
    client: ClusterClient, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    urls = [f"http://{site}/p/{n}.html" for site in SITES for n in range(3)]
    path = tmp_path / "products.sqlite3"
    store_products(path, urls)
    code, out, err = run(capsys, "recrawl", "--older-than", "0s", "--store-path", str(path))
    assert code == 0, err
    assert f"queued {len(urls)} of {len(urls)} products" in out
    assert_in_their_shards(client, SITES, 3)
    code, out, err = run(capsys, "recrawl", "--older-than", "0s", "--store-path", str(path))
    assert f"queued 0 of {len(urls)} products" in out  # nothing twice
    code, out, err = run(capsys, "status", "--json")
    assert json.loads(out)["queued_requests"] == len(urls)
    # export reads the store only: the same on a cluster
    code, out, err = run(capsys, "export", "--store-path", str(path), "--format", "jsonl")
    assert code == 0, err
    assert sorted(json.loads(line)["url"] for line in out.splitlines()) == sorted(urls)


class Sitemaps(BaseHTTPRequestHandler):
    """A site with no robots.txt and a sitemap whose every product changed in 2099."""

    paths: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/sitemap.xml":
            self.send_error(404)
            return
        host = self.headers["Host"]
        entries = "".join(
            f"<url><loc>http://{host}{path}</loc><lastmod>2099-01-01</lastmod></url>"
            for path in self.paths
        )
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_recrawl_changed_queues_in_each_sites_shard(
    client: ClusterClient,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Sitemaps.paths = ["/p/1.html", "/p/2.html"]
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Sitemaps) for _ in range(4)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        sites = [f"127.0.0.1:{server.server_address[1]}" for server in servers]
        urls = [f"http://{site}{path}" for site in sites for path in ("/p/1.html", "/p/2.html")]
        path = tmp_path / "products.sqlite3"
        store_products(path, [*urls, f"http://{sites[0]}/p/unchanged.html"])
        monkeypatch.setenv("ALLOW_PRIVATE_NETWORKS", "127.0.0.1")
        code, out, err = run(capsys, "recrawl", "--changed", "--store-path", str(path))
        assert code == 0, err
        assert f"queued {len(urls)} of {len(urls)} products" in out
        assert_in_their_shards(client, sites, 2)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_metrics_once_sums_every_shard(
    client: ClusterClient, capsys: pytest.CaptureFixture[str]
) -> None:
    written = fill_crawl(client)
    code, out, err = run(capsys, "metrics", "--once")
    assert code == 0, err
    lines = dict(line.rsplit(" ", 1) for line in out.splitlines() if not line.startswith("#"))
    assert float(lines["crawl_redis_up"]) == 1.0
    assert float(lines["crawl_queued_requests"]) == written.queued
    assert float(lines["crawl_retries_waiting"]) == written.retries
    assert float(lines["crawl_seen_fingerprints"]) == written.fingerprints
    assert float(lines["crawl_requests_in_flight"]) == written.leases
    assert float(lines["crawl_sites_in_backoff"]) == 1
    assert float(lines["crawl_dead_letters"]) == 3


def test_bench_frontier_measures_one_node_and_a_cluster(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its own redis-server and cluster: the crawl's Redis is never touched."""
    code, out, err = run(capsys, "bench", "--frontier", "3000")
    assert code == 0, err
    blocks = out.strip().split("\n\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("frontier on one redis-server: 3000 product links")
    assert blocks[1].startswith("frontier on a Redis Cluster of 3 primaries, 16 shards")
    for block in blocks:
        queued = float(re.search(r"queued request: ([\d.]+) bytes", block).group(1))  # type: ignore[union-attr]
        exact = float(re.search(r"exact set: ([\d.]+) bytes", block).group(1))  # type: ignore[union-attr]
        # more than the payload (94.5 bytes) and the 20-byte fingerprint, far below 1 kB
        assert 95 < queued < 1000 and 20 < exact < 500
    code, out, err = run(capsys, "bench", "--frontier", "100", "--cluster-primaries", "0")
    assert code == 0 and "\n\n" not in out.strip()


def test_status_sums_the_shards_bloom_filters(
    client: ClusterClient, capsys: pytest.CaptureFixture[str]
) -> None:
    from typing import cast

    from crawler.core.keys import CrawlKeys
    from crawler.scheduling.bloom import BloomFilter, BloomSize

    size = BloomSize.for_capacity(1000, 0.001)
    added = 0
    for number, site in enumerate(SITES[:4]):
        bloom = BloomFilter(client, cast("CrawlKeys", KEYS.for_site(site)), size)
        bloom.check_and_add([bytes([number, n]) * 10 for n in range(number + 5)])
        added += number + 5
    shards = len({KEYS.shard_of(site) for site in SITES[:4]})
    code, out, err = run(capsys, "status", "--json")
    assert code == 0, err
    bloom = json.loads(out)["bloom"]
    assert bloom["shards"] == shards
    assert bloom["count"] == added
    assert bloom["capacity"] == 1000 * shards and bloom["bits"] == size.bits * shards
    assert bloom["memory_bytes"] >= size.bits // 8 * shards
