"""Leases: every request a worker takes is done at least once, whoever dies.

scrapy-redis pops requests destructively, so a worker killed with requests in
hand loses them. Here a worker *leases* what it takes (a request of the shared
queue, a seed of ``start_urls``): the pop records it under the worker in Redis,
and the record is deleted, the lease *finished*, only once everything the
request led to is safe. A worker that stops beating has its leases put back
where they came from by any other worker. Follow a lease through:

* :mod:`.ledger` — :class:`LeaseLedger`, the Redis side: the Lua scripts that
  pop under lease, push (finishing the lease a request carried), finish,
  beat, and recover the leases of a dead worker, each in one atomic call.
* :mod:`.batch` — :class:`OutputBatch`, the same for many pages at once: their
  links, then their finished leases, then the next pop, in one script call.
* :mod:`.shards` and :mod:`.batch_shards` — the same on a Redis Cluster: one
  queue, fingerprint set and lease hash per shard, pops that go around the
  shards fairly, a batch split per shard (every link before any lease),
  recovery shard by shard.
* :mod:`.meta` — the lease id a request carries in ``request.meta["lease"]``.
* :mod:`.tracker` — :class:`LeaseTracker` (extension, ``EXTENSIONS``): decides
  when a lease is finished, beats the heart, recovers the dead's leases, and
  answers the spider (``take_seeds()``, ``crawl_busy()``); found by other
  components with ``LeaseTracker.of(crawler)``. Its parts:

  * :mod:`.heartbeat` — the worker's heartbeat and the one-live-process-per-id claim;
  * :mod:`.pending` — which leases still wait for their page's items to be safe;
  * :mod:`.deadletters` — failures recorded in ``<spider>:dead`` (a dead letter
    finishes its lease).

* :mod:`.middleware` — :class:`LeaseSpiderMiddleware` (``SPIDER_MIDDLEWARES``):
  tells the tracker when a page's output is all queued.

Outside this package the queue (:mod:`crawler.scheduling.queue`) pops and pushes
through the ledger, and :mod:`crawler.scheduling.restarts` makes the tracker
requeue what its worker holds when Redis restarted and may have lost its last
second. The walk-through is in ``docs/architecture.md``.
"""
