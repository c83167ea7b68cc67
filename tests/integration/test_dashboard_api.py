"""``master serve``'s JSON API on a real uvicorn, a real Redis and a real PostgreSQL.

Each route answers what the matching command answers (the same functions): the
seed summary of ``seed --json``, the export of ``export``, the dead letters of
``dead``; products page by cursor without repeating or skipping one while others
are inserted.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import DeadLetter, InvalidItem
from crawler.core.series import SeriesWriter
from crawler.pipelines.postgres import PostgresUpsertPipeline
from crawler.scheduling.lanes import queued
from master.cli import main
from master.inspection import gather_status
from tests.support.dashboard import DashboardServer, dashboard
from tests.support.products import make_crawler, make_product

KEYS = CrawlKeys()


@pytest.fixture
def server(redis_url: str) -> Iterator[DashboardServer]:
    with dashboard(redis_url) as running:
        yield running


@pytest.fixture
def api(server: DashboardServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url + "/api/v1", timeout=30) as client:
        yield client


def store_products(dsn: str, products: list[dict[str, Any]]) -> None:
    """Written by the workers' own PostgreSQL pipeline (which keeps the price history)."""
    crawler = make_crawler({"POSTGRES_DSN": dsn, "REDIS_URL": "redis://127.0.0.1:1/0"})
    pipeline = PostgresUpsertPipeline.from_crawler(crawler)
    result = pipeline.store_batch(products)
    assert len(result.stored) == len(products), result.rejected
    pipeline.disconnect()


SEEDS = "\n".join(
    [
        "http://127.0.0.1:8001/a",
        "# a comment",
        "http://127.0.0.1:8001/a",  # the same again
        '{"url": "http://127.0.0.1:8001/b", "meta": {"category": "chairs", "label": "x"}}',
        '{"url": "http://127.0.0.1:8001/c", "meta": {"colour": "red"}}',
        "ftp://127.0.0.1/file",
    ]
)


