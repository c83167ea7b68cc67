"""Shared scheduling on Redis: scrapy-redis extended through its settings.

* :mod:`.serializer` — JSON instead of pickle on the queue (``SCHEDULER_SERIALIZER``).
* :mod:`.leases` — the Redis side of leases: a popped request stays recorded
  under its worker until it is finished, so a killed worker loses nothing.
* :mod:`.queue` — :class:`ReliablePriorityQueue` (``SCHEDULER_QUEUE_CLASS``).
* :mod:`.dupefilter` — :class:`BinaryFingerprintDupeFilter` (``DUPEFILTER_CLASS``).
* :mod:`.scheduler` — :class:`ReliableScheduler` (``SCHEDULER``).
"""
