"""``python -m master bench`` on a tiny shop: table, JSON and chart (no speed asserts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from demoshop.catalog import Catalog
from demoshop.sitemaps import sitemap_paths
from tools.workers import ROOT

pytestmark = pytest.mark.workers

PRODUCTS = 30


def test_bench_writes_table_json_and_chart(tmp_path: Path) -> None:
    output = tmp_path / "out"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "master",
            "bench",
            "--products",
            str(PRODUCTS),
            "--latency-ms",
            "5",
            "--workers",
            "1",
            "2",
            "--output",
            str(output),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    catalog = Catalog.build(products=PRODUCTS)
    pages = len(catalog.crawlable_paths()) + len(sitemap_paths(catalog))  # sitemaps are pages

    data = json.loads((output / "bench.json").read_text())
    assert data["setup"]["products"] == PRODUCTS
    runs = data["runs"]
    assert [(run["mode"], run["workers"]) for run in runs] == [
        ("reliable", 1),
        ("reliable", 2),
        ("memory", 1),
        ("scrapy-redis", 1),
    ]
    for run in runs:
        # every page crawled once, every product extracted, at most one robots.txt per worker
        assert run["pages"] == pages, run
        assert run["items"] == PRODUCTS, run
        assert pages + 1 <= run["shop_requests"] <= pages + run["workers"], run
        assert 0 < run["elapsed"] < 300
        assert run["pages_per_s"] == pytest.approx(run["pages"] / run["elapsed"], rel=0.01)
        assert run["cpu_ms_per_page"] > 0
        assert 20 < run["peak_rss_mb"] < 2000
        assert run["redis_commands_per_page"] > 0
        assert run["round_trips_per_page"] > 0
        assert run["redis_commands_per_page"] == pytest.approx(
            sum(run["commands"].values()) / run["pages"], rel=0.01
        )
    # the shop served every run's pages while the workers ran; Redis ran their queue
    for run in runs:
        assert run["shop_cpu_ms_per_page"] >= 0 and run["redis_cpu_ms_per_page"] >= 0, run
    assert sum(run["shop_cpu_ms_per_page"] * run["pages"] for run in runs) > 0
    one, two = runs[0], runs[1]
    assert one["speedup"] == 1.0 and one["efficiency"] == 1.0
    assert two["speedup"] == pytest.approx(two["pages_per_s"] / one["pages_per_s"], rel=0.01)
    assert two["efficiency"] == pytest.approx(two["speedup"] / 2, rel=0.01)
    # the distributed rows queue through Redis (in scripts: fewer round trips than
    # commands); the in-memory reference does not
    assert one["round_trips_per_page"] < one["redis_commands_per_page"]
    assert "evalsha" in runs[0]["commands"]
    assert {"zadd", "exec", "sadd"} <= set(runs[3]["commands"])  # stock MULTI/EXEC pops
    assert runs[2]["commands"].get("zadd", 0) == 0

    png = (output / "bench.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000

    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("run "))
    assert "pages/s" in lines[header] and "round trips/page" in lines[header]
    assert "shop+Redis CPU ms/page" in lines[header]
    rows = lines[header + 1 : header + 5]
    assert [row.split("  ")[0].strip() for row in rows] == [
        "this crawler",
        "this crawler",
        "Scrapy in-memory scheduler",
        "stock scrapy-redis",
    ]
    assert all(f" {pages} " in row for row in rows)
    assert "vs stock scrapy-redis" in result.stdout
    assert "done: reliable x2" in result.stderr  # progress and completion on stderr
