"""crawler/core/records.py: each record's JSON is the one the workers and the master
always exchanged.

The literal JSON texts below are what the code wrote before the records had a
type (worker stats extension, lease tracker, rejected-item keeper, ``master
pause``); the encoders must reproduce them byte for byte, and the decoders must
read them, and what the master's readers always tolerated, back.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal
from typing import Any

import pytest
from scrapy import Spider
from scrapy.utils.test import get_crawler

from crawler.core.records import (
    DeadLetter,
    InvalidItem,
    MalformedRecord,
    PauseMarker,
    StatsFields,
    WorkerRecord,
    as_epoch,
    as_float,
    as_int,
    as_text,
)
from crawler.extensions.workerstats import WorkerStats
from crawler.pipelines import rejects
from crawler.schema import ValidationProblem

T0 = 1_800_000_000.0

# --- <spider>:workers -----------------------------------------------------------------

FINISHED_WORKER = (
    '{"worker": "w1", "host": "node-1", "pid": 4242, "state": "finished", '
    '"started_at": 1800000000.0, "updated_at": 1800000012.34, "finished_at": 1800000012.34, '
    '"store": "sqlite:data/products.sqlite3", "finish_reason": "finished", '
    '"elapsed": 12.34, "idle_tail": 5.01, "pages": 420, "items": 360, "pages_per_min": 3447.33}'
)
RUNNING_WORKER = (
    '{"worker": "w2", "host": "node-2", "pid": 7, "state": "running", '
    '"started_at": 1800000000.5, "updated_at": 1800000005.5, "finished_at": null, '
    '"store": "", "finish_reason": null, '
    '"elapsed": 5.0, "idle_tail": 0.0, "pages": 0, "items": 0, "pages_per_min": 0.0}'
)
WORKER_KEYS = [
    "worker",
    "host",
    "pid",
    "state",
    "started_at",
    "updated_at",
    "finished_at",
    "store",
    "finish_reason",
    "elapsed",
    "idle_tail",
    "pages",
    "items",
    "pages_per_min",
]


def finished_worker() -> WorkerRecord:
    return WorkerRecord(
        worker="w1",
        host="node-1",
        pid=4242,
        state="finished",
        started_at=T0,
        updated_at=T0 + 12.34,
        finished_at=T0 + 12.34,
        elapsed=12.34,
        idle_tail=5.01,
        pages=420,
        items=360,
        pages_per_min=3447.33,
        store="sqlite:data/products.sqlite3",
        finish_reason="finished",
    )


def test_worker_record_encodes_what_the_workers_wrote() -> None:
    assert finished_worker().encode() == FINISHED_WORKER
    running = WorkerRecord(
        worker="w2",
        host="node-2",
        pid=7,
        state="running",
        started_at=T0 + 0.5,
        updated_at=T0 + 5.5,
        elapsed=5.0,
    )
    assert running.encode() == RUNNING_WORKER


def test_worker_record_live_is_never_stored() -> None:
    live = finished_worker()
    live.live = True
    assert live.encode() == FINISHED_WORKER
    assert "live" not in json.loads(live.encode())


@pytest.mark.parametrize("raw", [FINISHED_WORKER, FINISHED_WORKER.encode()])
def test_worker_record_decodes_what_the_workers_wrote(raw: str | bytes) -> None:
    assert WorkerRecord.decode(raw, b"w1") == finished_worker()
    decoded = WorkerRecord.decode(raw, "w1", live=True)
    assert decoded.live and decoded.active == pytest.approx(7.33)


def test_worker_record_round_trip() -> None:
    record = finished_worker()
    assert WorkerRecord.decode(record.encode(), record.worker) == record
    again = WorkerRecord.decode(RUNNING_WORKER.encode(), b"w2", live=True)
    assert again.encode() == RUNNING_WORKER


def test_worker_record_tolerates_what_the_master_always_tolerated() -> None:
    # the hash field names the worker when the JSON does not; the JSON wins otherwise
    assert WorkerRecord.decode(b'{"pages": 3}', b"from-field").worker == "from-field"
    assert WorkerRecord.decode('{"worker": "w9"}', b"other").worker == "w9"
    # not an object: every figure at its default
    listed = WorkerRecord.decode(b"[1, 2]", b"w3")
    assert (listed.worker, listed.state, listed.pages, listed.started_at) == (
        "w3",
        "unknown",
        0,
        None,
    )
    # elapsed missing: up to now for a live worker, up to its last update otherwise
    partial = json.dumps({"started_at": T0, "updated_at": T0 + 30, "pages": 60})
    assert WorkerRecord.decode(partial, "w", live=False, now=T0 + 100).elapsed == 30.0
    bare = json.dumps({"started_at": T0, "pages": 60})
    assert WorkerRecord.decode(bare, "w", live=True, now=T0 + 120).elapsed == 120.0
    assert WorkerRecord.decode(bare, "w", live=True, now=T0 + 120).pages_per_min == 30.0
    assert WorkerRecord.decode(bare, "w", live=False, now=T0 + 120).elapsed == 0.0
    # a reason of another type is shown as text; null stays None
    assert WorkerRecord.decode('{"finish_reason": 3}', "w").finish_reason == "3"
    assert WorkerRecord.decode('{"finish_reason": null}', "w").finish_reason is None


class _Hash:
    """Just enough of a Redis client for ``WorkerStats.publish``."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], str] = {}

    def hset(self, key: str, field: str, value: str) -> int:
        self.values[(key, field)] = value
        return 1


