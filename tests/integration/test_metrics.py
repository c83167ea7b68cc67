"""The metrics of the master (``master metrics``) and of a worker, on a real Redis."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.core.keys import CrawlKeys
from crawler.extensions.metrics import PrometheusMetrics
from crawler.net.redis_client import ROUND_TRIPS, CountingRedis
from crawler.spiders.ecommerce import EcommerceSpider
from master.cli import main
from tests.support.net import free_port, wait_for_port
from tools.tcpproxy import TcpProxy
from tools.workers import ROOT

KEYS = CrawlKeys()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of a Prometheus text exposition."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def crawl_state(client: redis.Redis) -> None:
    now = time.time()
    client.zadd(KEYS.requests, {b"r1": 0, b"r2": 0, b"r3": 0})
    client.rpush(KEYS.start_urls, "https://a.example/")
    client.sadd(KEYS.dupefilter, b"f1", b"f2")
    client.hset(KEYS.inflight("w1"), mapping={"l1": b"x", "l2": b"y"})
    record = {
        "worker": "w1",
        "state": "running",
        "started_at": now - 60,
        "updated_at": now,
        "elapsed": 60,
        "pages": 42,
        "items": 7,
    }
    client.hset(KEYS.workers, "w1", json.dumps(record))
    client.set(KEYS.alive("w1"), 1, ex=30)
    client.hset(
        KEYS.stats,
        mapping={
            "items_stored": 7,
            "items_invalid": 2,
            "politeness_waits": 5,
            "note": "not a number",
        },
    )
    client.rpush(KEYS.dead, "{}")
    client.set(KEYS.paused, json.dumps({"since": now, "by": "test"}))


def test_master_metrics_once_reads_the_crawl_from_redis(redis_url, redis_client, capsys):
    crawl_state(redis_client)
    assert main(["--redis-url", redis_url, "metrics", "--once"]) == 0
    got = samples(capsys.readouterr().out)
    assert got[("crawl_redis_up", ())] == 1
    assert got[("crawl_queued_requests", ())] == 3
    assert got[("crawl_pending_seeds", ())] == 1
    assert got[("crawl_seen_fingerprints", ())] == 2
    assert got[("crawl_requests_in_flight", ())] == 2
    assert got[("crawl_live_workers", ())] == 1
    assert got[("crawl_dead_letters", ())] == 1
    assert got[("crawl_paused", ())] == 1
    assert got[("crawl_state", (("state", "paused"),))] == 1
    assert got[("crawl_state", (("state", "running"),))] == 0
    assert got[("crawl_items_stored_total", ())] == 7
    assert got[("crawl_items_invalid_total", ())] == 2
    assert got[("crawl_politeness_waits_total", ())] == 5
    assert got[("crawl_worker_pages", (("worker", "w1"),))] == 42
    assert got[("crawl_stats", (("field", "items_stored"),))] == 7
    assert not any(name == "crawl_stats" and ("field", "note") in labels for name, labels in got)


def test_master_metrics_without_politeness_key_has_no_such_metric(redis_url, capsys):
    assert main(["--redis-url", redis_url, "metrics", "--once"]) == 0
    got = samples(capsys.readouterr().out)
    assert got[("crawl_queued_requests", ())] == 0
    assert not any(name.startswith("crawl_politeness") for name, _ in got)


def test_master_metrics_with_redis_unreachable_fails_at_once(capsys):
    port = free_port()
    assert main(["--redis-url", f"redis://127.0.0.1:{port}/0", "metrics", "--once"]) == 2
    assert "error" in capsys.readouterr().err


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    "started_with", [None, _ignore_sigint], ids=["default", "sigint-ignored-at-start"]
)
def test_master_metrics_serves_until_ctrl_c(redis_url, redis_client, started_with):
    """Ctrl-C stops it, also when started as a background job (SIGINT ignored)."""
    crawl_state(redis_client)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "master", "metrics", "--port", str(port), "--address", "127.0.0.1"],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": redis_url},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=started_with,
    )
    try:
        wait_for_port(port, timeout=120)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            first = samples(response.read().decode())
        assert first[("crawl_queued_requests", ())] == 3
        redis_client.zadd(KEYS.requests, {b"r4": 0})  # read afresh at each scrape
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
            second = samples(response.read().decode())
        assert second[("crawl_queued_requests", ())] == 4
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output
    assert "stopped" in output and "Traceback" not in output


def test_worker_metrics_are_off_without_a_port():
    for port in (None, 0):
        settings = {} if port is None else {"METRICS_PORT": port}
        crawler = get_crawler(EcommerceSpider, settings)
        with pytest.raises(NotConfigured):
            PrometheusMetrics.from_crawler(crawler)


def test_round_trips_are_counted_per_command_and_per_pipeline(redis_url):
    client = CountingRedis.from_url(redis_url)
    try:
        before = ROUND_TRIPS.value
        client.set("ecommerce:t", 1)
        client.get("ecommerce:t")
        assert ROUND_TRIPS.value - before == 2
        pipe = client.pipeline(transaction=False)
        for _ in range(5):
            pipe.incr("ecommerce:t")
        pipe.execute()
        assert ROUND_TRIPS.value - before == 3
        client.pipeline().execute()  # nothing queued: no round trip
        assert ROUND_TRIPS.value - before == 3
        script = client.register_script("return 1")
        script()  # EVALSHA fails (NOSCRIPT), then SCRIPT LOAD, then EVALSHA again
        assert ROUND_TRIPS.value - before >= 4
    finally:
        client.close()


def test_a_scrape_during_the_workers_close_never_raises(redis_url):
    """Scrapes run in the metrics server's threads; the spider's close ends the server
    and closes its Redis client. A scrape still reading the leases gauge at that moment
    (a Prometheus scrape as a worker stops) must not have the connection closed under it
    (it raised ``TypeError`` in redis-py, logged as a traceback by the server)."""
    crawler = get_crawler(EcommerceSpider, {"METRICS_PORT": free_port(), "REDIS_URL": redis_url})
    ext = PrometheusMetrics.from_crawler(crawler)
    failures: list[BaseException] = []
    for _ in range(60):
        ext._redis = redis.Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=2)
        running = threading.Event()
        running.set()

        def scrape(running: threading.Event = running) -> None:
            while running.is_set():
                try:
                    ext.leases_held()
                except BaseException as exc:  # noqa: BLE001 -- what the server would log
                    failures.append(exc)
                    return

        threads = [threading.Thread(target=scrape) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(0.005)
        ext.spider_closed(None)
        running.clear()
        for thread in threads:
            thread.join(timeout=10)
        assert not failures, repr(failures[0])
    assert ext._redis is None and ext.leases_held() is None


def test_master_metrics_stopped_mid_scrape_answers_it_first(redis_url, redis_client):
    """Ctrl-C while Prometheus scrapes: the scrape running is answered in full before
    the Redis client closes (it was cut, a traceback printed, as the process ended)."""
    crawl_state(redis_client)
    kwargs = redis_client.connection_pool.connection_kwargs
    host, port, db = kwargs["host"], kwargs["port"], kwargs.get("db", 0)
    with TcpProxy(host, port, delay=0.01) as slow:  # a scrape's reads take a second or so
        metrics_port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "master", "metrics", "--port", str(metrics_port),
             "--address", "127.0.0.1"],
            cwd=ROOT,
            env={**os.environ, "REDIS_URL": f"redis://127.0.0.1:{slow.port}/{db}"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        answers: list[str] = []

        def scrape_once() -> None:
            url = f"http://127.0.0.1:{metrics_port}/metrics"
            try:
                with urllib.request.urlopen(url, timeout=60) as response:
                    answers.append(response.read().decode())
            except OSError as exc:  # the answer cut short
                answers.append(f"cut: {exc!r}")

        try:
            assert process.stdout is not None
            serving = process.stdout.readline()  # its loop is running (Ctrl-C stops it)
            assert serving.startswith("serving crawl metrics"), serving
            before = slow.chunks_received
            scrape = threading.Thread(target=scrape_once)
            scrape.start()
            # Ctrl-C once the scrape is reading Redis (through the slow proxy)
            deadline = time.monotonic() + 60
            while slow.chunks_received < before + 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            process.send_signal(signal.SIGINT)
            scrape.join(timeout=60)
        finally:
            if process.poll() is None and not answers:  # (one Ctrl-C, unless not sent)
                process.send_signal(signal.SIGINT)
            output, _ = process.communicate(timeout=120)
    assert len(answers) == 1 and not answers[0].startswith("cut: "), (answers, output)
    assert samples(answers[0])[("crawl_queued_requests", ())] == 3
    assert "stopped" in output and "Traceback" not in output, output
    assert process.returncode == 0, output
