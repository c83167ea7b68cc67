"""The demo shop's defences: a token bucket answering 429 + Retry-After, transient 503s."""

from __future__ import annotations

import urllib.error
import urllib.request

from demoshop.limits import ShopLimits
from demoshop.process import ShopProcess


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_token_bucket_answers_429_with_retry_after_over_the_rate() -> None:
    clock = Clock()
    limits = ShopLimits(rate_limit=4, retry_after=3, clock=clock)
    answers = [limits.check("/c/x/") for _ in range(6)]
    assert [a is None for a in answers] == [True] * 4 + [False] * 2  # a burst of 4, then 429
    refusal = answers[-1]
    assert refusal is not None and refusal.status == 429
    assert b"Retry-After: 3\r\n" in refusal.head
    clock.now += 0.5  # two tokens back
    assert [limits.check("/c/x/") is None for _ in range(3)] == [True, True, False]
    assert limits.check("/robots.txt") is None  # always served


def test_every_nth_product_page_fails_once_and_an_outage_fails_everything() -> None:
    limits = ShopLimits(fail_every=3)
    paths = [f"/p/item-{i}.html" for i in range(60)]
    first = {p for p in paths if limits.check(p) is not None}
    assert 5 < len(first) < 40  # about a third
    assert all(limits.check(p) is None for p in paths)  # only the first request fails
    assert limits.check("/c/books/") is None
    clock = Clock()
    outage = ShopLimits(outage_seconds=2, outage_after=1, clock=clock)
    assert outage.check("/") is None
    assert outage.check("/") is not None and outage.check("/p/a.html").status == 503  # type: ignore[union-attr]
    clock.now += 2.1
    assert outage.check("/") is None


def test_the_shop_process_serves_429_and_its_access_log_says_so() -> None:
    # one token, refilled after 100 s: whatever the machine's speed, the 2nd request is over
    with ShopProcess(products=5, rate_limit=0.01, retry_after=1) as shop:
        statuses = []
        for _ in range(4):
            try:
                with urllib.request.urlopen(shop.url) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
                assert exc.headers["Retry-After"] == "1"
        assert statuses == [200, 429, 429, 429]
        logged = [entry.status for entry in shop.wait_for_requests(4)]
        assert logged == statuses