class _Spider(Spider):
    name = "ecommerce"


def test_the_worker_stats_extension_writes_a_worker_record() -> None:
    settings = {"WORKER_ID": "w7", "REDIS_URL": "redis://127.0.0.1:1/0"}  # never connected
    crawler = get_crawler(_Spider, settings_dict=settings)
    extension = WorkerStats(crawler)
    extension.server = _Hash()  # type: ignore[assignment]
    extension.started_at = time.time() - 60
    crawler.stats.set_value("pages/parsed", 120)
    crawler.stats.set_value("item_scraped_count", 100)
    crawler.stats.set_value("store/location", "sqlite:/tmp/p.sqlite3")
    extension.publish(extension.record("finished", finished=True, reason="shutdown"))
    [((key, field), raw)] = extension.server.values.items()
    assert (key, field) == ("ecommerce:workers", "w7")
    assert list(json.loads(raw)) == WORKER_KEYS
    record = WorkerRecord.decode(raw.encode(), field)
    assert (record.worker, record.state, record.finish_reason) == ("w7", "finished", "shutdown")
    assert (record.pages, record.items, record.store) == (120, 100, "sqlite:/tmp/p.sqlite3")
    assert isinstance(json.loads(raw)["pid"], int) and record.finished_at is not None
    assert record.encode() == raw


# --- <spider>:dead --------------------------------------------------------------------


def as_the_tracker_wrote(
    url: str | None, reason: str, worker: str, at: float, payload: bytes | None, refused: bool
) -> str:
    """The dead letter as ``LeaseTracker.dead_letter`` built it before DeadLetter existed."""
    record: dict[str, Any] = {"url": url, "reason": reason, "worker": worker, "time": at}
    if refused:
        record["refused"] = True
    if payload is not None:
        record["request"] = payload.decode("utf-8", "replace")
    return json.dumps(record)


REQUEST = '{"url": "https://shop.example.com/p/1", "callback": "parse_product"}'
DEAD = (
    '{"url": "https://shop.example.com/p/1", "reason": "HTTP 503 after 3 retries", '
    '"worker": "w1", "time": 1800000000.25, "request": '
    '"{\\"url\\": \\"https://shop.example.com/p/1\\", \\"callback\\": \\"parse_product\\"}"}'
)


def test_dead_letter_encodes_what_the_tracker_wrote() -> None:
    letter = DeadLetter(
        url="https://shop.example.com/p/1",
        reason="HTTP 503 after 3 retries",
        worker="w1",
        time=T0 + 0.25,
        request=REQUEST,
    )
    assert letter.encode() == DEAD
    refused = DeadLetter(
        url="http://127.0.0.2/",
        reason="127.0.0.2 is a loopback address",
        worker="w2",
        time=T0,
        refused=True,
    )
    assert refused.encode() == (
        '{"url": "http://127.0.0.2/", "reason": "127.0.0.2 is a loopback address", '
        '"worker": "w2", "time": 1800000000.0, "refused": true}'
    )


