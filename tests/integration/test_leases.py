"""The Redis side of leases, on a real Redis."""

import time

from crawler.core.keys import CrawlKeys
from crawler.leasing.ledger import LeaseLedger
from crawler.scheduling.lanes import queued
from tests.support.queue import queue_contents

KEYS = CrawlKeys("ecommerce")


def _ledger(client, worker="w1"):
    return LeaseLedger(client, KEYS, worker)


def test_pop_is_leased_and_finish_releases(redis_client):
    ledger = _ledger(redis_client)
    for i, score in enumerate([0, -5, 2]):
        assert ledger.push_if_new(b"fp%d" % i, score, b"req%d" % i)
    popped, wait = ledger.pop(2)
    assert wait == -1  # no retry waiting
    assert [payload for _, payload in popped] == [b"req1", b"req0"]  # best priority first
    assert queued(redis_client, KEYS.requests) == 1
    assert redis_client.hlen(KEYS.inflight("w1")) == 2
    assert popped[0][0].startswith("r|-5|")
    ledger.finish([lease for lease, _ in popped])
    assert not redis_client.exists(KEYS.inflight("w1"))


def test_push_if_new_filters_by_fingerprint_and_hands_over_the_old_lease(redis_client):
    ledger = _ledger(redis_client)
    assert ledger.push_if_new(b"a", 0, b"first")
    [(lease, _)], _ = ledger.pop(1)
    # a redirect of the leased request that turns out to be a duplicate
    assert not ledger.push_if_new(b"a", 0, b"again", lease)
    assert queued(redis_client, KEYS.requests) == 0
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
    assert queue_contents(redis_client, KEYS.requests) == [(b"req-x", -3.0)]
    assert not redis_client.exists(KEYS.inflight("dead"))
    assert live.recover("live") == -1  # never takes from a live worker unless forced


def test_holders_lists_workers_with_leases(redis_client):
    a, b = _ledger(redis_client, "a"), _ledger(redis_client, "b")
    for i in range(3):
        a.push(0, b"r%d" % i)
    a.pop(1)
    b.pop(1)
    assert sorted(a.holders()) == ["a", "b"]


def test_a_delayed_retry_waits_in_the_queue_until_due_then_any_worker_takes_it(redis_client):
    a, b = _ledger(redis_client, "a"), _ledger(redis_client, "b")
    a.push(0, b"page")
    [(lease, payload)], _ = a.pop(1)
    # the page failed: its retry waits 0.6 s in Redis, and a's lease is finished with it
    assert 550 <= a.push_delayed(0.6, b"retry", lease) <= 600
    assert not redis_client.exists(KEYS.inflight("a"))
    assert queued(redis_client, KEYS.requests) == 1
    a.push(0, b"other")
    # not due: the pop hands out the ready request only, and says when the retry is due
    taken, wait = b.pop(8)
    assert [p for _, p in taken] == [b"other"]
    assert 0 < wait <= 600
    assert queued(redis_client, KEYS.requests) == 1  # the retry stayed
    taken, wait = b.pop(8)
    assert taken == [] and wait > 0
    time.sleep(0.65)
    taken, wait = b.pop(8)  # another worker than the one that failed
    assert [p for _, p in taken] == [b"retry"] and wait == -1
    assert queued(redis_client, KEYS.requests) == 0
    assert redis_client.hlen(KEYS.inflight("b")) == 2


def test_due_retries_come_first_and_a_dead_workers_retry_is_recovered(redis_client):
    dead, live = _ledger(redis_client, "dead"), _ledger(redis_client, "live")
    for name in (b"r1", b"r2", b"r3"):
        dead.push(0, name)
    dead.push_delayed(0.0, b"retry-due")
    dead.push_delayed(30.0, b"retry-later")
    taken, wait = dead.pop(2)
    assert [p for _, p in taken] == [b"retry-due", b"r1"]
    assert 29_000 < wait <= 30_000
    dead.heartbeat(1)
    time.sleep(1.2)
    assert live.recover_dead() == {"dead": 2}
    # the due retry is back and still first; the later one still waits
    taken, wait = live.pop(8)
    assert [p for _, p in taken] == [b"retry-due", b"r1", b"r2", b"r3"]
    assert wait > 0
    assert queued(redis_client, KEYS.requests) == 1
