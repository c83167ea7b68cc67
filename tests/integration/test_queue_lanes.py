"""The request queue's lanes (one list per priority), on one Redis and on a 3-node cluster.

Every test runs on both layouts: on the cluster, in the shard of one site
(``<s>:{s<i>}:requests`` and its lanes, one slot).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from crawler.core.keys import DELAYED_SCORE_BASE, CrawlKeys
from crawler.leasing.ledger import LeaseLedger
from crawler.scheduling.lanes import (
    KEYED,
    index_key,
    keep_requests,
    lane_key,
    mark_earlier_queue,
    push_requests,
    queue_counts,
    queue_keys,
    queued,
)
from master.control import plan_reset, reset
from master.inspection import gather_backoff, gather_status
from tests.support.cluster import KEYS as CLUSTER_KEYS
from tests.support.cluster import sites_in_distinct_shards
from tests.support.queue import queue_contents

# fixtures ``cluster`` (one per module) and ``client`` (the cluster emptied first)
pytest_plugins = ["tests.integration.cluster_support"]


@dataclass
class Where:
    client: Any
    keys: CrawlKeys
    shard: int  # the shard of the site the requests are of (0 on one Redis)

    @property
    def queue(self) -> str:
        return self.keys.shard(self.shard).requests

    def ledger(self, worker: str = "w1") -> LeaseLedger:
        return LeaseLedger(self.client, self.keys, worker)

    def push(self, ledger: LeaseLedger, score: float, payload: bytes) -> None:
        ledger.push(score, payload, shard=self.shard)

    def pop(self, ledger: LeaseLedger, count: int) -> tuple[list[bytes], int]:
        taken, wait = ledger.pop(count)
        return [payload for _, payload in taken], wait


@pytest.fixture(params=["one redis", "cluster"])
def where(request: pytest.FixtureRequest) -> Where:
    if request.param == "one redis":
        return Where(request.getfixturevalue("redis_client"), CrawlKeys("ecommerce"), 0)
    client = request.getfixturevalue("client")
    [site] = sites_in_distinct_shards(1)
    return Where(client, CLUSTER_KEYS, CLUSTER_KEYS.shard_of(site))


def test_priorities_go_in_order_across_lanes_and_in_order_of_arrival_within_one(where):
    ledger = where.ledger()
    for score, payload in [(0, b"a0"), (-2, b"b-2"), (0, b"c0"), (3, b"d3"), (-2, b"e-2")]:
        where.push(ledger, score, payload)
    for payload in (b"f0", b"g0"):
        where.push(ledger, 0, payload)
    # one list per score, an index of them; no sorted set of requests
    assert set(queue_keys(where.client, where.queue)) == {
        where.queue,
        index_key(where.queue),
        lane_key(where.queue, 0),
        lane_key(where.queue, -2),
        lane_key(where.queue, 3),
    }
    assert lane_key(where.queue, -2) == where.queue + ":-2"
    assert not where.client.exists(where.queue)
    assert where.client.type(lane_key(where.queue, 0)) == b"list"
    assert where.pop(ledger, 3) == ([b"b-2", b"e-2", b"a0"], -1)
    assert where.pop(ledger, 3) == ([b"c0", b"f0", b"g0"], -1)
    # a lane a pop emptied short is out of the index; one emptied by taking exactly
    # what was left goes at the next pop
    assert where.client.zrange(index_key(where.queue), 0, -1) == [b"0", b"3"]
    assert where.pop(ledger, 3) == ([b"d3"], -1)
    assert where.pop(ledger, 3) == ([], -1)
    assert not where.client.exists(index_key(where.queue), lane_key(where.queue, 3))


def test_a_lane_emptied_exactly_and_pushed_again_still_pops(where):
    # a push writes the index only for a lane it starts; a lane a pop emptied by taking
    # exactly what it held is still indexed, and refilled it must pop like any other
    ledger = where.ledger()
    for payload in (b"a", b"b"):
        where.push(ledger, 0, payload)
    assert where.pop(ledger, 2) == ([b"a", b"b"], -1)
    assert where.client.zrange(index_key(where.queue), 0, -1) == [b"0"]  # empty, indexed
    where.push(ledger, 0, b"c")
    where.push(ledger, 0, b"d")
    where.push(ledger, -1, b"first")
    assert where.pop(ledger, 5) == ([b"first", b"c", b"d"], -1)
    assert where.pop(ledger, 5) == ([], -1)
    where.push(ledger, 0, b"e")  # the index lost the lane at the short pop: added again
    assert where.client.zrange(index_key(where.queue), 0, -1) == [b"0"]
    assert where.pop(ledger, 5) == ([b"e"], -1)


def test_the_lease_keeps_the_lane_and_a_dead_workers_requests_go_back_first(where):
    dead, live = where.ledger("dead"), where.ledger("live")
    for n in range(4):
        where.push(dead, -1, b"r%d" % n)
    dead.push_delayed(0.0, b"retry", shard=where.shard)  # due at once
    taken, _ = dead.pop(3)
    assert [payload for _, payload in taken] == [b"retry", b"r0", b"r1"]
    assert taken[1][0].startswith("r|-1|")
    where.push(live, -1, b"r4")
    dead.heartbeat(30)
    live.heartbeat(30)
    assert live.recover_dead() == {}  # still beating
    dead.stop_beating()  # as its heartbeat would expire
    assert live.recover_dead() == {"dead": 3}
    contents = queue_contents(where.client, where.queue)
    # the retry is back in the sorted set with its (due) score; r0 and r1 at the
    # head of their lane, before r2 and the r4 queued since
    assert contents[0][0] == b"retry" and contents[0][1] < -1e15
    assert sorted(contents[1:3]) == [(b"r0", -1), (b"r1", -1)]
    assert contents[3:] == [(b"r2", -1), (b"r3", -1), (b"r4", -1)]
    payloads, _ = where.pop(live, 10)
    assert payloads[0] == b"retry" and set(payloads[1:3]) == {b"r0", b"r1"}
    assert payloads[3:] == [b"r2", b"r3", b"r4"]


def test_a_waiting_retry_stays_and_a_due_one_goes_before_every_lane(where):
    ledger = where.ledger()
    where.push(ledger, -10, b"urgent")
    ledger.push_delayed(30.0, b"later", shard=where.shard)
    ledger.push_delayed(0.0, b"due", shard=where.shard)
    payloads, wait = where.pop(ledger, 1)
    assert payloads == [b"due"] and wait == -1  # it took one: met nothing waiting
    payloads, wait = where.pop(ledger, 5)
    assert payloads == [b"urgent"] and 29_000 < wait <= 30_000
    assert where.pop(ledger, 5)[0] == []
    assert queue_contents(where.client, where.queue)[0][0] == b"later"


def test_counting_sums_lanes_and_sorted_set(where):
    ledger = where.ledger()
    for n in range(3):
        where.push(ledger, 0, b"a%d" % n)
    where.push(ledger, -1, b"b")
    ledger.push_delayed(60.0, b"retry", shard=where.shard)
    where.client.zadd(where.queue, {b"old": 0})  # a member of the previous version's queue
    counted = queue_counts(where.client, where.keys)
    assert (counted.ready, counted.delayed, counted.total) == (5, 1, 6)
    assert counted.first_delayed is not None and counted.first_delayed > DELAYED_SCORE_BASE
    assert queued(where.client, where.queue) == 6
    assert ledger.waiting() == (6, 0)
    assert ledger.queued() == 6
    status = gather_status(where.client, where.keys)
    assert status["queued_requests"] == 5  # ready to go; the retry is counted apart
    backoff = gather_backoff(where.client, where.keys)
    assert backoff["retries_waiting"] == 1 and 55 <= backoff["next_retry_in"] <= 60
    assert plan_reset(where.client, where.keys).counts["queued_requests"] == 6


def test_reset_deletes_the_lanes_and_their_index(where):
    ledger = where.ledger()
    for score in (0, -1, 2):
        where.push(ledger, score, b"p%d" % score)
    ledger.push_delayed(60.0, b"retry", shard=where.shard)
    assert len(queue_keys(where.client, where.queue)) == 5
    reset(where.client, where.keys)
    assert not where.client.exists(*queue_keys(where.client, where.queue))
    assert not where.client.exists(lane_key(where.queue, 0), lane_key(where.queue, -1))
    assert queue_counts(where.client, where.keys).total == 0


def test_a_queue_of_the_previous_version_drains_in_priority_order_with_the_lanes(where):
    # the previous version kept every request in the sorted set, score -priority
    where.client.zadd(where.queue, {b"old-2": -2, b"old0": 0, b"old5": 5})
    # a worker opening its queue marks the index: pops look at the sorted set
    assert mark_earlier_queue(where.client, where.keys) == 1
    ledger = where.ledger()
    for score, payload in [(-1, b"new-1"), (0, b"new0"), (-2, b"new-2")]:
        where.push(ledger, score, payload)
    payloads, _ = where.pop(ledger, 10)
    # score by score; at equal scores the old members first
    assert payloads == [b"old-2", b"new-2", b"new-1", b"old0", b"new0", b"old5"]
    assert not where.client.exists(where.queue, index_key(where.queue))


def test_a_pop_that_finds_no_lane_looks_at_the_sorted_set_and_marks_the_index(where):
    where.client.zadd(where.queue, {b"old0": 0, b"old1": 1})  # unmarked: an earlier version's
    ledger = where.ledger()
    assert where.pop(ledger, 1) == ([b"old0"], -1)
    assert where.client.zrange(index_key(where.queue), 0, -1) == [KEYED.encode()]
    where.push(ledger, 2, b"new2")
    assert where.pop(ledger, 5) == ([b"old1", b"new2"], -1)
    assert not where.client.exists(where.queue, index_key(where.queue))


def test_the_index_is_marked_while_the_sorted_set_holds_something(where):
    ledger = where.ledger()
    where.push(ledger, 0, b"a")
    assert where.client.zrange(index_key(where.queue), 0, -1) == [b"0"]
    ledger.push_delayed(0.0, b"retry", shard=where.shard)
    keep_requests(where.client, where.queue, {b"recrawl": 0})
    keep_requests(where.client, where.queue, {b"recrawl": 0})  # once only
    assert where.client.zrange(index_key(where.queue), 0, -1) == [KEYED.encode(), b"0"]
    assert where.pop(ledger, 5) == ([b"retry", b"recrawl", b"a"], -1)
    assert not where.client.exists(where.queue, index_key(where.queue))


def test_master_pushes_and_worker_pushes_meet_in_the_same_lanes(where):
    push_requests(where.client, where.queue, {b"m0": 0, b"m-1": -1})
    ledger = where.ledger()
    where.push(ledger, -1, b"w-1")
    assert [payload for payload, _ in queue_contents(where.client, where.queue)] == [
        b"m-1",
        b"w-1",
        b"m0",
    ]
    assert where.pop(ledger, 3)[0] == [b"m-1", b"w-1", b"m0"]
