"""``master status`` and ``master report`` on crawl state built directly in Redis."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from crawler.core.keys import CrawlKeys
from master.cli import main
from tests.support.cluster_crawl import worker_record

KEYS = CrawlKeys()


def add_worker(client: redis.Redis, record: dict[str, Any], live: bool) -> None:
    client.hset(KEYS.workers, record["worker"], json.dumps(record))
    if live:
        client.set(KEYS.alive(record["worker"]), "1", ex=60)


def run(capsys: pytest.CaptureFixture[str], redis_url: str, *args: str) -> tuple[int, str, str]:
    code = main(["--redis-url", redis_url, *args], prog="master")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def busy_crawl(redis_client: redis.Redis) -> redis.Redis:
    c = redis_client
    c.zadd(KEYS.requests, {b"r1": 0, b"r2": 0, b"r3": -1})
    c.rpush(KEYS.start_urls, '{"url":"https://a.example/"}', '{"url":"https://b.example/"}')
    c.sadd(KEYS.dupefilter, b"\x01" * 20, b"\x02" * 20, b"\xff" * 20, b"\x00" * 20)
    c.hset(KEYS.inflight("w1"), mapping={"lease1": "req", "lease2": "req"})
    c.hset(KEYS.inflight("w2"), mapping={"lease3": "req"})
    c.hset(KEYS.inflight("gone"), mapping={"lease4": "req"})
    c.hset(KEYS.stats, mapping={"items_stored": 120, "items_invalid": 4})
    c.rpush(KEYS.dead, json.dumps({"url": "https://a.example/x", "reason": "500"}))
    c.rpush(KEYS.invalid, json.dumps({"url": "https://a.example/y", "errors": ["name"]}))
    c.rpush(KEYS.invalid, json.dumps({"url": "https://a.example/z", "errors": ["price"]}))
    add_worker(c, worker_record("w1", pages=300, items=100, pages_per_min=180.0), live=True)
    add_worker(
        c, worker_record("w2", pages=50, items=20, pages_per_min=30.5, state="idle"), live=True
    )
    add_worker(c, worker_record("gone", pages=10, state="running"), live=False)
    return c


def test_status_json(
    capsys: pytest.CaptureFixture[str], redis_url: str, busy_crawl: redis.Redis
) -> None:
    code, out, err = run(capsys, redis_url, "status", "--json")
    assert code == 0, err
    status = json.loads(out)
    assert status["state"] == "running"
    assert status["paused"] is None
    assert status["queued_requests"] == 3
    assert status["pending_seeds"] == 2
    assert status["seen_fingerprints"] == 4
    assert status["in_flight"] == 4
    assert status["live_workers"] == 2
    assert status["known_workers"] == 3
    assert [w["worker"] for w in status["workers"]] == ["w1", "w2"]
    assert status["workers"][0]["pages_per_min"] == 180.0
    assert status["pages_per_min"] == 210.5
    assert status["items_stored"] == 120
    # one figure for the rejected items: the counter (4), of which 2 records are kept
    assert status["items_invalid"] == 4
    assert "invalid_items" not in status
    assert status["dead_letters"] == 1
    assert status["in_flight_held"] == 0  # not paused


def test_status_table(
    capsys: pytest.CaptureFixture[str], redis_url: str, busy_crawl: redis.Redis
) -> None:
    code, out, _ = run(capsys, redis_url, "status")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"crawl 'ecommerce' on {redis_url}: running"
    figures = {
        "queued requests": "3",
        "pending seeds": "2",
        "seen fingerprints": "4",
        "requests in flight": "4",
        "live workers": "2",
        "items stored": "120",
        "items invalid": "4",
        "dead letters": "1",
    }
    for label, value in figures.items():
        row = next(line for line in lines if line.strip().startswith(label))
        assert row.split()[len(label.split())] == value, row
    assert "210.50 pages/min" in out
    # the value column is aligned
    value_ends = {len(line.rstrip().split("  (")[0]) for line in lines[3:11]}
    assert len(value_ends) == 1, lines[3:11]
    # rejected items are one row, which says where to read them
    assert sum("invalid" in line for line in lines) == 1
    assert "items invalid" in lines[9] and "python -m master invalid" in lines[9]
    assert "held" not in out  # not paused: nothing is held
    header = next(line for line in lines if line.startswith("worker"))
    assert header.split() == ["worker", "host", "state", "pages", "items", "pages/min", "updated"]
    w1 = next(line for line in lines if line.startswith("w1 "))
    assert w1.split()[:6] == ["w1", "box", "running", "300", "100", "180.00"]
    # the worker whose heartbeat expired is not among the live ones: it is stale, below them
    stale_at = next(i for i, line in enumerate(lines) if line.startswith("stale worker"))
    assert not any(line.startswith("gone") for line in lines[:stale_at])
    assert lines[stale_at + 1].startswith("gone ")


def test_status_shows_stale_workers_with_since_when(
    capsys: pytest.CaptureFixture[str], redis_url: str, busy_crawl: redis.Redis
) -> None:
    """A worker whose heartbeat expired while its record says it runs is stale; one that
    finished is not, whatever its heartbeat."""
    last_report = time.time() - 95
    add_worker(busy_crawl, worker_record("gone", state="running", updated_at=last_report), False)
    add_worker(busy_crawl, worker_record("done", state="finished"), live=False)
    code, out, err = run(capsys, redis_url, "status", "--json")
    assert code == 0, err
    status = json.loads(out)
    (stale,) = status["stale_workers"]
    assert (stale["worker"], stale["host"], stale["state"]) == ("gone", "box", "running")
    assert stale["since"] == last_report and stale["stale_for"] >= 95
    assert status["live_workers"] == 2  # the live figures are as they were

    code, out, _ = run(capsys, redis_url, "status")
    lines = out.splitlines()
    assert "live workers" in out and "1 stale: below" in out
    header = next(line for line in lines if line.startswith("stale worker"))
    assert header.split() == ["stale", "worker", "host", "state", "no", "heartbeat", "since"]
    row = next(line for line in lines if line.startswith("gone "))
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last_report))
    assert row.split()[:3] == ["gone", "box", "running"] and since in row, row
    assert not any(line.startswith("done ") for line in lines)

    code, out, _ = run(capsys, redis_url, "report", "--json")
    rows = {w["worker"]: w for w in json.loads(out)["workers"]}
    assert rows["gone"]["stale"] and rows["gone"]["stale_since"] == last_report
    assert not rows["done"]["stale"] and not rows["w1"]["stale"]


def test_status_without_stale_workers_says_nothing_of_them(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    add_worker(redis_client, worker_record("w1"), live=True)
    code, out, _ = run(capsys, redis_url, "status")
    assert code == 0 and "stale" not in out


def test_status_paused(
    capsys: pytest.CaptureFixture[str], redis_url: str, busy_crawl: redis.Redis
) -> None:
    since = time.time() - 90
    busy_crawl.set(KEYS.paused, json.dumps({"since": since, "by": "ops@desk"}))
    _, out, _ = run(capsys, redis_url, "status", "--json")
    status = json.loads(out)
    assert status["state"] == "paused"
    assert status["paused"] == {"since": pytest.approx(since), "by": "ops@desk"}
    _, out, _ = run(capsys, redis_url, "status")
    assert out.splitlines()[0].startswith(f"crawl 'ecommerce' on {redis_url}: paused since ")
    assert "by ops@desk" in out.splitlines()[0]
    # the requests leased before the pause stay in flight, and status says they are held
    assert status["in_flight"] == 4
    assert status["in_flight_held"] == 4
    row = next(line for line in out.splitlines() if "requests in flight" in line)
    assert row.split()[3:] == ["4", "(held", "while", "paused)"], row
    # and it names a command that exists
    assert "resume with `python -m master resume`" in out


def test_invalid_items_without_kept_records(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    """VALIDATION_KEEP_INVALID off: counted, none kept; records without a counter: counted."""
    redis_client.hset(KEYS.stats, "items_invalid", 3)
    _, out, _ = run(capsys, redis_url, "status", "--json")
    assert json.loads(out)["items_invalid"] == 3
    redis_client.delete(KEYS.stats)
    redis_client.rpush(KEYS.invalid, json.dumps({"url": "https://a.example/y", "errors": []}))
    _, out, _ = run(capsys, redis_url, "status", "--json")
    assert json.loads(out)["items_invalid"] == 1


def test_status_states(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    def state() -> str:
        _, out, _ = run(capsys, redis_url, "status", "--json")
        return str(json.loads(out)["state"])

    assert state() == "idle"  # nothing at all yet
    redis_client.rpush(KEYS.start_urls, '{"url":"https://a.example/"}')
    assert state() == "idle"  # work waits, no worker
    add_worker(redis_client, worker_record("w1", state="idle"), live=True)
    assert state() == "idle"
    add_worker(redis_client, worker_record("w1", state="running"), live=True)
    assert state() == "running"
    redis_client.delete(KEYS.start_urls, KEYS.alive("w1"))
    add_worker(
        redis_client, worker_record("w1", state="finished", finished_at=time.time()), live=False
    )
    assert state() == "finished"


def test_status_tolerates_partial_records(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    redis_client.hset(KEYS.workers, mapping={"broken": "not json", "old": json.dumps({"pages": 5})})
    redis_client.set(KEYS.alive("old"), "1")
    redis_client.set(KEYS.paused, "yes")
    code, out, _ = run(capsys, redis_url, "status", "--json")
    assert code == 0
    status = json.loads(out)
    assert status["live_workers"] == 1
    assert status["workers"][0]["worker"] == "old"
    assert status["paused"]["since"] is None
    code, out, _ = run(capsys, redis_url, "report")
    assert code == 0
    assert "broken" in out and "old" in out


def test_spider_option_selects_other_keys(
    capsys: pytest.CaptureFixture[str], redis_url: str, busy_crawl: redis.Redis
) -> None:
    busy_crawl.zadd("books:requests", {b"x": 0})
    _, out, _ = run(capsys, redis_url, "status", "--json", "--spider", "books")
    status = json.loads(out)
    assert status["spider"] == "books"
    assert status["queued_requests"] == 1
    assert status["in_flight"] == 0


@pytest.fixture
def finished_crawl(redis_client: redis.Redis, tmp_path: Path) -> Path:
    store = tmp_path / "products.sqlite3"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE products (url TEXT PRIMARY KEY, data TEXT)")
        db.executemany("INSERT INTO products VALUES (?, '{}')", [(f"u{i}",) for i in range(17)])
    db.close()
    t0 = 1_800_000_000.0
    add_worker(
        redis_client,
        worker_record(
            "w1",
            state="finished",
            started_at=t0,
            updated_at=t0 + 130,
            finished_at=t0 + 130,
            elapsed=130.0,
            idle_tail=10.0,
            pages=600,
            items=400,
            pages_per_min=300.0,
            store=f"sqlite:{store}",
            finish_reason="finished",
        ),
        live=False,
    )
    add_worker(
        redis_client,
        worker_record(
            "w2",
            state="finished",
            started_at=t0 + 20,
            updated_at=t0 + 150,
            finished_at=t0 + 150,
            elapsed=130.0,
            idle_tail=30.0,
            pages=200,
            items=100,
            pages_per_min=120.0,
            store=f"sqlite:{store}",
            finish_reason="finished",
        ),
        live=False,
    )
    return store


def test_report_json(
    capsys: pytest.CaptureFixture[str], redis_url: str, finished_crawl: Path
) -> None:
    code, out, err = run(capsys, redis_url, "report", "--json")
    assert code == 0, err
    report = json.loads(out)
    w1, w2 = report["workers"]
    assert (w1["worker"], w1["elapsed"], w1["idle_tail"], w1["active"]) == (
        "w1",
        130.0,
        10.0,
        120.0,
    )
    assert (w1["pages"], w1["items"], w1["pages_per_min"]) == (600, 400, 300.0)
    assert (w2["active"], w2["pages_per_min"]) == (100.0, 120.0)
    total = report["total"]
    assert total["elapsed"] == 150.0  # first start (w1) to last end (w2)
    assert total["active"] == 120.0  # ... to the last moment of work (w1 at t0+120)
    assert total["idle_tail"] == 30.0
    assert (total["pages"], total["items"]) == (800, 500)
    assert total["pages_per_min"] == 400.0  # 800 pages in 2 active minutes
    assert report["stores"] == [
        {
            "store": f"sqlite:{finished_crawl}",
            "products": 17,
            "note": "",
            "path": str(finished_crawl.resolve()),
        }
    ]


def test_report_table(
    capsys: pytest.CaptureFixture[str], redis_url: str, finished_crawl: Path
) -> None:
    code, out, _ = run(capsys, redis_url, "report")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "worker",
        "state",
        "elapsed",
        "s",
        "idle",
        "tail",
        "s",
        "active",
        "s",
        "pages",
        "items",
        "pages/min",
    ]
    assert lines[1].split() == [
        "w1",
        "finished",
        "130.00",
        "10.00",
        "120.00",
        "600",
        "400",
        "300.00",
    ]
    assert lines[2].split() == [
        "w2",
        "finished",
        "130.00",
        "30.00",
        "100.00",
        "200",
        "100",
        "120.00",
    ]
    assert lines[3].split()[0] == "TOTAL"
    assert lines[3].split()[-6:] == ["150.00", "30.00", "120.00", "800", "500", "400.00"]
    assert len({len(line) for line in lines[:4]}) == 1  # right-aligned numbers end together
    assert f"products: sqlite:{finished_crawl} (17 products)" in lines


def test_report_store_elsewhere(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    add_worker(
        redis_client, worker_record("w1", store="sqlite:/nowhere/products.sqlite3"), live=True
    )
    add_worker(
        redis_client, worker_record("w2", store="postgresql://crawler:***@db:5432/shop"), live=True
    )
    _, out, _ = run(capsys, redis_url, "report")
    assert "products: postgresql://crawler:***@db:5432/shop" in out
    assert "products: sqlite:/nowhere/products.sqlite3 (not found on this machine)" in out


def test_report_without_workers(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    code, out, _ = run(capsys, redis_url, "report", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["workers"] == [] and report["total"]["pages"] == 0


def test_status_shows_sites_in_backoff_and_retries_waiting(
    capsys: pytest.CaptureFixture[str], redis_url: str, busy_crawl: redis.Redis
) -> None:
    from crawler.leasing.ledger import LeaseLedger
    from crawler.policy.politeness import SiteBudget

    ledger = LeaseLedger(busy_crawl, KEYS, "w1")
    ledger.push_delayed(30.0, b'{"url":"https://a.example/p/1"}')
    ledger.push_delayed(60.0, b'{"url":"https://a.example/p/2"}')
    budget = SiteBudget(busy_crawl, KEYS)
    budget.take_slot("a.example", 0.1)
    budget.cut("a.example", 0.1, pause=20.0, reason="HTTP 429")
    budget.take_slot("b.example", 0.5)  # at its budget: not in backoff

    code, out, err = run(capsys, redis_url, "status", "--json")
    assert code == 0, err
    status = json.loads(out)
    assert status["queued_requests"] == 3  # the waiting retries are not ready requests
    backoff = status["backoff"]
    assert backoff["retries_waiting"] == 2
    assert 28 <= backoff["next_retry_in"] <= 30
    assert backoff["site_rate_cuts"] == 1 and backoff["retries_delayed"] == 2
    [site] = backoff["sites"]
    assert site["site"] == "a.example" and site["rate"] == 5.0 and site["budget"] == 10.0
    assert site["cuts"] == 1 and site["reason"] == "HTTP 429"
    assert 18 <= site["paused_for"] <= 20

    code, out, _ = run(capsys, redis_url, "status")
    lines = out.splitlines()
    row = next(line for line in lines if line.strip().startswith("retries waiting"))
    assert row.split()[2] == "2" and "next due in" in row
    header = next(line for line in lines if line.startswith("site in backoff"))
    assert "req/s" in header and "budget" in header
    site_row = next(line for line in lines if line.startswith("a.example"))
    assert site_row.split()[:5] == ["a.example", "5", "10", "1", "HTTP"]
    assert not any(line.startswith("b.example") for line in lines)

    from prometheus_client import generate_latest

    from master.commands.metrics import build_registry

    text = generate_latest(build_registry(busy_crawl, KEYS)).decode()
    assert "crawl_retries_waiting 2.0" in text
    assert 'crawl_site_rate{site="a.example"} 5.0' in text
    assert "crawl_sites_in_backoff 1.0" in text
    assert "crawl_site_rate_cuts_total 1.0" in text
