"""The Redis side of leases, on a real Redis."""

import time

from crawler.keys import CrawlKeys
from crawler.leasing.ledger import LeaseLedger

KEYS = CrawlKeys("ecommerce")


def _ledger(client, worker="w1"):
    return LeaseLedger(client, KEYS, worker)


def test_pop_is_leased_and_finish_releases(redis_client):
    ledger = _ledger(redis_client)
    for i, score in enumerate([0, -5, 2]):
        assert ledger.push_if_new(b"fp%d" % i, score, b"req%d" % i)
    popped = ledger.pop(2)
    assert [payload for _, payload in popped] == [b"req1", b"req0"]  # best priority first
    assert redis_client.zcard(KEYS.requests) == 1
    assert redis_client.hlen(KEYS.inflight("w1")) == 2
    assert popped[0][0].startswith("r|-5|")
    ledger.finish([lease for lease, _ in popped])
    assert not redis_client.exists(KEYS.inflight("w1"))


def test_push_if_new_filters_by_fingerprint_and_hands_over_the_old_lease(redis_client):
    ledger = _ledger(redis_client)
    assert ledger.push_if_new(b"a", 0, b"first")
    [(lease, _)] = ledger.pop(1)
    # a redirect of the leased request that turns out to be a duplicate
    assert not ledger.push_if_new(b"a", 0, b"again", lease)
    assert redis_client.zcard(KEYS.requests) == 0
    assert not redis_client.exists(KEYS.inflight("w1"))
    assert redis_client.scard(KEYS.dupefilter) == 1


def test_dead_workers_leases_go_back_where_they_came_from(redis_client):
    dead, live = _ledger(redis_client, "dead"), _ledger(redis_client, "live")
    redis_client.rpush(KEYS.start_urls, b'{"url":"http://a.test/"}')
    ledger_seed = dead.pop_seeds(10)
    dead.push_if_new(b"x", -3, b"req-x")
    dead.pop(10)
    dead.heartbeat(1)
    live.heartbeat(30)
    assert live.recover_dead() == {}  # still beating
    time.sleep(1.2)
    assert live.recover_dead() == {"dead": 2}
    assert redis_client.lrange(KEYS.start_urls, 0, -1) == [ledger_seed[0][1]]
    assert redis_client.zrange(KEYS.requests, 0, -1, withscores=True) == [(b"req-x", -3.0)]
    assert not redis_client.exists(KEYS.inflight("dead"))
    assert live.recover("live") == -1  # never takes from a live worker unless forced


def test_holders_lists_workers_with_leases(redis_client):
    a, b = _ledger(redis_client, "a"), _ledger(redis_client, "b")
    for i in range(3):
        a.push(0, b"r%d" % i)
    a.pop(1)
    b.pop(1)
    assert sorted(a.holders()) == ["a", "b"]