def test_seed_answers_as_the_command_does(
    api: httpx.Client,
    redis_url: str,
    redis_client: redis.Redis,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = api.post("/seeds", content=SEEDS, headers={"Content-Type": "text/plain"})
    assert answer.status_code == 200, answer.text
    summary = answer.json()
    assert (summary["accepted"], summary["already_seeded"], summary["rejected"]) == (2, 1, 2)
    assert [r["line"] for r in summary["rejected_lines"]] == [5, 6]
    assert "colour" in summary["rejected_lines"][0]["reason"]
    assert redis_client.llen(KEYS.start_urls) == 2
    status = api.get("/status").json()
    assert status["pending_seeds"] == 2 and status["seeded_urls"] == 2

    # the command, on an empty crawl, answers the very same object
    redis_client.flushdb()
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(SEEDS + "\n", encoding="utf-8")
    monkeypatch.setenv("ALLOW_PRIVATE_NETWORKS", "127.0.0.1")
    code = main(["--redis-url", redis_url, "seed", "--json", str(seeds)])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == summary

    # nothing valid: 422, and the reasons
    refused = api.post("/seeds", content="not a url\n", headers={"Content-Type": "text/plain"})
    assert refused.status_code == 422
    assert refused.json()["rejected_lines"][0]["line"] == 1
    # JSON lines are welcome as such; other bodies are not
    ndjson = api.post(
        "/seeds",
        content='{"url": "http://127.0.0.1:8001/d"}\n',
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert ndjson.json()["accepted"] == 1
    assert api.post("/seeds", json={"url": "x"}).status_code == 415


def test_seed_strategy_and_scope_through_the_api(
    api: httpx.Client, redis_client: redis.Redis
) -> None:
    """The form's strategy and scope fields travel as seed meta, validated as by the command."""
    lines = "\n".join(
        [
            '{"url": "http://127.0.0.1:8001/", "meta": {"strategy": "sitemap", "max_pages": 50}}',
            '{"url": "http://127.0.0.1:8001/c/", "meta": {"strategy": "pagination", '
            '"allow": "/c/", "deny": ["\\\\?sort="], "max_depth": 2}}',
            '{"url": "http://127.0.0.1:8001/x", "meta": {"strategy": "everything"}}',
            '{"url": "http://127.0.0.1:8001/y", "meta": {"allow": "("}}',
        ]
    )
    answer = api.post("/seeds", content=lines, headers={"Content-Type": "application/x-ndjson"})
    assert answer.status_code == 200, answer.text
    summary = answer.json()
    assert (summary["accepted"], summary["rejected"]) == (2, 2)
    reasons = {r["line"]: r["reason"] for r in summary["rejected_lines"]}
    assert "strategy" in reasons[3] and "everything" in reasons[3]
    assert "regex" in reasons[4]
    queued = [json.loads(raw) for raw in redis_client.lrange(KEYS.start_urls, 0, -1)]
    metas = sorted((seed["meta"] for seed in queued), key=lambda meta: meta["strategy"])
    assert metas[0]["strategy"] == "pagination" and metas[0]["max_depth"] == 2
    assert metas[1] == {"strategy": "sitemap", "max_pages": 50}


def test_status_pause_resume(api: httpx.Client, redis_client: redis.Redis) -> None:
    status = api.get("/status").json()
    expected = gather_status(redis_client, KEYS)
    assert set(status) == set(expected)
    assert status["state"] == "idle" and status["paused"] is None

    paused = api.post("/pause").json()
    assert paused["changed"] is True and paused["marker"]["by"].startswith("dashboard@")
    assert redis_client.exists(KEYS.paused)
    assert api.get("/status").json()["state"] == "paused"
    assert api.post("/pause").json()["changed"] is False  # idempotent, as the command

    resumed = api.post("/resume").json()
    assert resumed["changed"] is True
    assert not redis_client.exists(KEYS.paused)
    assert api.get("/status").json()["state"] == "idle"
    assert api.post("/resume").json()["changed"] is False


def test_workers_and_series(api: httpx.Client, redis_client: redis.Redis) -> None:
    record = {
        "worker": "w1",
        "host": "h",
        "state": "running",
        "pages": 12,
        "items": 5,
        "started_at": time.time() - 60,
        "updated_at": time.time(),
    }
    redis_client.hset(KEYS.workers, "w1", json.dumps(record))
    redis_client.set(KEYS.alive("w1"), 1, ex=30)
    workers = api.get("/workers").json()["workers"]
    assert [(w["worker"], w["pages"], w["items"], w["live"]) for w in workers] == [
        ("w1", 12, 5, True)
    ]
    assert not workers[0]["stale"] and workers[0]["stale_since"] is None
    assert api.get("/status").json()["stale_workers"] == []
    # its heartbeat expires while its record says it runs: stale, since its last report
    redis_client.delete(KEYS.alive("w1"))
    (w1,) = api.get("/workers").json()["workers"]
    assert w1["stale"] and w1["stale_since"] == record["updated_at"]
    (stale,) = api.get("/status").json()["stale_workers"]
    assert (stale["worker"], stale["state"]) == ("w1", "running")
    assert stale["since"] == record["updated_at"]
    assert stale["stale_for"] >= 0
    redis_client.set(KEYS.alive("w1"), 1, ex=30)  # beating again

    writer = SeriesWriter(redis_client, KEYS, minutes=60)
    now = time.time()
    writer.add(pages=30, items=10, now=now - 120)  # two minutes ago
    writer.add(pages=50, items=14, now=now)  # 20 pages, 4 items this minute
    points = api.get("/series", params={"minutes": 60}).json()["points"]
    assert len(points) == 60
    assert (points[-1]["pages"], points[-1]["items"]) == (20, 4)
    assert (points[-3]["pages"], points[-3]["items"]) == (30, 10)
    # bounded: a minute older than the window is dropped at the next write
    writer.add(pages=51, items=14, now=now + 3600)
    assert redis_client.hlen(KEYS.series) == 1
    assert redis_client.ttl(KEYS.series) > 0


def test_the_series_is_trimmed_by_a_writers_first_write_of_a_minute(
    redis_client: redis.Redis,
) -> None:
    """Older minutes are deleted once a minute per writer, not at every write."""
    writer = SeriesWriter(redis_client, KEYS, minutes=60)
    now = 1_800_000_000.0  # a minute's start
    minute = int(now // 60)
    redis_client.hset(KEYS.series, f"{minute - 90}:p", 7)  # older than the window
    writer.add(pages=1, items=0, now=now)  # the first write of this minute trims
    assert not redis_client.hexists(KEYS.series, f"{minute - 90}:p")
    redis_client.hset(KEYS.series, f"{minute - 91}:p", 7)
    writer.add(pages=2, items=0, now=now + 30)  # the same minute: no trim
    assert redis_client.hexists(KEYS.series, f"{minute - 91}:p")
    writer.add(pages=3, items=0, now=now + 60)  # the next minute's first write
    assert not redis_client.hexists(KEYS.series, f"{minute - 91}:p")
    assert [int(redis_client.hget(KEYS.series, f"{m}:p") or 0) for m in (minute, minute + 1)] == [
        2,
        1,
    ]


def test_products_page_by_cursor_across_inserts(redis_url: str, postgres_dsn: str) -> None:
    store_products(postgres_dsn, [make_product(i) for i in range(10, 35)])  # 25 products
    seen: list[str] = []
    with (
        dashboard(redis_url, postgres_dsn=postgres_dsn) as server,
        httpx.Client(timeout=30) as client,
    ):
        page = client.get(f"{server.url}/api/v1/products", params={"limit": 10}).json()
        assert len(page["items"]) == 10
        seen += [p["url"] for p in page["items"]]
        # workers insert meanwhile: before the cursor and after it
        store_products(
            postgres_dsn,
            [make_product(1, name="Early"), make_product(99, name="Late")],
        )
        while page["next"]:
            assert parse_qs(urlsplit(page["next"]).query)["limit"] == ["10"]
            page = client.get(page["next"]).json()
            seen += [p["url"] for p in page["items"]]
        assert len(seen) == len(set(seen)), "a product was shown twice"
        originals = {make_product(i)["url"] for i in range(10, 35)}
        assert originals <= set(seen), "a product was skipped"
        assert make_product(99)["url"] in seen  # inserted after the cursor: shown
        assert seen == sorted(seen)

        def urls(**params: Any) -> list[str]:
            answer = client.get(f"{server.url}/api/v1/products", params={"limit": 100, **params})
            assert answer.status_code == 200, answer.text
            return [p["url"] for p in answer.json()["items"]]

        assert urls(q="early") == [make_product(1)["url"]]
        assert urls(q="%") == []  # a wildcard is a character, not a pattern
        assert len(urls(site="shop.example")) == 27
        assert urls(site="other.example") == []
        store_products(postgres_dsn, [make_product(12, availability="OutOfStock")])
        assert urls(availability="OutOfStock") == [make_product(12)["url"]]
        assert client.get(f"{server.url}/api/v1/products?availability=Maybe").status_code == 422
        assert client.get(f"{server.url}/api/v1/products?cursor=%%%").status_code == 400

        # the price history the pipeline kept
        store_products(postgres_dsn, [make_product(11, price=Decimal("5.00"))])
        history = client.get(
            f"{server.url}/api/v1/products/history", params={"url": make_product(11)["url"]}
        ).json()["history"]
        assert [h["price"] for h in history] == [21.99, 5.0]


def test_export_streams_what_the_command_writes(
    redis_url: str, postgres_dsn: str, tmp_path: Path
) -> None:
    store_products(postgres_dsn, [make_product(i) for i in range(1, 8)])
    with (
        dashboard(redis_url, postgres_dsn=postgres_dsn) as server,
        httpx.Client(timeout=30) as client,
    ):
        for fmt in ("csv", "jsonl"):
            with client.stream("GET", f"{server.url}/api/v1/export?format={fmt}") as answer:
                assert answer.status_code == 200
                assert "attachment" in answer.headers["content-disposition"]
                assert "content-length" not in answer.headers  # streamed, not built first
                body = b"".join(answer.iter_bytes()).decode("utf-8")
            out = tmp_path / f"products.{fmt}"
            assert (
                main(
                    [
                        "export",
                        "--postgres-dsn",
                        postgres_dsn,
                        "--format",
                        fmt,
                        "--out",
                        str(out),
                        "--no-progress",
                    ]
                )
                == 0
            )
            assert body == out.read_bytes().decode("utf-8")
            if fmt == "csv":
                rows = list(csv.reader(io.StringIO(body)))
                assert len(rows) == 8 and rows[0][0] == "url"
        lines = body.splitlines()
        assert len(lines) == 7 and json.loads(lines[0])["url"] == make_product(1)["url"]


def test_dead_letters_grouped_requeued_and_cleared(
    api: httpx.Client, redis_client: redis.Redis
) -> None:
    letters = [
        DeadLetter(
            url=f"http://127.0.0.1:8001/p{i}",
            reason=reason,
            worker="w1",
            time=1.0,
            request=json.dumps({"url": f"http://127.0.0.1:8001/p{i}"}) if i % 2 else None,
        )
        for i, reason in enumerate(["HTTP 500"] * 3 + ["DNS lookup failed"] * 2)
    ]
    for letter in letters:
        redis_client.rpush(KEYS.dead, letter.encode())
    groups = api.get("/dead/reasons").json()
    assert groups == {
        "total": 5,
        "reasons": [
            {"reason": "HTTP 500", "count": 3},
            {"reason": "DNS lookup failed", "count": 2},
        ],
    }
    listed = api.get("/dead", params={"reason": "DNS lookup failed"}).json()
    assert listed["total"] == 2 and [r["index"] for r in listed["records"]] == [3, 4]
    assert api.get("/dead").json()["total"] == 5

    requeued = api.post("/dead/requeue", json={"reason": "HTTP 500"}).json()
    assert (requeued["requeued"], requeued["requests"], requeued["seeds"]) == (3, 1, 2)
    assert requeued["remaining"] == 2
    assert queued(redis_client, KEYS.requests) == 1 and redis_client.llen(KEYS.start_urls) == 2

    assert api.post("/dead/clear", json={"reason": "nothing like it"}).json() == {"cleared": 0}
    assert api.post("/dead/clear", json={"reason": "DNS lookup failed"}).json() == {"cleared": 2}
    assert redis_client.llen(KEYS.dead) == 0


def test_invalid_items_with_their_errors(api: httpx.Client, redis_client: redis.Redis) -> None:
    item = InvalidItem(
        item={"url": "http://127.0.0.1:8001/x", "name": ""},
        errors=[
            {"field": "name", "message": "'' should be non-empty"},
            {"field": "currency", "message": "'currency' is a required property"},
        ],
        worker="w1",
        url="http://127.0.0.1:8001/x",
        time="2026-11-24T00:00:00Z",
    )
    redis_client.rpush(KEYS.invalid, item.encode())
    listing = api.get("/invalid").json()
    assert listing["total"] == 1
    assert [e["field"] for e in listing["records"][0]["errors"]] == ["name", "currency"]


def test_openapi_document_lists_the_contract(api: httpx.Client) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for path, method in [
        ("/api/v1/status", "get"),
        ("/api/v1/workers", "get"),
        ("/api/v1/sites", "get"),
        ("/api/v1/seeds", "post"),
        ("/api/v1/pause", "post"),
        ("/api/v1/resume", "post"),
        ("/api/v1/dead", "get"),
        ("/api/v1/dead/requeue", "post"),
        ("/api/v1/invalid", "get"),
        ("/api/v1/products", "get"),
        ("/api/v1/products/history", "get"),
        ("/api/v1/export", "get"),
    ]:
        assert method in paths[path], path
    assert set(paths["/api/v1/products"]["get"]["parameters"][i]["name"] for i in range(5)) >= {
        "q",
        "site",
        "availability",
        "limit",
        "cursor",
    }


def test_what_needs_a_browser(
    api: httpx.Client, redis_client: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sites that need a browser and the pages waiting for one: the API's ``/sites``,
    ``status --sites`` and the status (which counts them as work left)."""
    from crawler.browser.sites import BrowserSites
    from crawler.scheduling.lanes import push_requests

    BrowserSites(redis_client, KEYS.browser_sites, "w1", 0).remember("http://shop.test/app/c/x")
    push_requests(redis_client, KEYS.browser_requests, {
        json.dumps({"u": f"http://shop.test/app/p/{i}", "m": {"playwright": True}}).encode(): 0
        for i in range(3)
    })
    push_requests(redis_client, KEYS.browser_requests, {b'{"u": "http://b.test/p/1"}': -1})
    browser = api.get("/sites").json()["browser"]
    assert [(s["scope"], s["worker"]) for s in browser["scopes"]] == [("shop.test/app/", "w1")]
    assert browser["waiting"] == 4
    assert browser["waiting_by_site"] == {"shop.test": 3, "b.test": 1}
    status = api.get("/status").json()
    assert status["browser_queued"] == 4 and status["queued_requests"] == 0
    assert status["state"] == "idle" and "start workers" in status["detail"]  # not finished
    assert main(["--redis-url", redis_url, "status", "--sites"]) == 0
    shown = capsys.readouterr().out
    assert "waiting for a browser" in shown and "shop.test/app/" in shown
    assert "pages waiting for a browser: 4: shop.test 3, b.test 1" in shown
