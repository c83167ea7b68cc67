"""Shared scheduling on Redis: scrapy-redis extended through its settings.

* :mod:`.serializer` — JSON instead of pickle on the queue (``SCHEDULER_SERIALIZER``).
* :mod:`.queue` — :class:`ReliablePriorityQueue` (``SCHEDULER_QUEUE_CLASS``): pops
  under lease, so a killed worker loses nothing (the leases: :mod:`crawler.leasing`).
* :mod:`.dupefilter` — :class:`BinaryFingerprintDupeFilter` (``DUPEFILTER_CLASS``);
  :mod:`.bloom` — the Bloom filter alternative.
* :mod:`.scheduler` — :class:`ReliableScheduler` (``SCHEDULER``).
* :mod:`.restarts` — a Redis restart that may have lost its last second makes the
  worker redo what it holds and forget its fingerprint cache (``REDIS_PARAMS``).
"""
