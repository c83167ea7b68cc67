"""The shared site budget in Redis: slots spaced by the interval, whoever asks."""

from __future__ import annotations

import pytest

from crawler.core.keys import CrawlKeys
from crawler.extraction.profiles import ProfileError, SiteProfile
from crawler.policy.politeness import SiteBudget, SiteWaits, site_interval
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


def test_a_cut_slows_every_caller_at_once_pauses_the_site_and_climbs_back(redis_client):
    from crawler.policy.politeness import BackoffRule, read_site_state

    keys = CrawlKeys()
    rule = BackoffRule(factor=0.5, cooldown=5.0, min_rps=0.5, step_rps=5.0, step_interval=0.4)
    a, b = SiteBudget(redis_client, keys, rule), SiteBudget(redis_client, keys, rule)
    site = "shop.example:80"
    assert a.reserve(site, 0.05) == 0  # budget 20 req/s
    cut = a.cut(site, 0.05, pause=0.3, reason="HTTP 429")
    assert cut.cut and cut.before == 20.0 and cut.after == 10.0
    # a second 429 of the same burst (within the cooldown) does not cut again
    assert not b.cut(site, 0.05, pause=0.0, reason="HTTP 429").cut
    state = read_site_state(redis_client.get(keys.polite(site)))
    assert state is not None and state["rate"] == 10.0 and state["cuts"] == 1
    assert state["reason"] == "HTTP 429" and state["ceiling"] == 20.0
    # the other worker's next slot waits for the pause, then they are spaced at 10 req/s
    first = b.take_slot(site, 0.05)
    assert 0.2 <= first.wait <= 0.31 and first.rate == 10.0
    second = a.take_slot(site, 0.05)
    assert second.wait - first.wait == pytest.approx(0.1, abs=0.02)
    # no more failures: it climbs back 5 req/s per 0.4 s, and is at its budget again
    import time

    time.sleep(0.3 + 0.4 * 2 + 0.1)
    slot = b.take_slot(site, 0.05)
    assert slot.restored and slot.rate == 0.0
    assert redis_client.get(keys.polite(site)).isdigit()  # a plain next-slot again
    stats = redis_client.hgetall(keys.stats)
    assert int(stats[b"site_rate_cuts"]) == 1 and int(stats[b"site_rate_restores"]) == 1


def test_a_site_without_budget_is_cut_to_the_start_rate_and_never_below_the_floor(redis_client):
    from crawler.policy.politeness import BackoffRule

    keys = CrawlKeys()
    rule = BackoffRule(factor=0.5, cooldown=0.0, min_rps=1.0, start_rps=4.0)
    budget = SiteBudget(redis_client, keys, rule)
    assert budget.cut("free.example", 0.0, 0.0, "HTTP 503").after == 4.0
    assert budget.cut("free.example", 0.0, 0.0, "HTTP 503").after == 2.0
    assert budget.cut("free.example", 0.0, 0.0, "HTTP 503").after == 1.0
    assert budget.cut("free.example", 0.0, 0.0, "HTTP 503").after == 1.0
    # the Crawl-delay stays a floor of the interval: 2 s although the rate allows 1 s
    budget.take_slot("slow.example", 2.0)
    budget.cut("slow.example", 2.0, 0.0, "HTTP 429")  # 0.5 req/s is below the floor already
    first = budget.take_slot("slow.example", 2.0)
    assert first.wait == pytest.approx(2.0, abs=0.05)


def test_budgets_that_are_not_whole_milliseconds(redis_client):
    from crawler.policy.politeness import BackoffRule

    keys = CrawlKeys()
    budget = SiteBudget(redis_client, keys, BackoffRule(cooldown=0.0))
    for _ in range(3):
        budget.take_slot("thirds.example", 1 / 30)
        cut = budget.cut("thirds.example", 1 / 30, pause=0.0, reason="HTTP 503")
        assert cut.cut
    assert cut.after == pytest.approx(30 / 8, abs=0.01)
    assert budget.take_slot("thirds.example", 1 / 30).rate == pytest.approx(30 / 8, abs=0.01)
