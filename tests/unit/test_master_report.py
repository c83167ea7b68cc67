"""The master's pure parts: worker records, report arithmetic, crawl state, tables, stores."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from crawler.core.keys import CrawlKeys
from crawler.core.records import WorkerRecord
from master.inspection import build_report, crawl_state, describe_store, sqlite_path
from master.render import table
from master.seeding import SeedLoader

T0 = 1_800_000_000.0


def record(
    worker: str, live: bool = False, now: float = T0 + 1000, **fields: object
) -> WorkerRecord:
    data = {"worker": worker, "state": "finished", "started_at": T0, **fields}
    return WorkerRecord.decode(json.dumps(data).encode(), worker, live=live, now=now)


def test_record_tolerates_missing_and_malformed_fields() -> None:
    bare = WorkerRecord.decode(b"{}", b"w1")
    assert (bare.worker, bare.state, bare.pages, bare.elapsed, bare.started_at) == (
        "w1",
        "unknown",
        0,
        0.0,
        None,
    )
    junk = WorkerRecord.decode(b"\xff not json", b"w2")
    assert junk.worker == "w2" and junk.pages == 0
    odd = WorkerRecord.decode(
        json.dumps(
            {
                "pages": "12",
                "items": None,
                "elapsed": "NaN",
                "idle_tail": -5,
                "started_at": T0,
                "finished_at": T0 + 90,
                "pid": "x",
            }
        ),
        "w3",
    )
    assert (odd.pages, odd.items, odd.pid) == (12, 0, 0)
    assert odd.elapsed == 90.0  # computed from the timestamps when missing or unusable
    assert odd.idle_tail == 0.0
    assert odd.pages_per_min == 8.0


def test_idle_tail_never_exceeds_elapsed() -> None:
    w = record("w", elapsed=10.0, idle_tail=50.0)
    assert (w.idle_tail, w.active) == (10.0, 0.0)


def test_report_rows_and_totals() -> None:
    workers = [
        record("a", elapsed=120.0, idle_tail=20.0, finished_at=T0 + 120, pages=500, items=300),
        record(
            "b",
            elapsed=60.0,
            idle_tail=0.0,
            started_at=T0 + 30,
            finished_at=T0 + 90,
            pages=100,
            items=10,
        ),
    ]
    report = build_report(workers, now=T0 + 1000)
    a, b = report["workers"]
    assert (a["elapsed"], a["idle_tail"], a["active"], a["pages_per_min"]) == (
        120.0,
        20.0,
        100.0,
        300.0,
    )
    assert (b["active"], b["pages_per_min"]) == (60.0, 100.0)
    total = report["total"]
    assert (total["elapsed"], total["active"], total["idle_tail"]) == (120.0, 100.0, 20.0)
    assert (total["pages"], total["items"], total["pages_per_min"]) == (600, 310, 360.0)
    assert (total["started_at"], total["ended_at"]) == (T0, T0 + 120)


def test_report_live_worker_runs_until_now_and_lost_worker_until_its_last_update() -> None:
    now = T0 + 300
    live = record("live", live=True, now=now, state="running", elapsed=290.0, pages=290)
    lost = record("lost", state="running", elapsed=100.0, updated_at=T0 + 100, pages=50)
    assert lost.lost and not live.lost
    report = build_report([live, lost], now=now)
    assert report["total"]["elapsed"] == 300.0
    assert report["total"]["pages_per_min"] == 68.0  # 340 pages over 5 minutes


def test_report_of_nothing() -> None:
    report = build_report([], now=T0)
    assert report["total"]["pages"] == 0 and report["total"]["elapsed"] == 0.0
    assert report["stores"] == []


@pytest.mark.parametrize(
    ("live_states", "known", "waiting", "inflight", "expected"),
    [
        ([], 0, 0, 0, "idle"),
        ([], 0, 5, 0, "idle"),
        (["running"], 1, 5, 0, "running"),
        (["paused"], 1, 5, 0, "running"),  # just resumed: the worker catches up within a second
        (["idle"], 1, 0, 0, "idle"),
        (["idle"], 1, 0, 3, "running"),
        ([], 2, 0, 0, "finished"),
        ([], 2, 0, 4, "idle"),  # leases of dead workers wait for recovery
    ],
)
def test_crawl_state(
    live_states: list[str], known: int, waiting: int, inflight: int, expected: str
) -> None:
    live = [WorkerRecord(worker=f"w{i}", state=s, live=True) for i, s in enumerate(live_states)]
    assert crawl_state(False, live, known, waiting, 0, inflight)[0] == expected
    assert crawl_state(True, live, known, waiting, 0, inflight)[0] == "paused"


def test_sqlite_store_paths(tmp_path: Path) -> None:
    assert sqlite_path("sqlite:/data/p.sqlite3") == Path("/data/p.sqlite3")
    assert sqlite_path("sqlite:///data/p.sqlite3") == Path("/data/p.sqlite3")
    assert sqlite_path("sqlite:data/p.sqlite3") == Path("data/p.sqlite3")
    assert sqlite_path("postgresql://db/shop") is None
    db_path = tmp_path / "odd name?.sqlite3"
    with sqlite3.connect(db_path) as db:
        db.execute("CREATE TABLE products (url TEXT)")
        db.execute("INSERT INTO products VALUES ('u')")
    db.close()
    assert describe_store(f"sqlite:{db_path}")["products"] == 1
    empty = tmp_path / "empty.sqlite3"
    sqlite3.connect(empty).close()
    assert describe_store(f"sqlite:{empty}")["note"].startswith("cannot count products")
    assert describe_store("postgresql://u:secret@db/shop")["store"] == "postgresql://u:***@db/shop"


def test_table_alignment() -> None:
    text = table(["name", "n"], [("a", 1), ("longer", 100)], right=(1,))
    assert text.splitlines() == ["name      n", "a         1", "longer  100"]


def test_seed_loader_dry_run_numbers_lines_like_an_editor() -> None:
    errors = []
    loader = SeedLoader(None, CrawlKeys(), on_error=errors.append)
    data = b"https://a.example/\n\xff\xfe\nhttps://a.example/\x0bx\nhttps://a.example/\nftp://x\n"
    counts = loader.load_stream(io.BytesIO(data))
    assert (counts.accepted, counts.already_seeded, counts.rejected) == (1, 1, 3)
    assert [(e.lineno, e.reason.split(" (")[0]) for e in errors] == [
        (2, "not valid UTF-8"),
        (3, "URL contains whitespace or control characters"),
        (5, "scheme 'ftp' is not http or https"),
    ]


def test_seed_loader_reports_progress() -> None:
    seen = []
    loader = SeedLoader(
        None, CrawlKeys(), on_progress=lambda c: seen.append(c.lines), progress_every=3
    )
    loader.load_stream(io.BytesIO(b"".join(b"https://a.example/%d\n" % i for i in range(7))))
    assert seen == [3, 6]
