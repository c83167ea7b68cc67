"""The lease a request carries: ``request.meta["lease"]``.

A request popped from the shared queue, or made from a seed taken from
``start_urls``, carries the id of its lease (see :mod:`crawler.leasing.ledger`)
in its meta under :data:`LEASE_META_KEY`. The id belongs to the worker that
took the request: the queue's serializer never writes it to Redis
(:mod:`crawler.scheduling.serializer`), and a request queued in its place (a
redirect, a retry) takes the lease over, so whoever queues it calls
:func:`take_lease`.
"""

from __future__ import annotations

from typing import Any

LEASE_META_KEY = "lease"


def lease_of(request: Any) -> str:
    """The lease id ``request`` carries; ``""`` for none (a new link) or no request."""
    if request is None:
        return ""
    lease: str = request.meta.get(LEASE_META_KEY, "")
    return lease


def take_lease(request: Any) -> str:
    """Remove the lease id from ``request`` and return it (``""`` for none).

    The caller now answers for the lease: it finishes it, or queues the request
    with it so that the push finishes it.
    """
    lease: str = request.meta.pop(LEASE_META_KEY, "")
    return lease
