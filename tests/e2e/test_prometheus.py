"""A real Prometheus scrapes two real workers and ``master metrics`` during a demo-shop crawl.

Prometheus (Debian's ``prometheus`` package; ``scripts/bootstrap-services``
installs it under CI) runs with its own data folder and a 1 s scrape interval,
loads ``deploy/monitoring/alerts.yml``, and the figures are read back through
its HTTP API (``/api/v1/query``) and compared with the crawl.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.net import free_port, wait_for_port
from tools.workers import ROOT

from .conftest import START_TIMEOUT, parsed_pages, wait_until

pytestmark = pytest.mark.workers

MONITORING = ROOT / "deploy" / "monitoring"
METRIC_NAME = re.compile(r"\b(crawl(?:er)?_[a-z_]+)")


def required_binary(name: str) -> str:
    """The path of ``name``; missing is a failure under CI (scripts/bootstrap-services
    installs it there), a skip on a developer's machine."""
    path = shutil.which(name)
    if path:
        return path
    message = (
        f"`{name}` is not installed (Debian package `prometheus`; see scripts/bootstrap-services)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


class Prometheus:
    """A private Prometheus server and a small client of its HTTP API."""

    def __init__(self, binary: str, workdir: Path, scrape: dict[str, list[str]]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(MONITORING / "alerts.yml")],
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": targets}]}
                for job, targets in scrape.items()
            ],
        }
        config_path = workdir / "prometheus.yml"
        config_path.write_text(yaml.safe_dump(config))
        self.log_path = workdir / "prometheus.log"
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.tsdb.path={workdir / 'prometheus-data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def get(self, path: str, **params: str) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def wait_ready(self, timeout: float = 60) -> None:
        def ready() -> bool:
            assert self.process.poll() is None, self.log()
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        wait_until(ready, timeout, "Prometheus ready")

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.get("/api/v1/query", query=expr)
        assert data["resultType"] == "vector", data
        return list(data["result"])

    def value(self, expr: str) -> float | None:
        """The value of a query that gives one sample (None when it gives none)."""
        result = self.query(expr)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else None

    def by_label(self, expr: str, label: str) -> dict[str, float]:
        return {r["metric"][label]: float(r["value"][1]) for r in self.query(expr)}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@pytest.fixture
def prometheus_factory(tmp_path: Path) -> Iterator[Callable[[dict[str, list[str]]], Prometheus]]:
    binary = required_binary("prometheus")
    servers: list[Prometheus] = []

    def start(scrape: dict[str, list[str]]) -> Prometheus:
        server = Prometheus(binary, tmp_path, scrape)
        servers.append(server)
        server.wait_ready()
        return server

    yield start
    for server in servers:
        server.stop()


def start_master_metrics(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "master", "metrics", "--port", str(port), "--address", "127.0.0.1"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
    )


def port_closed(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except OSError:
        return True


def test_prometheus_scrapes_two_workers_and_the_master_during_a_crawl(
    crawl, shop_factory, prometheus_factory, tmp_path
):
    shop = shop_factory(products=60, latency_ms=20)
    products = len(shop.catalog.product_paths())
    pages = parsed_pages(shop)  # its pages and its sitemaps
    ports = {"w1": free_port(), "w2": free_port()}
    master_port = free_port()

    master = start_master_metrics(crawl.env, master_port, tmp_path / "master-metrics.log")
    try:
        wait_for_port(master_port, timeout=START_TIMEOUT)
        for worker, port in ports.items():
            # MAX_IDLE_TIME_BEFORE_CLOSE=0: the workers stay up (and scraped) until stopped
            crawl.start_worker(
                worker,
                CONCURRENT_REQUESTS=4,
                MAX_IDLE_TIME_BEFORE_CLOSE=0,
                METRICS_PORT=port,
                METRICS_ADDRESS="127.0.0.1",
                DATACHECKS_SYNC_INTERVAL=1,  # the sites' data-check figures in Redis soon
            )
        prom = prometheus_factory(
            {
                "crawler-worker": [f"127.0.0.1:{port}" for port in ports.values()],
                "crawler-master": [f"127.0.0.1:{master_port}"],
            }
        )
        crawl.wait_running(2)  # start-up is slow on a busy machine: START_TIMEOUT
        wait_until(
            lambda: prom.value('sum(up{job="crawler-worker"})') == 2,
            60,
            f"Prometheus scraping both workers\n{prom.log()}",
        )
        crawl.seed(shop.url)

        def done() -> bool:
            return (
                prom.value("sum(crawler_items_stored_total)") == products
                and prom.value("crawl_items_stored_total") == products
                and prom.value("sum(crawler_pages_parsed_total)") == pages
                and prom.value("crawl_queued_requests + crawl_requests_in_flight") == 0
            )

        wait_until(done, 180, f"Prometheus seeing the whole crawl of {products} products")

        # the workers' counters, read back through Prometheus, are the crawl's
        parsed = prom.by_label("crawler_pages_parsed_total", "instance")
        assert set(parsed) == {f"127.0.0.1:{port}" for port in ports.values()}
        # each instance's own counter, adding up to the crawl (how the pages were shared
        # between the two is the scheduler's, checked by test_distributed_crawl: a short
        # crawl on a busy machine can leave one worker none, as CI once saw, 0 and 90)
        assert sum(parsed.values()) == pages, parsed
        answered = len(shop.read_access_log())  # pages and each worker's robots.txt
        assert prom.value("sum(crawler_pages_total)") == answered
        assert prom.value('sum(crawler_pages_total{status="200"})') == answered
        assert prom.value("sum(crawler_download_latency_seconds_count)") == answered
        assert prom.value("sum(crawler_items_invalid_total)") == 0
        assert prom.value("sum(crawler_dead_letters_total)") == 0
        assert prom.value("sum(crawler_store_retries_total)") == 0
        assert prom.value('sum(crawler_store_write_seconds_count{backend="embedded"})') >= 1
        trips = prom.by_label("crawler_redis_round_trips_total", "instance")
        assert len(trips) == 2 and all(n > 0 for n in trips.values()), trips
        # gauges: each target is scraped at its own moment, so wait for the next scrapes
        wait_until(
            lambda: prom.value("sum(crawler_leases_held)") == 0
            and prom.value("sum(crawler_requests_in_flight)") == 0,
            30,
            "the workers' gauges showing no lease held and nothing downloading",
        )
        workers = prom.by_label("crawler_worker_info", "worker")
        assert set(workers) == {"w1", "w2"}

        # the master's crawl-wide view
        assert prom.value("crawl_redis_up") == 1
        assert prom.value("crawl_live_workers") == 2
        assert prom.value("crawl_seen_fingerprints") == pages
        assert prom.value("crawl_dead_letters") == 0
        assert prom.value("crawl_paused") == 0
        assert prom.value("crawl_items_invalid_total") == 0
        per_worker = prom.by_label("crawl_worker_pages", "worker")
        assert set(per_worker) == {"w1", "w2"}

        # the alert rules are loaded and evaluated without error
        declared = (MONITORING / "alerts.yml").read_text().count("- alert:")
        assert declared >= 7

        def rules_evaluated() -> bool:
            groups = prom.get("/api/v1/rules")["groups"]
            rules = [rule for group in groups for rule in group["rules"]]
            return len(rules) == declared and all(
                rule.get("lastEvaluation", "").startswith("2") and rule["health"] == "ok"
                for rule in rules
            )

        wait_until(rules_evaluated, 30, f"the {declared} alert rules evaluated, healthy")

        # every metric the alert rules and the dashboard use exists in Prometheus (the
        # data checks' gauge once a worker has sent its site's figures, and scraped)
        used = set(METRIC_NAME.findall((MONITORING / "alerts.yml").read_text()))
        dashboard = json.loads((MONITORING / "grafana" / "dashboards" / "crawler.json").read_text())
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                used |= set(METRIC_NAME.findall(target["expr"]))
        assert used, "no metric found in the rules and the dashboard"

        def unknown() -> list[str]:
            return sorted(used - set(prom.get("/api/v1/label/__name__/values")))

        wait_until(lambda: not unknown(), 60, "Prometheus knowing every metric the rules use")

        # a clean stop closes each worker's metrics server
        for worker in crawl.workers:
            assert worker.stop() == 0, worker.log()[-4000:]
        crawl.assert_clean_logs()
        for worker in crawl.workers:
            assert "Metrics: serving Prometheus metrics on http://127.0.0.1:" in worker.log()
        assert all(port_closed(port) for port in ports.values())
    finally:
        if master.poll() is None:
            master.send_signal(signal.SIGINT)
    assert master.wait(30) == 0
    assert "stopped" in (tmp_path / "master-metrics.log").read_text()
