"""When a worker's batch of links and finished leases goes to Redis (a real Redis)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from crawler.core.keys import CrawlKeys
from crawler.leasing.batch import DRAIN_WINDOW, OutputBatch
from crawler.leasing.ledger import LeaseLedger
from crawler.scheduling.lanes import INDEX_READ, keep_requests, queued
from tests.support.queue import queue_contents
from tools.redis_server import RedisServer

KEYS = CrawlKeys("ecommerce")


@pytest.fixture
def redis_client(module_redis: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(module_redis.url)
    client.flushall()
    yield client
    client.close()


def _batch(client, **kwargs):
    options = {
        "interval": 0.005,
        "max_size": 256,
        "linger": 0.5,
        "deep_queue": 4,
        "lease_wait": 0.3,
        **kwargs,
    }
    return OutputBatch(client, KEYS, KEYS.inflight("w1"), **options)


def _queue(client, count):
    ledger = LeaseLedger(client, KEYS, "seeder")
    for i in range(count):
        ledger.push_if_new(b"seed%d" % i, i, b"seed-request-%d" % i)


def test_the_pop_reads_how_many_requests_stay_queued(redis_client):
    _queue(redis_client, 6)
    batch = _batch(redis_client)
    assert batch.queue_depth == -1 and not batch.queue_deep  # not known yet
    popped = batch.flush(pop=2)
    assert [payload for _, payload in popped] == [b"seed-request-0", b"seed-request-1"]
    assert popped[0][0].startswith("r|0|")  # the lease keeps the queue score
    assert redis_client.hlen(KEYS.inflight("w1")) == 2
    assert batch.queue_depth == 4 and batch.queue_deep
    batch.flush()  # no pop: the depth seen at the last pop stays
    assert batch.queue_depth == 4
    batch.flush(pop=8)
    assert batch.queue_depth == 0 and not batch.queue_deep


def test_links_wait_the_short_interval_while_the_queue_is_short(redis_client):
    batch = _batch(redis_client)
    batch.add_link(b"fp", 0, b"link", "")
    start = batch._links_since
    assert not batch.due(start + 0.001)
    assert batch.due(start + 0.006)


def test_links_linger_while_the_queue_is_deep_and_ride_on_the_next_pop(redis_client):
    _queue(redis_client, 10)
    batch = _batch(redis_client)
    [(lease, _)] = batch.flush(pop=1)
    assert batch.queue_deep  # 9 left, deep_queue 4
    batch.add_link(b"fp-new", 100, b"new-link", lease)
    start = batch._links_since
    assert not batch.due(start + 0.1)
    assert batch.due(start + 0.51)
    assert queued(redis_client, KEYS.requests) == 9  # nothing sent yet
    batch.flush(pop=1)  # the pop takes the link and the finished lease along
    assert (b"new-link", 100) in queue_contents(redis_client, KEYS.requests)
    held = redis_client.hkeys(KEYS.inflight("w1"))
    assert len(held) == 1 and lease.encode() not in held  # the old lease finished, a new one
    assert len(batch) == 0


def test_finished_leases_alone_wait_the_lease_interval(redis_client):
    batch = _batch(redis_client)
    batch.finish("r|0|abc")
    start = batch._leases_since
    assert not batch.due(start + 0.1)
    assert batch.due(start + 0.31)


def test_a_full_batch_is_sent_at_once(redis_client):
    _queue(redis_client, 10)
    batch = _batch(redis_client, max_size=3)
    batch.flush(pop=1)
    assert batch.queue_deep
    for i in range(3):
        batch.add_link(b"fp%d" % i, 0, b"link%d" % i, "")
    assert len(batch) == 0  # sent without waiting for the linger
    assert queued(redis_client, KEYS.requests) == 12


def test_no_linger_without_a_deep_queue_setting(redis_client):
    _queue(redis_client, 10)
    batch = _batch(redis_client, deep_queue=0)
    batch.flush(pop=1)
    assert not batch.queue_deep
    batch.add_link(b"fp", 0, b"link", "")
    assert batch.due(batch._links_since + 0.006)


def test_a_queue_that_drains_fast_is_not_deep(redis_client):
    batch = _batch(redis_client, deep_queue=10, linger=0.5)
    batch._saw_depth(1000, now=100.0)
    batch._saw_depth(900, now=100.1)  # too soon to read a rate
    assert batch.drain_rate == 0 and batch.queue_deep
    batch._saw_depth(500, now=100.5)  # 1000 requests a second: 500 last 0.5 s, not 2 x 0.5 s
    assert batch.drain_rate == 1000
    assert not batch.queue_deep
    batch._saw_depth(600, now=101.0)  # it grows again: the rate falls
    assert batch.drain_rate == 500
    assert batch.queue_deep  # 600 requests last 1.2 s at 500/s


def test_the_depth_is_read_at_most_every_quarter_second(redis_client):
    _queue(redis_client, 10)
    batch = _batch(redis_client)

    def lane_lengths_read():
        # only the depth read asks a lane its length (LLEN); pops do not
        return redis_client.info("commandstats").get("cmdstat_llen", {}).get("calls", 0)

    before = lane_lengths_read()
    batch.flush(pop=1)
    first = lane_lengths_read()
    assert first > before and batch.queue_depth == 9
    batch.flush(pop=1)  # just after: the depth read before stands
    assert lane_lengths_read() == first and batch.queue_depth == 9
    batch._depth_at -= DRAIN_WINDOW  # a quarter second later
    batch.flush(pop=1)
    second = lane_lengths_read()
    assert second > first and batch.queue_depth == 7
    batch.flush(pop=20)  # a short pop: the queue is empty, no need to ask
    assert lane_lengths_read() == second and batch.queue_depth == 0


def test_pops_and_depths_across_more_lanes_than_one_index_read(redis_client):
    # a pop reads the lane index's first INDEX_READ entries once and walks them; past
    # them it reads again, and the depth is read from what it walked while it saw all
    lanes = 2 * INDEX_READ + 5
    _queue(redis_client, lanes)  # one request per lane: scores 0 .. lanes-1
    keep_requests(redis_client, KEYS.requests, {b"kept-at-3": 3})  # the sorted set too
    batch = _batch(redis_client)
    taken, left = [], lanes + 1
    for size in (3, INDEX_READ, INDEX_READ, 1, 40):
        popped = batch.flush(pop=size)
        taken += [payload for _, payload in popped]
        left -= len(popped)
        batch._depth_at = None  # read the depth at every pop
        assert batch.queue_depth == (left if len(popped) == size else 0)
        assert queued(redis_client, KEYS.requests) == left
    expected = [b"seed-request-%d" % i for i in range(lanes)]
    expected.insert(3, b"kept-at-3")  # the sorted set's member first among its score
    assert taken == expected
