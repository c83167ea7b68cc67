"""``master dead`` (list, requeue, clear) and ``master invalid``."""

from __future__ import annotations

import json

import pytest
import redis

from crawler.core.keys import CrawlKeys
from crawler.scheduling.lanes import queued
from master.cli import main

KEYS = CrawlKeys()
REQUEST = json.dumps({"url": "https://shop.example.com/p/1", "callback": "parse_product"})
DEAD = [
    {
        "url": "https://shop.example.com/p/1",
        "reason": "HTTP 503 after 3 retries",
        "worker": "w1",
        "time": 1_800_000_000.0,
        "request": REQUEST,
    },
    {
        "url": "https://shop.example.com/c/2",
        "reason": "DNS lookup failed",
        "worker": "w2",
        "time": 1_800_000_100.0,
    },
    {"reason": "no url at all", "worker": "w2", "time": 1_800_000_200.0},
    {"url": "ftp://shop.example.com/x", "reason": "bad", "worker": "w2"},
]


def run(capsys: pytest.CaptureFixture[str], redis_url: str, *args: str) -> tuple[int, str, str]:
    code = main(["--redis-url", redis_url, *args], prog="master")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def dead(redis_client: redis.Redis) -> redis.Redis:
    redis_client.rpush(KEYS.dead, *[json.dumps(d) for d in DEAD], b"not json")
    return redis_client


def test_dead_list(capsys: pytest.CaptureFixture[str], redis_url: str, dead: redis.Redis) -> None:
    code, out, _ = run(capsys, redis_url, "dead")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "5 dead letter(s)"
    assert lines[1].split() == ["#", "time", "worker", "request", "reason", "url"]
    assert lines[2].split()[3:5] == ["w1", "yes"]
    assert lines[2].endswith("https://shop.example.com/p/1")
    assert "DNS lookup failed" in lines[3]
    assert "malformed record" in lines[6]

    code, out, _ = run(capsys, redis_url, "dead", "list", "--json", "--limit", "2", "--start", "1")
    listing = json.loads(out)
    assert listing["total"] == 5
    assert [r["index"] for r in listing["records"]] == [1, 2]
    assert listing["records"][0]["url"] == "https://shop.example.com/c/2"
    _, out, _ = run(capsys, redis_url, "dead", "--limit", "2")
    assert out.splitlines()[0] == "5 dead letter(s), showing 2"


def test_dead_requeue(
    capsys: pytest.CaptureFixture[str], redis_url: str, dead: redis.Redis
) -> None:
    dead.sadd(KEYS.seeded, "https://shop.example.com/c/2")  # requeue bypasses the seeded check
    code, out, err = run(capsys, redis_url, "dead", "requeue")
    assert code == 1  # three records could not be requeued
    assert out.strip() == (
        "requeued 2 dead letters: 1 requests to ecommerce:requests, 1 seeds to "
        "ecommerce:start_urls; 3 left in place, 3 remain."
    )
    assert err.splitlines() == [
        "dead letter #2 (no url) left in place: has neither 'request' nor 'url'",
        "dead letter #3 (ftp://shop.example.com/x) left in place: url is not a valid seed: "
        "scheme 'ftp' is not http or https",
        "dead letter #4 (no url) left in place: not a JSON object",
    ]
    assert dead.zrange(KEYS.requests, 0, -1, withscores=True) == [(REQUEST.encode(), 0.0)]
    assert dead.lrange(KEYS.start_urls, 0, -1) == [b'{"url":"https://shop.example.com/c/2"}']
    assert [json.loads(r)["reason"] for r in dead.lrange(KEYS.dead, 0, 1)] == [
        "no url at all",
        "bad",
    ]
    # requeueing again moves nothing twice
    code, out, _ = run(capsys, redis_url, "dead", "requeue", "--json")
    result = json.loads(out)
    assert (result["requeued"], result["remaining"]) == (0, 3)
    assert queued(dead, KEYS.requests) == 1


def test_dead_requeue_limit(
    capsys: pytest.CaptureFixture[str], redis_url: str, dead: redis.Redis
) -> None:
    code, _, _ = run(capsys, redis_url, "dead", "requeue", "--limit", "1")
    assert code == 0
    assert queued(dead, KEYS.requests) == 1
    assert dead.llen(KEYS.start_urls) == 0
    assert dead.llen(KEYS.dead) == 4


def test_dead_clear(capsys: pytest.CaptureFixture[str], redis_url: str, dead: redis.Redis) -> None:
    code, _, err = run(capsys, redis_url, "dead", "clear")
    assert code == 1
    assert "no terminal to ask on; pass --yes" in err
    assert dead.llen(KEYS.dead) == 5
    code, out, _ = run(capsys, redis_url, "dead", "clear", "--yes")
    assert code == 0
    assert out.strip() == "cleared 5 dead letters."
    assert dead.exists(KEYS.dead) == 0
    code, out, _ = run(capsys, redis_url, "dead", "clear", "--yes")
    assert (code, out.strip()) == (0, "no dead letters; nothing to clear.")


def test_invalid_list(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    older = [
        {
            "item": {"url": "https://shop.example.com/p/9", "name": ""},
            "errors": ["name: '' should be non-empty", "currency: required with a price"],
            "worker": "w1",
            "url": "https://shop.example.com/p/9",
            "time": 1_800_000_000,
        },
        {"item": {"url": "https://shop.example.com/p/8"}, "errors": {"price": ["not a number"]}},
    ]
    redis_client.rpush(KEYS.invalid, *[json.dumps(r) for r in older])
    # the workers' own format, newest first: errors as {field, message}, time as RFC 3339
    redis_client.lpush(
        KEYS.invalid,
        json.dumps(
            {
                "item": {"url": "https://shop.example.com/p/7", "name": "Kettle", "price": 9.5},
                "errors": [
                    {"field": "currency", "message": "'currency' is a required property"},
                    {"field": None, "message": "price needs a currency"},
                ],
                "worker": "w3",
                "url": "https://shop.example.com/p/7",
                "time": "2026-11-22T03:00:00Z",
            }
        ),
    )
    code, out, _ = run(capsys, redis_url, "invalid")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "3 invalid item(s)"
    assert lines[1].startswith("#0  2026-11-2")  # local time of the RFC 3339 text
    assert lines[1].endswith("w3  https://shop.example.com/p/7")
    assert lines[2] == "    currency: 'currency' is a required property; price needs a currency"
    assert lines[3].startswith("#1  ") and lines[3].endswith("w1  https://shop.example.com/p/9")
    assert lines[4] == "    name: '' should be non-empty; currency: required with a price"
    assert lines[5].endswith("-  https://shop.example.com/p/8")  # url taken from the item
    assert lines[6] == "    price: not a number"
    code, out, _ = run(capsys, redis_url, "invalid", "list", "--json", "--limit", "2")
    listing = json.loads(out)
    assert listing["total"] == 3
    assert [r["index"] for r in listing["records"]] == [0, 1]
    assert listing["records"][0]["time"] == "2026-11-22T03:00:00Z"  # records kept as written
    assert listing["records"][0]["errors"][0]["field"] == "currency"
    assert redis_client.llen(KEYS.invalid) == 3  # listing never removes anything
