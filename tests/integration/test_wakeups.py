"""Wake-ups (crawler/scheduling/wakeup.py) on a real Redis and a real Redis Cluster.

What gives the crawl work it had none of publishes one message on ``<spider>:wake``:
a push that starts a lane, the sorted set's once-only pushes, a dead worker's
requests and seeds put back, the master's seeds. A push onto a lane that holds
requests publishes nothing. A listener hears them, on a cluster too (whatever
node it listens on), and listens again after Redis comes back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import redis

from crawler.core.keys import CrawlKeys
from crawler.leasing.ledger import LeaseLedger
from crawler.scheduling.lanes import keep_requests, push_requests
from crawler.scheduling.wakeup import ANY, BROWSER, PLAIN, WAKE_SUFFIX, Wake, WakeUps
from master.seeding import SEED_BATCH_LUA
from tests.support.cluster import KEYS as CLUSTER_KEYS
from tests.support.cluster import sites_in_distinct_shards
from tools.redis_cluster import RedisCluster
from tools.redis_server import RedisServer

KEYS = CrawlKeys("ecommerce")
WAIT = 60.0  # a bound on a wait for a message, not a speed


class Heard:
    """A WakeUps listener that counts what it heard."""

    def __init__(self, client: object, channel: str) -> None:
        self.count = 0
        self.kinds: list[Wake] = []
        self._event = threading.Event()
        self._lock = threading.Lock()
        self.wakeups = WakeUps(client, channel, self._on_wake).start()
        assert self.wakeups.wait_live(WAIT), "not listening"

    def _on_wake(self, wake: Wake) -> None:
        with self._lock:
            self.count += 1
            self.kinds.append(wake)
        self._event.set()

    def wait(self) -> int:
        assert self._event.wait(WAIT), "no wake-up heard"
        self._event.clear()
        return self.count

    def stop(self) -> None:
        self.wakeups.stop()


@pytest.fixture
def client(module_redis: RedisServer) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(module_redis.url)
    client.flushall()
    client.config_resetstat()
    yield client
    client.close()


def _publishes(client: redis.Redis) -> int:
    return int(client.info("commandstats").get("cmdstat_publish", {}).get("calls", 0))


def test_the_channel_is_the_crawls_wake_key() -> None:
    assert KEYS.wake == "ecommerce" + WAKE_SUFFIX
    assert CLUSTER_KEYS.wake == "ecommerce:wake"  # not a key: no hash tag on a cluster


def test_a_push_that_starts_a_lane_wakes_and_one_onto_a_busy_lane_does_not(client) -> None:
    heard = Heard(client, KEYS.wake)
    try:
        push_requests(client, KEYS.requests, {b"a": 0})
        assert heard.wait() == 1
        assert _publishes(client) == 1
        push_requests(client, KEYS.requests, {b"b": 0, b"c": 0})  # the lane holds "a"
        assert _publishes(client) == 1
        push_requests(client, KEYS.requests, {b"d": -5})  # a new lane, of a better priority
        assert heard.wait() == 2
        assert _publishes(client) == 2
        assert heard.kinds == [PLAIN, PLAIN]
    finally:
        heard.stop()


def test_a_push_into_the_browser_queue_says_so(client) -> None:
    """Work for a browser is announced as such: a worker that renders nothing lets it be,
    and the plain queue's lane hint (the wake-ups heard) stays good."""
    heard = Heard(client, KEYS.wake)
    try:
        push_requests(client, KEYS.browser_requests, {b"a": 0})
        assert heard.wait() == 1
        keep_requests(client, KEYS.browser_requests, {b"retry": 0})  # its sorted set
        assert heard.wait() == 2
        push_requests(client, KEYS.requests, {b"b": 0})
        assert heard.wait() == 3
        assert heard.kinds == [BROWSER, BROWSER, PLAIN]
        assert heard.wakeups.heard == 2  # the subscription and the plain message
    finally:
        heard.stop()