@pytest.mark.parametrize("refused", [False, True])
@pytest.mark.parametrize("payload", [None, REQUEST.encode(), "é\u2603".encode()])
@pytest.mark.parametrize("url", [None, "https://shop.example.com/ü"])
def test_dead_letter_encoder_matches_the_tracker_in_every_case(
    url: str | None, payload: bytes | None, refused: bool
) -> None:
    letter = DeadLetter(
        url=url,
        reason="boom",
        worker="w1",
        time=T0,
        refused=refused,
        request=payload.decode("utf-8", "replace") if payload is not None else None,
    )
    wrote = as_the_tracker_wrote(url, "boom", "w1", T0, payload, refused)
    assert letter.encode() == wrote
    assert DeadLetter.decode(wrote.encode()) == letter  # and back


@pytest.mark.parametrize("raw", [DEAD, DEAD.encode()])
def test_dead_letter_decodes_what_the_tracker_wrote(raw: str | bytes) -> None:
    letter = DeadLetter.decode(raw)
    assert (letter.url, letter.reason, letter.worker, letter.time) == (
        "https://shop.example.com/p/1",
        "HTTP 503 after 3 retries",
        "w1",
        T0 + 0.25,
    )
    assert letter.request == REQUEST and letter.refused is False
    assert letter.as_dict() == json.loads(DEAD)


def test_dead_letter_tolerates_partial_and_odd_records() -> None:
    partial = DeadLetter.decode(b'{"reason": "no url at all", "worker": "w2"}')
    assert (partial.url, partial.request, partial.time) == (None, None, None)
    assert (partial.reason, partial.worker) == ("no url at all", "w2")
    odd = DeadLetter.decode('{"url": 5, "request": "", "reason": 503, "refused": "yes"}')
    assert (odd.url, odd.request, odd.reason, odd.refused, odd.worker) == (
        None,  # a url that is not text is no url (nothing to requeue)
        None,  # neither is an empty request
        "503",
        False,  # only true is true
        "",
    )
    # older records: the time as RFC 3339 text, kept as written
    texted = DeadLetter.decode('{"url": "https://a.example/", "time": "2026-11-22T03:00:00Z"}')
    assert texted.time == "2026-11-22T03:00:00Z"
    assert DeadLetter.decode('{"time": true}').time is None


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'"text"', b"\xff\xfe", b"", "null"])
def test_dead_letter_that_is_not_an_object_is_malformed(raw: bytes | str) -> None:
    with pytest.raises(MalformedRecord):
        DeadLetter.decode(raw)


# --- <spider>:invalid -----------------------------------------------------------------

NOW_TEXT = "2026-11-22T03:00:00.000+00:00"
INVALID = (
    '{"item": {"url": "https://shop.example.com/p/7", "name": "Kettle \\u00e9 \\ud800", '
    '"price": 9.5}, "errors": [{"field": "currency", "message": "\'currency\' is a required '
    'property"}, {"field": null, "message": "price needs a currency"}], "worker": "w3", '
    '"url": "https://shop.example.com/p/7", "time": "2026-11-22T03:00:00.000+00:00"}'
)
PROBLEMS = [
    ValidationProblem(field="currency", message="'currency' is a required property"),
    ValidationProblem(field=None, message="price needs a currency"),
]


def test_invalid_item_encodes_what_the_keeper_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rejects, "utc_now_text", lambda: NOW_TEXT)
    item = {
        "url": "https://shop.example.com/p/7",
        "name": "Kettle \u00e9 \ud800",  # a lone surrogate: kept escaped (ASCII JSON)
        "price": Decimal("9.50"),
    }
    assert rejects.invalid_record(item, PROBLEMS, "w3").encode() == INVALID

    class Odd:
        def __repr__(self) -> str:
            return "<Odd>"

    assert rejects.invalid_record(Odd(), [], "w3").encode() == (
        '{"item": "<Odd>", "errors": [], "worker": "w3", "url": null, '
        '"time": "2026-11-22T03:00:00.000+00:00"}'
    )


def test_invalid_item_keeps_values_that_are_not_json_as_text() -> None:
    record = InvalidItem(item={"price": Decimal("1.10"), "tags": "\u2603"}, errors=[], worker="w")
    assert record.encode() == (
        '{"item": {"price": "Decimal(\'1.10\')", "tags": "\\u2603"}, "errors": [], '
        '"worker": "w", "url": null, "time": null}'
    )


