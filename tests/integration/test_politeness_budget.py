"""The shared site budget in Redis: slots spaced by the interval, whoever asks."""

from __future__ import annotations

import pytest

from crawler.extraction.profiles import ProfileError, SiteProfile
from crawler.keys import CrawlKeys
from crawler.politeness import SiteBudget, SiteWaits, site_interval
from master.durations import parse_duration, parse_since


def test_slots_are_spaced_for_all_callers(redis_client):
    keys = CrawlKeys()
    budgets = [SiteBudget(redis_client, keys) for _ in range(3)]  # three "workers"
    waits = [budgets[i % 3].reserve("shop.example:80", 0.5) for i in range(6)]
    # each caller is told to wait one more interval than the one before (Redis clock)
    assert waits[0] == 0
    for before, after in zip(waits, waits[1:], strict=False):
        assert after - before == pytest.approx(0.5, abs=0.05)
    # other sites are not held up
    assert budgets[0].reserve("other.example", 0.5) == 0
    ttl = redis_client.pttl(keys.polite("shop.example:80"))
    assert 0 < ttl <= 60_000 + 3_000
    stats = redis_client.hgetall(keys.stats)
    assert int(stats[b"politeness_waits"]) == 5


def test_interval_is_the_stricter_of_budget_and_crawl_delay():
    assert site_interval(4, None) == 0.25
    assert site_interval(4, 2.0) == 2.0
    assert site_interval(0, None) == 0
    assert site_interval(0, 0.5) == 0.5


def test_busy_sites_by_waiting_requests():
    waits = SiteWaits(max_waiting=2)
    waits.enter("shop.example")
    assert not waits.busy("http://www.shop.example/p/1")
    waits.enter("shop.example")
    assert waits.busy("http://www.shop.example/p/1")
    assert not waits.busy("http://other.example/")
    waits.leave("shop.example")
    assert not waits.busy("http://shop.example/p/2")
    assert not SiteWaits(max_waiting=0).busy("http://shop.example/")


def test_profile_max_rps():
    profile = SiteProfile.from_dict({"domains": ["shop.example"], "max_rps": 0.5})
    assert profile.max_rps == 0.5
    assert SiteProfile.from_dict({"domains": ["shop.example"]}).max_rps is None
    with pytest.raises(ProfileError, match="max_rps"):
        SiteProfile.from_dict({"domains": ["shop.example"], "max_rps": "fast"})


def test_durations():
    assert parse_duration("6h").total_seconds() == 6 * 3600
    assert parse_duration("90s").total_seconds() == 90
    assert parse_duration("2d").days == 2
    with pytest.raises(ValueError):
        parse_duration("6 hours")
    assert parse_since("2026-01-31T12:00").isoformat() == "2026-01-31T12:00:00+00:00"
    with pytest.raises(ValueError):
        parse_since("yesterday")