def test_seeds_requeued_leases_and_once_only_pushes_wake(client) -> None:
    heard = Heard(client, KEYS.wake)
    try:
        seed = client.register_script(SEED_BATCH_LUA)
        assert seed(keys=[KEYS.seeded, KEYS.start_urls], args=[b"fp1", b'{"url": "x"}']) == 1
        assert heard.wait() == 1
        assert seed(keys=[KEYS.seeded, KEYS.start_urls], args=[b"fp1", b'{"url": "x"}']) == 0
        assert _publishes(client) == 1  # nothing new: no message
        assert keep_requests(client, KEYS.requests, {b"recrawl": 0}) == 1
        assert heard.wait() == 2
        # a dead worker's seed and request go back, and wake the others
        ledger = LeaseLedger(client, KEYS, "dead")
        assert [lease for lease, _ in ledger.pop_seeds(1)]
        ledger.push_if_new(b"fp2", 0, b"request", "")  # a lane started
        assert heard.wait() == 3
        assert len(ledger.pop(8)[0]) == 2  # the recrawl and the request
        assert ledger.recover("dead", force=True) == 3
        assert heard.wait() >= 4
        assert _publishes(client) == 5  # the seed's and the lane's
    finally:
        heard.stop()


def test_a_listener_listens_again_after_a_redis_restart_and_says_so(private_redis) -> None:  # type: ignore[no-untyped-def]
    client = redis.Redis.from_url(private_redis.url)
    heard = Heard(client, KEYS.wake)
    try:
        private_redis.restart()
        # listening again, it wakes its worker once: pushes meanwhile announced nothing
        assert heard.wait() == 1
        assert heard.kinds == [ANY]  # of either queue
        assert heard.wakeups.wait_live(WAIT)
        push_requests(client, KEYS.requests, {b"a": 0})
        assert heard.wait() == 2
    finally:
        heard.stop()
        client.close()


def test_on_a_cluster_a_push_on_any_node_wakes_a_listener_on_another() -> None:
    with RedisCluster(primaries=3) as cluster:
        client = cluster.client()
        heard = Heard(client, CLUSTER_KEYS.wake)
        try:
            nodes = set()
            for count, site in enumerate(sites_in_distinct_shards(6), start=1):
                queue = CLUSTER_KEYS.for_site(site).requests
                nodes.add(client.get_node_from_key(queue).name)
                push_requests(client, queue, {site.encode(): 0})
                assert heard.wait() >= count
            assert len(nodes) > 1  # the shards' queues live on several nodes
        finally:
            heard.stop()
            client.close()


def _calls(client: redis.Redis, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


def test_a_pop_takes_the_lane_it_was_told_until_a_wake_up_says_the_index_changed(client) -> None:
    """Listening, a worker's pop takes the lane its last pop named without reading the
    lane index (one ZRANGE less a pop); a lane started meanwhile publishes a wake-up,
    and the next pop reads the index again: priority order holds."""
    from crawler.leasing.batch import OutputBatch

    push_requests(client, KEYS.requests, {b"p%02d" % i: 0 for i in range(40)})
    batch = OutputBatch(client, KEYS, KEYS.inflight("w1"), interval=0.005, max_size=256)
    heard = Heard(client, KEYS.wake)
    batch.wakeups = heard.wakeups
    try:
        first = batch.flush(pop=4)  # no lane known yet: reads the index
        batch._depth_at = float("inf")  # no depth read due (it reads the index): pops only
        reads = _calls(client, "zrange")
        second = batch.flush(pop=4)
        third = batch.flush(pop=4)
        assert _calls(client, "zrange") == reads  # the lane it was told, twice
        assert [p for _, p in first + second + third] == [b"p%02d" % i for i in range(12)]
        count = heard.count
        push_requests(client, KEYS.requests, {b"better": -5})  # another worker's new lane
        assert heard.wait() > count
        assert [p for _, p in batch.flush(pop=2)] == [b"better", b"p12"]
        assert _calls(client, "zrange") > reads
    finally:
        heard.stop()


def test_without_listening_every_pop_reads_the_index(client) -> None:
    from crawler.leasing.batch import OutputBatch

    push_requests(client, KEYS.requests, {b"p%02d" % i: 0 for i in range(10)})
    batch = OutputBatch(client, KEYS, KEYS.inflight("w1"), interval=0.005, max_size=256)
    batch.flush(pop=2)
    batch._depth_at = float("inf")  # no depth read due: the pops' reads only
    reads = _calls(client, "zrange")
    batch.flush(pop=2)
    assert _calls(client, "zrange") == reads + 1
