"""The request queue's contents, in pop order, for the tests (reads whole lists)."""

from __future__ import annotations

from typing import Any

from crawler.scheduling.lanes import KEYED, index_key


def queue_contents(client: Any, queue: str) -> list[tuple[bytes, float]]:
    """Every (payload, score) of ``queue``, in the order pops hand them out (waiting
    retries first, due or not). Reads whole lists: for inspection and tests, not a
    deep queue."""
    keyed = client.zrange(queue, 0, -1, withscores=True)
    names = [name.decode() for name in client.zrange(index_key(queue), 0, -1)]
    names = [name for name in names if name != KEYED]
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.lrange(f"{queue}:{name}", 0, -1)
    entries = [(float(score), 0, n, payload) for n, (payload, score) in enumerate(keyed)]
    for name, payloads in zip(names, pipe.execute() if names else [], strict=True):
        entries += [(float(name), 1, n, payload) for n, payload in enumerate(payloads)]
    return [(payload, score) for score, _, _, payload in sorted(entries)]
