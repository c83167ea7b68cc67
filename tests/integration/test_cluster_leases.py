"""Leases, pops, batches and recovery on a real 3-node Redis Cluster (one per module)."""

from __future__ import annotations

import pytest
import redis

from crawler.leasing.batch import OutputBatch
from crawler.leasing.ledger import LeaseLedger
from crawler.net.redis_client import ROUND_TRIPS
from crawler.scheduling.bloom import BloomFilter, BloomSize, bloom_status
from crawler.scheduling.lanes import queued
from tests.support.cluster import KEYS, sites_in_distinct_shards
from tests.support.queue import queue_contents

# fixtures ``cluster`` (one per module) and ``client`` (the cluster emptied first)
pytest_plugins = ["tests.integration.cluster_support"]


def _fill(client, site, count, priority=0, prefix=None):
    """``count`` requests of ``site`` queued in its shard; returns their payloads."""
    ledger = LeaseLedger(client, KEYS, "seeder")
    shard = KEYS.shard_of(site)
    payloads = []
    for i in range(count):
        payload = f"{prefix or site}/{i}".encode()
        ledger.push_if_new(b"fp-" + payload, -priority, payload, shard=shard)
        payloads.append(payload)
    return payloads


def _batch(client, ledger, **kwargs):
    options = {"interval": 0.005, "max_size": 256, "linger": 0.5, "deep_queue": 4, **kwargs}
    return OutputBatch(client, KEYS, ledger.inflight_key, ledger=ledger, **options)


def test_a_request_is_queued_checked_and_leased_in_its_sites_shard(client):
    [site] = sites_in_distinct_shards(1)
    shard = KEYS.for_site(site)
    ledger = LeaseLedger(client, KEYS, "w1")
    assert ledger.push_if_new(b"fp1", 0, b"req-1", shard=KEYS.shard_of(site))
    assert not ledger.push_if_new(b"fp1", 0, b"req-1 again", shard=KEYS.shard_of(site))
    assert queue_contents(client, shard.requests) == [(b"req-1", 0)]
    assert client.sismember(shard.dupefilter, b"fp1")
    [(lease, payload)], wait = ledger.pop(8)
    assert payload == b"req-1" and wait == -1
    assert lease.startswith("r|0|")  # lease ids as on a plain Redis
    assert client.hkeys(shard.inflight("w1")) == [lease.encode()]
    ledger.finish([lease])
    assert client.hlen(shard.inflight("w1")) == 0


def test_pops_go_around_the_shards_and_no_shard_starves(client):
    deep, *small = sites_in_distinct_shards(4)
    _fill(client, deep, 200, priority=10)  # far more, and better priority
    for site in small:
        _fill(client, site, 3)
    ledger = LeaseLedger(client, KEYS, "w1")
    seen = set()
    for _ in range(6):
        taken, _ = ledger.pop(8)
        assert len(taken) == 8
        seen.update(payload.decode().rsplit("/", 1)[0] for _, payload in taken)
    assert seen == {deep, *small}  # every site served within a few pops
    # and the small shards are drained while the deep one still has plenty
    for site in small:
        assert queued(client, KEYS.for_site(site).requests) == 0
    assert queued(client, KEYS.for_site(deep).requests) > 150


def test_empty_shards_cost_no_round_trip_once_seen_empty(client):
    [site] = sites_in_distinct_shards(1)
    _fill(client, site, 100)
    ledger = LeaseLedger(client, KEYS, "w1")
    ledger.pop(8)  # meets the empty shards once
    before = ROUND_TRIPS.value
    taken, _ = ledger.pop(8)
    assert len(taken) == 8
    assert ROUND_TRIPS.value - before <= 2  # the one shard with work (in two shares at most)


def test_a_batch_is_split_per_shard_and_leases_finish_after_every_link(client):
    site_a, site_b, site_c = sites_in_distinct_shards(3)
    _fill(client, site_a, 1)
    ledger = LeaseLedger(client, KEYS, "w1")
    [(lease, _)], _ = ledger.pop(1)
    batch = _batch(client, ledger)
    for site in (site_a, site_b, site_c):
        batch.add_link(f"fp {site}".encode(), 0, f"link {site}".encode(), "", KEYS.shard_of(site))
    batch.add_link(b"fp again", 0, b"dup", "", KEYS.shard_of(site_b))
    batch.add_link(b"fp again", 0, b"dup", "", KEYS.shard_of(site_b))  # a duplicate
    batch.finish(lease)
    batch.flush()
    assert len(batch) == 0
    for site in (site_a, site_b, site_c):
        assert (f"link {site}".encode(), 0) in queue_contents(client, KEYS.for_site(site).requests)
    assert queued(client, KEYS.for_site(site_b).requests) == 2  # link and one "dup"
    assert client.hlen(KEYS.for_site(site_a).inflight("w1")) == 0  # finished


