"""``PendingWork``: the leases whose page has work left, and what each waits for.

A page's lease may be finished once two things are true:

* its output is all taken: the lease spider middleware saw the last element the
  callback yielded, so every request it yielded is queued (:meth:`output_done`);
* every item it yielded is safe (:meth:`item_pending` counts them): stored by
  *every* storage pipeline that registered (:meth:`register_store`, signal
  ``items_stored``; e.g. both PostgreSQL and MongoDB when both are configured;
  with none, the end of the pipelines), dropped by validation (kept in
  ``<spider>:invalid``), or failed in a pipeline (:meth:`item_safe`).

Then ``finish(lease)`` is called, and the lease tracker deletes the lease.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class PendingWork:
    """Items and page outputs of this worker's leases that are not safe yet."""

    def __init__(self, finish: Callable[[str], None]) -> None:
        self.finish = finish
        self.stores: set[str] = set()
        self._items: dict[int, str] = {}  # id(item) -> lease
        self._pending: dict[str, int] = {}  # lease -> items not yet safe
        self._output_done: set[str] = set()
        self._stored_in: dict[int, set[str]] = {}  # id(item) -> stores that have it

    @property
    def idle(self) -> bool:
        """No lease waits for an item to be safe."""
        return not self._pending and not self._items

    @property
    def waiting_leases(self) -> set[str]:
        """The leases whose items are not safe yet."""
        return set(self._pending)

    def register_store(self, name: str) -> None:
        """A storage pipeline announces that it sends ``items_stored`` for what it writes.

        Without one, an item is safe once it went through every pipeline
        (``item_scraped``).
        """
        self.stores.add(name)

    def item_pending(self, item: Any, lease: str) -> None:
        if lease:
            self._items[id(item)] = lease
            self._pending[lease] = self._pending.get(lease, 0) + 1

    def output_done(self, lease: str) -> None:
        if not lease:
            return
        if self._pending.get(lease):
            self._output_done.add(lease)
        else:
            self._pending.pop(lease, None)
            self.finish(lease)

    def item_safe(self, item: Any) -> None:
        self._stored_in.pop(id(item), None)
        lease = self._items.pop(id(item), None)
        if lease is None:
            return
        left = self._pending.get(lease, 1) - 1
        if left > 0:
            self._pending[lease] = left
            return
        self._pending.pop(lease, None)
        if lease in self._output_done:
            self._output_done.discard(lease)
            self.finish(lease)

    def item_scraped(self, item: Any) -> None:
        """``item`` went through every pipeline: safe, unless stores acknowledge it."""
        if not self.stores:
            self.item_safe(item)

    def items_stored(self, items: list[Any], store: str | None = None) -> None:
        """``store`` wrote ``items``: each is safe once every registered store has it.

        (``store`` None: the one store there is, or all of them.)
        """
        for item in items:
            if store is not None and len(self.stores) > 1:
                if id(item) not in self._items:
                    continue
                stored_in = self._stored_in.setdefault(id(item), set())
                stored_in.add(store)
                if not self.stores <= stored_in:
                    continue  # another store has yet to write it
            self.item_safe(item)
