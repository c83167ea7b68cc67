"""A warning that repeats while a condition lasts (Redis away, a failover) is logged once
per interval, with how many times it happened meanwhile, not at every loop tick."""

from __future__ import annotations

import logging
import time


class EveryInterval:
    """``warn(logger, msg, *args)``: at WARNING at most once every ``interval`` seconds;
    the ones in between at DEBUG, counted in the next WARNING."""

    def __init__(self, interval: float = 5.0) -> None:
        self.interval = interval
        self._last = float("-inf")
        self._quiet = 0

    def warn(self, logger: logging.Logger, msg: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            self._quiet += 1
            logger.debug(msg, *args)
            return
        if self._quiet:
            msg += f" (and {self._quiet} more time(s) in the last {now - self._last:.0f} s)"
        self._last, self._quiet = now, 0
        logger.warning(msg, *args)