def test_a_failure_part_way_leaves_the_leases_unfinished(client):
    site_a, site_b = sites_in_distinct_shards(2)
    _fill(client, site_a, 1)
    ledger = LeaseLedger(client, KEYS, "w1")
    [(lease, _)], _ = ledger.pop(1)
    # site_b's fingerprint set is broken (a string where the set should be): its call
    # fails before it writes anything, like a node that does not answer
    client.set(KEYS.for_site(site_b).dupefilter, b"not a set")
    batch = _batch(client, ledger)
    batch.add_link(b"fp-a", 0, b"link-a", "", KEYS.shard_of(site_a))
    batch.add_link(b"fp-b", 0, b"link-b", "", KEYS.shard_of(site_b))
    batch.finish(lease)
    with pytest.raises(redis.ResponseError):
        batch.flush()
    # the page's lease is still held: the page will be fetched again, its links found again
    assert client.hkeys(KEYS.for_site(site_a).inflight("w1")) == [lease.encode()]
    assert lease in batch._leases
    client.delete(KEYS.for_site(site_b).dupefilter)
    batch.flush()
    assert client.hlen(KEYS.for_site(site_a).inflight("w1")) == 0
    assert (b"link-b", 0) in queue_contents(client, KEYS.for_site(site_b).requests)
    assert (b"link-a", 0) in queue_contents(client, KEYS.for_site(site_a).requests)


def test_the_pop_rides_on_the_flush_across_shards(client):
    sites = sites_in_distinct_shards(3)
    for site in sites:
        _fill(client, site, 4)
    ledger = LeaseLedger(client, KEYS, "w1")
    batch = _batch(client, ledger)
    popped = batch.flush(pop=6)
    assert len(popped) == 6
    assert len({payload.decode().rsplit("/", 1)[0] for _, payload in popped}) >= 2
    held = sum(client.hlen(KEYS.for_site(site).inflight("w1")) for site in sites)
    assert held == 6
    for lease, _ in popped:
        batch.finish(lease)
    batch.flush()
    assert sum(client.hlen(KEYS.for_site(site).inflight("w1")) for site in sites) == 0


def test_a_dead_workers_leases_go_back_to_their_shards_and_seeds_to_start_urls(client):
    site_a, site_b = sites_in_distinct_shards(2)
    _fill(client, site_a, 3)
    _fill(client, site_b, 2)
    client.rpush(KEYS.start_urls, b'{"url": "http://127.0.0.1:9/"}')
    victim = LeaseLedger(client, KEYS, "victim")
    victim.claim(30)
    taken, _ = victim.pop(8)
    seeds = victim.pop_seeds(4)
    assert len(taken) == 5 and len(seeds) == 1
    rescuer = LeaseLedger(client, KEYS, "rescuer")
    assert set(rescuer.holders()) == {"victim"}  # scanned on every primary
    assert rescuer.recover_dead() == {}  # alive: nothing taken
    victim.stop_beating()
    assert rescuer.recover_dead() == {"victim": 6}
    assert queued(client, KEYS.for_site(site_a).requests) == 3
    assert queued(client, KEYS.for_site(site_b).requests) == 2
    assert client.lrange(KEYS.start_urls, 0, -1) == [b'{"url": "http://127.0.0.1:9/"}']
    assert rescuer.holders() == []


def test_waiting_sums_every_shard(client):
    for site, count in zip(sites_in_distinct_shards(3), (3, 4, 5), strict=True):
        _fill(client, site, count)
    client.rpush(KEYS.start_urls, b"seed")
    assert LeaseLedger(client, KEYS, "w1").waiting() == (12, 1)


def test_a_retry_waits_in_its_shard_and_is_counted_crawl_wide(client):
    [site] = sites_in_distinct_shards(1)
    _fill(client, site, 1)
    ledger = LeaseLedger(client, KEYS, "w1")
    [(lease, _)], _ = ledger.pop(1)
    assert ledger.push_delayed(30, b"retry", lease, KEYS.shard_of(site)) > 0
    assert queued(client, KEYS.for_site(site).requests) == 1
    assert client.hlen(KEYS.for_site(site).inflight("w1")) == 0
    assert client.hget(KEYS.stats, "retries_delayed") == b"1"
    taken, wait = ledger.pop(8)
    assert taken == [] and wait > 0  # not due yet


def test_a_redirect_to_another_shard_takes_over_the_lease(client):
    site_a, site_b = sites_in_distinct_shards(2)
    _fill(client, site_a, 1)
    ledger = LeaseLedger(client, KEYS, "w1")
    [(lease, _)], _ = ledger.pop(1)
    assert ledger.push_if_new(b"fp-redirected", 0, b"there", lease, KEYS.shard_of(site_b))
    assert client.hlen(KEYS.for_site(site_a).inflight("w1")) == 0
    assert queued(client, KEYS.for_site(site_b).requests) == 1


def test_one_bloom_filter_per_shard(client):
    site_a, site_b = sites_in_distinct_shards(2)
    size = BloomSize.for_capacity(1000 // KEYS.shards, 0.001)
    blooms = [BloomFilter(client, KEYS, size, shard) for shard in KEYS.all_shards()]
    ledger = LeaseLedger(client, KEYS, "w1")
    batch = _batch(client, ledger)
    batch.use_bloom(blooms)
    for _ in range(2):
        batch.add_link(b"fp-a" * 5, 0, b"link-a", "", KEYS.shard_of(site_a))
        batch.add_link(b"fp-b" * 5, 0, b"link-b", "", KEYS.shard_of(site_b))
    batch.flush()
    assert queued(client, KEYS.for_site(site_a).requests) == 1
    assert queued(client, KEYS.for_site(site_b).requests) == 1
    assert client.exists(KEYS.for_site(site_a).bloom, KEYS.for_site(site_b).bloom) == 2
    assert client.hget(KEYS.for_site(site_a).bloom_meta, "count") == b"1"
    status = bloom_status(client, KEYS)
    assert status is not None and status["count"] == 2
    assert status["capacity"] == size.capacity * KEYS.shards
