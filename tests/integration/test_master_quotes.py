"""The master's commands and API with ``--spider finance``: export, recrawl rounds, serve.

Real Redis, the real embedded SQLite quote store written by the workers' pipeline,
the real CLI (in-process, and a subprocess for Ctrl-C), a real uvicorn.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
import redis
from scrapy import Spider
from scrapy.utils.test import get_crawler

from crawler.core.keys import CrawlKeys
from crawler.pipelines.quotes.embedded import EmbeddedQuotePipeline
from crawler.scheduling.lanes import queued
from master.cli import main
from master.commands.export import QUOTE_CSV_FIELDS
from tests.support.dashboard import dashboard
from tools.workers import ROOT

FINANCE, ECOMMERCE = CrawlKeys("finance"), CrawlKeys("ecommerce")
T0 = dt.datetime(2025, 3, 10, 16, 0, tzinfo=dt.UTC)


class FinanceSpider(Spider):
    name = "finance"


def quote(url: str, symbol: str, price: str, when: dt.datetime) -> dict:
    return {
        "url": url,
        "symbol": symbol,
        "price": Decimal(price),
        "currency": "EUR",
        "volume": 10,
        "as_of": when.isoformat(),
        "provenance": {"price": "label"},
        "crawled_at": "2026-01-05T12:00:00+00:00",
        "worker": "w1",
    }


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Three quote pages and two rows of one CSV endpoint, two observations of the first."""
    path = tmp_path / "store.sqlite3"
    crawler = get_crawler(
        FinanceSpider,
        settings_dict={
            "EMBEDDED_STORE_PATH": str(path),
            "EXTENSIONS": {"crawler.core.flow.FlowControl": 10},
        },
    )
    pipeline = EmbeddedQuotePipeline.from_crawler(crawler)
    rows = [quote(f"http://127.0.0.1:8001/q/{s}.html", s, "10.5", T0) for s in ("A", "B", "C")]
    rows += [quote(f"http://127.0.0.1:8001/quotes.csv#{s}", s, "3", T0) for s in ("D", "E")]
    rows.append(quote("http://127.0.0.1:8001/q/A.html", "A", "11", T0 + dt.timedelta(hours=1)))
    assert len(pipeline.store_batch(rows).stored) == 6
    pipeline.disconnect()
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_export_streams_the_quotes_or_their_history(store, redis_url, capsys) -> None:
    base = ("--redis-url", redis_url, "--spider", "finance", "export", "--store-path", str(store))
    code, out, err = run(capsys, *base, "--format", "csv")
    assert code == 0, err
    table = list(csv.DictReader(io.StringIO(out)))
    assert tuple(table[0]) == QUOTE_CSV_FIELDS and len(table) == 5
    assert [(r["symbol"], r["price"]) for r in table][:1] == [("A", "11.0")]
    assert "exported 5 quotes" in err
    code, out, err = run(capsys, *base, "--history", "--format", "jsonl")
    observations = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(observations) == 6 and "exported 6 observations" in err
    assert [o["price"] for o in observations if o["symbol"] == "A"] == [10.5, 11.0]
    code, _, err = run(capsys, "--redis-url", redis_url, "export", "--history")
    assert code == 2 and "have no observations" in err


def test_recrawl_rounds_queue_each_page_once_past_the_dupefilter(
    store, redis_url, redis_client: redis.Redis, capsys
) -> None:
    code, out, err = run(
        capsys,
        "--redis-url",
        redis_url,
        "--spider",
        "finance",
        "recrawl",
        "--every",
        "1s",
        "--older-than",
        "0s",
        "--rounds",
        "2",
        "--store-path",
        str(store),
    )
    assert code == 0, err
    rounds = [line for line in out.splitlines() if " round " in line]
    assert "queued 4 of 4 pages of quotes" in rounds[0]  # the endpoint's two rows: one page
    assert "queued 0 of 4 pages" in rounds[1] and "(4 were queued already)" in rounds[1]
    assert queued(redis_client, FINANCE.requests) == 4
    assert not list(redis_client.scan_iter(ECOMMERCE.all_pattern))  # no key of the other
    payloads = [json.loads(p) for p in redis_client.zrange(FINANCE.requests, 0, -1)]
    urls = sorted(p.get("u") or p.get("url") for p in payloads)
    assert urls[0] == "http://127.0.0.1:8001/q/A.html"
    assert "http://127.0.0.1:8001/quotes.csv" in urls


def test_recrawl_every_runs_until_ctrl_c(store: Path, redis_url: str) -> None:
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "master",
            "--spider",
            "finance",
            "recrawl",
            "--every",
            "1h",
            "--store-path",
            str(store),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # the first round runs at once
        assert " round 1: queued " in first, process.stderr.read() if process.stderr else ""
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "stopped after 1 rounds" in out and "Traceback" not in err


@pytest.fixture
def api(redis_url: str, store: Path) -> Iterator[httpx.Client]:
    with dashboard(redis_url, store_path=str(store)) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            yield client


def test_the_api_and_the_dashboard_show_each_spider(api: httpx.Client, redis_client) -> None:
    redis_client.hset(FINANCE.stats, "items_stored", 5)
    redis_client.rpush(FINANCE.dead, json.dumps({"url": "http://x/", "reason": "HTTP 500"}))
    assert api.get("/api/v1/status").json()["spider"] == "ecommerce"
    status = api.get("/api/v1/status", params={"spider": "finance"}).json()
    assert (status["spider"], status["items_stored"], status["dead_letters"]) == ("finance", 5, 1)
    crawls = {c["spider"]: c for c in api.get("/api/v1/spiders").json()["spiders"]}
    assert crawls["finance"]["items"] == "quotes" and crawls["finance"]["items_stored"] == 5
    assert crawls["ecommerce"]["items_stored"] == 0
    page = api.get("/api/v1/quotes", params={"q": "a", "limit": 10}).json()
    assert [q["symbol"] for q in page["items"]] == ["A"] and page["next"] is None
    history = api.get(
        "/api/v1/quotes/history", params={"url": "http://127.0.0.1:8001/q/A.html"}
    ).json()["history"]
    assert [h["price"] for h in history] == [10.5, 11.0]
    export = api.get(
        "/api/v1/export", params={"spider": "finance", "format": "csv", "history": "true"}
    )
    assert export.status_code == 200 and len(export.text.splitlines()) == 7
    assert api.get("/api/v1/export", params={"history": "true"}).status_code == 400
    assert api.get("/api/v1/status", params={"spider": "no such/thing"}).status_code == 422
    page = api.get("/", params={"spider": "finance"}).text
    assert 'data-kind="quote"' in page and 'aria-current="page">finance' in page
    assert "<h2>Quotes</h2>" in page
