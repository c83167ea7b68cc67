"""Flow control: components ask the scheduler to stop handing out requests.

A pause (``master pause``) or a storage backlog (database down) must stop a
worker from *taking* new requests while it finishes the ones it holds. Each
component holds the flow under its own name and releases it when done; the
scheduler gives out no request while any hold is active.

:class:`FlowControl` is an extension (``EXTENSIONS``), so there is one per
crawler; components find it with ``FlowControl.of(crawler)`` once the
extensions are built (from an extension: at ``spider_opened`` or later, as
``crawler.get_extension`` requires).

    flow = FlowControl.of(crawler)
    flow.hold("storage: postgres unreachable")
    ...
    flow.release("storage: postgres unreachable")
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


class FlowControl:
    """Named holds on the scheduler of one crawler."""

    def __init__(self) -> None:
        self._holds: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> FlowControl:
        return cls()

    @classmethod
    def of(cls, crawler: Any) -> FlowControl:
        """The crawler's flow control (``crawler.get_extension``); RuntimeError when not enabled."""
        flow = crawler.get_extension(cls)
        if flow is None:
            raise RuntimeError("crawler.core.flow.FlowControl must be enabled in EXTENSIONS")
        return flow

    @property
    def held(self) -> bool:
        return bool(self._holds)

    @property
    def reasons(self) -> list[str]:
        return sorted(self._holds)

    def hold(self, reason: str) -> None:
        if reason not in self._holds:
            self._holds.add(reason)
            logger.warning("Not taking new requests: %s", reason)

    def release(self, reason: str) -> None:
        if reason in self._holds:
            self._holds.discard(reason)
            logger.info("Taking requests again (%s is over)", reason)
