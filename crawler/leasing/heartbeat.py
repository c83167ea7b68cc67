"""``Heartbeat``: this worker's ``<spider>:alive:<worker>``, claimed once, then kept beating.

A worker whose heartbeat expires (``LEASE_WORKER_TIMEOUT`` seconds without a
beat) is dead: any other worker requeues what it held. The lease tracker beats
every ``LEASE_HEARTBEAT_INTERVAL`` seconds (:meth:`Heartbeat.beat_if_due`) and
stops beating when the worker closes.

**One live process per worker id.** When the worker starts, :meth:`Heartbeat.claim`
takes the heartbeat of its ``WORKER_ID`` (``SET NX``). If that heartbeat exists,
it watches it for up to ``LEASE_WORKER_TIMEOUT`` seconds: renewed means another
live worker has the id, and the worker refuses to start (:class:`WorkerIdInUse`:
one ERROR line, exit status 1, see :mod:`crawler.core.startup`); expired means an
earlier process with that id died, and the worker takes the id over.
"""

from __future__ import annotations

import logging
import time

from crawler.core.startup import StartupError
from crawler.leasing.ledger import LeaseLedger

logger = logging.getLogger(__name__)

CLAIM_POLL_INTERVAL = 0.2  # seconds between looks at a heartbeat of our id
RENEWED_MS = 100  # a heartbeat whose time left grows by more than this was renewed


class WorkerIdInUse(StartupError):
    """Another live worker has this ``WORKER_ID``."""


class Heartbeat:
    """The heartbeat of one worker id, beaten every ``interval`` s, dead after ``timeout`` s."""

    def __init__(self, ledger: LeaseLedger, timeout: int, interval: float) -> None:
        self.ledger = ledger
        self.worker_id = ledger.worker_id
        self.timeout = timeout
        self.interval = interval
        self.last = 0.0  # monotonic time of the last beat

    def claim(self) -> None:
        """Become the one live process of this worker id, or raise :class:`WorkerIdInUse`."""
        last_left: int | None = None
        while not self.ledger.claim(self.timeout):
            left = self.ledger.heartbeat_left()
            if left == -2:  # expired between the two calls: claim again
                continue
            renewed = left == -1 or (last_left is not None and left > last_left + RENEWED_MS)
            if renewed:
                raise WorkerIdInUse(
                    f"WORKER_ID {self.worker_id!r} is in use by a live worker (its heartbeat "
                    f"{self.ledger.keys.alive(self.worker_id)} is being renewed): give this "
                    "worker another WORKER_ID, or leave WORKER_ID unset for a unique one"
                )
            if last_left is None:
                logger.info(
                    "Worker id %s has a heartbeat in Redis: waiting up to %.1f s to see "
                    "whether that worker is alive",
                    self.worker_id,
                    left / 1000,
                )
            last_left = left
            time.sleep(CLAIM_POLL_INTERVAL)
        self.last = time.monotonic()

    def beat(self) -> None:
        self.ledger.heartbeat(self.timeout)
        self.last = time.monotonic()

    def beat_if_due(self, now: float) -> None:
        """Beat when ``interval`` seconds passed since the last beat (``now``: monotonic)."""
        if now - self.last >= self.interval:
            self.last = now
            self.ledger.heartbeat(self.timeout)

    def stop(self) -> None:
        self.ledger.stop_beating()
