"""The retry policy: kinds, backoff with jitter, Retry-After, history."""

from __future__ import annotations

import random
from email.utils import formatdate

from scrapy.settings import Settings

from crawler.policy.retrypolicy import (
    HISTORY_META_KEY,
    OTHER,
    THROTTLE,
    RetryPolicy,
    describe_history,
    parse_retry_after,
)


def test_kinds_of_failure() -> None:
    policy = RetryPolicy()
    assert policy.status_kind(429) == THROTTLE
    assert policy.status_kind(503) == THROTTLE
    for status in (500, 502, 504, 408, 425):
        assert policy.status_kind(status) == OTHER
    for status in (400, 401, 403, 404, 410, 451):
        assert policy.status_kind(status) is None
    assert policy.max_retries(THROTTLE) > policy.max_retries(OTHER)


def test_backoff_doubles_up_to_the_cap_and_jitter_only_shortens() -> None:
    policy = RetryPolicy(backoff_base=1.0, backoff_max=10.0, jitter=0.5)
    rng = random.Random(7)
    for retry, full in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)]:
        waits = [policy.backoff(retry, rng) for _ in range(200)]
        assert all(full * 0.5 <= w <= full for w in waits)
        assert max(waits) - min(waits) > full * 0.3  # jittered, not one value
    assert RetryPolicy(jitter=0.0).backoff(3) == 4.0


def test_retry_after_in_seconds_or_as_an_http_date_is_honoured_and_capped() -> None:
    assert parse_retry_after(b"2") == 2.0
    assert parse_retry_after(" 120 ") == 120.0
    now = 1_800_000_000.0
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == 30.0
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert parse_retry_after(b"soon") is None
    assert parse_retry_after(None) is None
    policy = RetryPolicy(backoff_base=0.5, jitter=0.0, retry_after_max=60.0)
    assert policy.wait(1, retry_after=2.0) == 2.0
    assert policy.wait(1, retry_after=3600.0) == 60.0
    assert policy.wait(4, retry_after=1.0) == 4.0  # the backoff when it is longer


def test_history_is_kept_in_the_meta_and_bounded() -> None:
    policy = RetryPolicy(history_max=3)
    meta: dict[str, object] = {}
    for status in (429, 503, "DownloadTimeoutError", 429):
        policy.note(meta, status, 1.5)
    history = meta[HISTORY_META_KEY]
    assert isinstance(history, list) and len(history) == 3
    assert describe_history(history) == "503, DownloadTimeoutError, 429"
    assert history[-1]["wait"] == 1.5 and history[-1]["time"] > 0


def test_policy_from_settings() -> None:
    policy = RetryPolicy.from_settings(
        Settings({"RETRY_THROTTLE_TIMES": 3, "RETRY_HTTP_CODES": "500,429", "RETRY_TIMES": 1})
    )
    assert policy.throttle_times == 3 and policy.times == 1
    assert policy.status_kind(502) is None and policy.status_kind(500) == OTHER


def test_a_sites_rate_as_of_now_counts_the_steps_climbed_since_its_last_request() -> None:
    from crawler.policy.politeness import rate_now

    state = {"rate": 3.0, "ceiling": 6.0, "changed": 10_000, "step": 0.5, "step_ms": 5000}
    assert rate_now(state, 12_000) == 3.0
    assert rate_now(state, 20_000) == 4.0
    assert rate_now(state, 40_000) is None  # back at its budget
    assert rate_now({**state, "ceiling": 0.0}, 40_000) == 6.0  # no budget: no ceiling
    assert rate_now({"rate": 2.0}, 1e12) == 2.0  # written without its steps