@pytest.mark.parametrize("raw", [INVALID, INVALID.encode()])
def test_invalid_item_decodes_what_the_keeper_wrote(raw: str | bytes) -> None:
    record = InvalidItem.decode(raw)
    assert record.url == "https://shop.example.com/p/7" and record.worker == "w3"
    assert record.time == NOW_TEXT
    assert record.errors == [problem.as_dict() for problem in PROBLEMS]
    assert record.item["name"] == "Kettle \u00e9 \ud800"
    assert record.encode() == INVALID  # round trip, byte for byte


def test_invalid_item_tolerates_older_records() -> None:
    # no url of its own: the item's; errors as a dict or a list of texts, kept as written
    older = InvalidItem.decode(
        b'{"item": {"url": "https://shop.example.com/p/8"}, "errors": {"price": ["not a number"]}}'
    )
    assert older.url == "https://shop.example.com/p/8"
    assert older.errors == {"price": ["not a number"]}
    assert (older.worker, older.time) == ("", None)
    epoch = InvalidItem.decode('{"item": "<repr>", "errors": ["a", "b"], "time": 1800000000}')
    assert (epoch.item, epoch.errors, epoch.time, epoch.url) == ("<repr>", ["a", "b"], T0, None)
    with pytest.raises(MalformedRecord):
        InvalidItem.decode(b"not json")


# --- <spider>:paused ------------------------------------------------------------------


def test_pause_marker_encodes_what_master_pause_wrote() -> None:
    marker = PauseMarker(since=T0 + 0.5, by="ops@control-1")
    assert marker.encode() == '{"since": 1800000000.5, "by": "ops@control-1"}'
    assert marker.encode() == json.dumps({"since": T0 + 0.5, "by": "ops@control-1"})


@pytest.mark.parametrize(
    ("raw", "since", "by"),
    [
        (b'{"since": 1800000000.5, "by": "ops@control-1"}', T0 + 0.5, "ops@control-1"),
        ('{"since": 1800000000.5, "by": "ops@control-1"}', T0 + 0.5, "ops@control-1"),
        (b'{"since": "1800000000", "by": null}', T0, ""),  # a numeric text; no one named
        (b'{"since": "yesterday"}', None, ""),
        (b"1", None, "1"),  # JSON, not an object: kept as text
        (b"set by hand", None, "set by hand"),
        (b"x" * 300, None, "x" * 200),
        (b"\xff", None, "\ufffd"),
    ],
)
def test_pause_marker_decodes_any_value(raw: bytes | str, since: float | None, by: str) -> None:
    assert PauseMarker.decode(raw) == PauseMarker(since=since, by=by)


def test_pause_marker_round_trip() -> None:
    marker = PauseMarker(since=time.time(), by="me@here")
    assert PauseMarker.decode(marker.encode().encode()) == marker
    assert marker.as_dict() == {"since": marker.since, "by": "me@here"}


# --- <spider>:stats and the tolerant helpers ------------------------------------------------


def test_stats_field_names() -> None:
    assert (
        StatsFields.ITEMS_STORED,
        StatsFields.ITEMS_INVALID,
        StatsFields.REQUESTS_REFUSED,
        StatsFields.POLITENESS_WAITS,
        StatsFields.POLITENESS_WAIT_MS,
    ) == (
        "items_stored",
        "items_invalid",
        "requests_refused",
        "politeness_waits",
        "politeness_wait_ms",
    )


def test_tolerant_helpers() -> None:
    assert as_text(b"w\xff1") == "w\ufffd1" and as_text(3) == "3"
    assert (as_float(b"2.5"), as_float("x"), as_float(True), as_float(float("nan"))) == (
        2.5,
        None,
        None,
        None,
    )
    assert (as_int(b"12"), as_int("12.9"), as_int(None)) == (12, 12, 0)
    assert as_epoch("2026-11-22T03:00:00Z") == as_epoch("2026-11-22T03:00:00") == 1795316400.0
    assert (as_epoch(T0), as_epoch("soon"), as_epoch(None)) == (T0, None, None)
