"""Dead letters (``<spider>:dead``) and invalid items (``<spider>:invalid``).

A dead letter (:class:`crawler.core.records.DeadLetter`) is JSON ``{"url", "reason",
"worker", "time", "refused"?, "request"?}`` where ``request`` is the serialized
request as the queue stores it. ``requeue`` puts each record back to work: its
``request`` into the request queue's sorted set with ``ZADD <spider>:requests 0
<request>`` (``keep`` of :mod:`crawler.scheduling.lanes`, which marks the lane index),
or, without one, its URL into ``<spider>:start_urls`` as a seed (validated,
bypassing the "already seeded" check). Each record is moved by one Lua call
that removes it from the list and queues it atomically, so two masters
requeueing at once never queue a record twice, and a crash never loses one.

On a Redis Cluster the list, the shards' queues and the seeds are in different
hash slots, which no script may touch together. There a batch of records is
pushed first (each request into the queue of its site's shard, each seed into
``<spider>:{seeds}:start_urls``), and then each record is removed from the list
(``LREM``): at least once. A crash between the two leaves the records both
queued and in the list; requeueing them again adds nothing for a request still
queued (the queue is a set of payloads) but queues a seed, or a request already
taken by a worker, a second time. Two masters requeueing at once may do the
same; ``vanished`` counts the records another had removed meanwhile (pushed
anyway).

An invalid item (:class:`crawler.core.records.InvalidItem`) is JSON ``{"item",
"errors", "worker", "url", "time"}``: a product the schema or a store rejected,
kept so the site's problem can be seen. Both are listed as their records' fields
(and ``index``); a value that is not a JSON object is listed as ``malformed``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import redis

from crawler.core.keys import CrawlKeys
from crawler.core.records import DeadLetter, InvalidItem, MalformedRecord, as_text
from crawler.policy.seeds import InvalidSeed, Seed, validate_url
from crawler.scheduling.lanes import LANES_LUA, keep_requests

BATCH = 500

# KEYS[1] = <spider>:dead, KEYS[2] = <spider>:requests, KEYS[3] = <spider>:start_urls
# ARGV[1] = the dead letter as stored, ARGV[2] = "request" | "seed", ARGV[3] = payload
REQUEUE_LUA = (
    LANES_LUA
    + """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
    return 0
end
if ARGV[2] == 'request' then
    keep(KEYS[2], {0, ARGV[3]})
else
    redis.call('RPUSH', KEYS[3], ARGV[3])
end
return 1
"""
)


def _record(
    index: int, raw: bytes, decode: Callable[[bytes], DeadLetter | InvalidItem]
) -> dict[str, Any]:
    try:
        out = decode(raw).as_dict()  # "time": epoch or RFC 3339 text, as written
    except MalformedRecord:
        return {"index": index, "malformed": True, "raw": as_text(raw)[:500]}
    out["index"] = index
    return out


def _page(client: redis.Redis, key: str, limit: int, start: int) -> tuple[int, list[bytes]]:
    total = int(client.llen(key))
    stop = -1 if limit <= 0 else start + limit - 1
    raws = cast("list[bytes]", client.lrange(key, start, stop)) if total else []
    return total, raws


def list_dead(
    client: redis.Redis,
    keys: CrawlKeys,
    limit: int = 50,
    start: int = 0,
    reason: str | None = None,
) -> dict[str, Any]:
    """Dead letters from position ``start`` (``limit`` 0: all), as dicts with their ``index``;
    with ``reason``, only those of that reason (``start`` and ``limit`` count those)."""
    if reason is None:
        total, raws = _page(client, keys.dead, limit, start)
        records = [_record(start + i, r, DeadLetter.decode) for i, r in enumerate(raws)]
        return {"total": total, "records": records}
    matching = [(i, raw) for i, raw in _scan(client, keys.dead) if _reason(raw) == reason]
    chosen = matching[start:] if limit <= 0 else matching[start : start + limit]
    records = [_record(i, raw, DeadLetter.decode) for i, raw in chosen]
    return {"total": len(matching), "reason": reason, "records": records}


def _scan(client: redis.Redis, key: str) -> Iterator[tuple[int, bytes]]:
    """Every record of a list with its position, read ``BATCH`` at a time."""
    start = 0
    while True:
        raws = cast("list[bytes]", client.lrange(key, start, start + BATCH - 1))
        yield from enumerate(raws, start=start)
        if len(raws) < BATCH:
            return
        start += BATCH


def _reason(raw: bytes) -> str:
    try:
        return DeadLetter.decode(raw).reason or "(no reason)"
    except MalformedRecord:
        return "(malformed record)"


def dead_reasons(client: redis.Redis, keys: CrawlKeys) -> dict[str, Any]:
    """The dead letters grouped by reason, largest group first: the crawl's error analysis."""
    counts = Counter(_reason(raw) for _, raw in _scan(client, keys.dead))
    groups = [{"reason": reason, "count": n} for reason, n in counts.most_common()]
    return {"total": sum(counts.values()), "reasons": groups}


def list_invalid(
    client: redis.Redis, keys: CrawlKeys, limit: int = 50, start: int = 0
) -> dict[str, Any]:
    """Invalid items from position ``start`` (``limit`` 0: all), with their ``index``."""
    total, raws = _page(client, keys.invalid, limit, start)
    records = [_record(start + i, r, InvalidItem.decode) for i, r in enumerate(raws)]
    return {"total": total, "records": records}


def format_errors(errors: Any) -> str:
    """Validation errors on one line.

    The workers write a list of ``{"field": ..., "message": ...}``; a dict
    field -> messages, a list of strings or a string are shown too.
    """
    if isinstance(errors, dict) and set(errors) <= {"field", "message"} and "message" in errors:
        field_name = errors.get("field")
        return f"{field_name}: {errors['message']}" if field_name else str(errors["message"])
    if isinstance(errors, dict):
        parts = []
        for name, messages in errors.items():
            if isinstance(messages, list):
                messages = ", ".join(str(m) for m in messages)
            parts.append(f"{name}: {messages}")
        return "; ".join(parts)
    if isinstance(errors, list):
        return "; ".join(
            format_errors(e) if isinstance(e, (dict, list)) else str(e) for e in errors
        )
    return "" if errors is None else str(errors)


# a dead letter to move: (as stored, "request" | "seed", payload, the queue of a request)
_Move = tuple[bytes, str, str, str]


@dataclass
class RequeueResult:
    requests: int = 0  # pushed back to <spider>:requests
    seeds: int = 0  # re-seeded into <spider>:start_urls
    skipped: list[dict[str, Any]] = field(default_factory=list)  # left in the list, and why
    vanished: int = 0  # removed by someone else meanwhile
    remaining: int = 0  # dead letters left afterwards

    @property
    def requeued(self) -> int:
        return self.requests + self.seeds


def _target(letter: DeadLetter | None) -> tuple[str, str] | str:
    """("request"|"seed", payload) for a dead letter, or the reason it cannot be requeued."""
    if letter is None:
        return "not a JSON object"
    if letter.request:
        return "request", letter.request
    if not letter.url:
        return "has neither 'request' nor 'url'"
    try:
        return "seed", Seed(url=validate_url(letter.url)).to_json()
    except InvalidSeed as exc:
        return f"url is not a valid seed: {exc}"


def _queue_of(keys: CrawlKeys, payload: str) -> str:
    """The queue a serialized request goes back to: on a cluster, its site's shard's."""
    if not keys.cluster:
        return keys.requests
    from crawler.core.sites import site_key
    from crawler.scheduling.serializer import loads  # brings Scrapy: only when needed

    return keys.for_site(site_key(str(loads(payload)["url"]))).requests


def _move_atomically(client: redis.Redis, keys: CrawlKeys, planned: list[_Move]) -> list[bool]:
    """One Lua call per dead letter: removed from the list and queued together."""
    script = client.register_script(REQUEUE_LUA)
    pipe = client.pipeline(transaction=False)
    for raw, kind, payload, queue in planned:
        script(keys=[keys.dead, queue, keys.start_urls], args=[raw, kind, payload], client=pipe)
    return [bool(moved) for moved in pipe.execute()]


def _move_push_first(client: redis.Redis, keys: CrawlKeys, planned: list[_Move]) -> list[bool]:
    """On a cluster: push every request (ZADD into its shard's queue) and seed (RPUSH)
    first, then take the letters off the list; True where this call removed the letter."""
    pipe = client.pipeline(transaction=False)
    for _, kind, payload, queue in planned:
        if kind == "request":
            keep_requests(pipe, queue, {payload: 0})
        else:
            pipe.rpush(keys.start_urls, payload)
    pipe.execute()
    pipe = client.pipeline(transaction=False)
    for raw, _, _, _ in planned:
        pipe.lrem(keys.dead, 1, raw)  # type: ignore[arg-type]
    return [bool(removed) for removed in pipe.execute()]


def requeue(
    client: redis.Redis, keys: CrawlKeys, limit: int = 0, reason: str | None = None
) -> RequeueResult:
    """Move dead letters back to work (``limit`` 0: all of them; ``reason``: only those of
    that reason): one atomic call each on one Redis, push then remove on a cluster."""
    result = RequeueResult()
    if reason is None:
        stop = -1 if limit <= 0 else limit - 1
        raws = cast("list[bytes]", client.lrange(keys.dead, 0, stop))  # decode_responses=False
    else:
        raws = [raw for _, raw in _scan(client, keys.dead) if _reason(raw) == reason]
        raws = raws if limit <= 0 else raws[:limit]
    move = _move_push_first if keys.cluster else _move_atomically
    for offset in range(0, len(raws), BATCH):
        planned: list[_Move] = []
        for index, raw in enumerate(raws[offset : offset + BATCH], start=offset):
            try:
                letter: DeadLetter | None = DeadLetter.decode(raw)
            except MalformedRecord:
                letter = None
            target = _target(letter)
            if not isinstance(target, str):
                try:
                    planned.append((raw, *target, _queue_of(keys, target[1])))
                    continue
                except (ValueError, KeyError, TypeError) as exc:
                    target = f"its request cannot be read ({exc})"
            url = letter.url if letter is not None else None
            result.skipped.append({"index": index, "url": url, "reason": target})
        for (_, kind, _, _), moved in zip(planned, move(client, keys, planned), strict=True):
            if not moved:
                result.vanished += 1
            elif kind == "request":
                result.requests += 1
            else:
                result.seeds += 1
    result.remaining = int(client.llen(keys.dead))
    return result


def clear_dead(client: redis.Redis, keys: CrawlKeys, reason: str | None = None) -> int:
    """Delete the dead-letter list (``reason``: only the records of that reason, each
    removed by value); return how many records were deleted."""
    if reason is not None:
        raws = [raw for _, raw in _scan(client, keys.dead) if _reason(raw) == reason]
        pipe = client.pipeline(transaction=False)
        for raw in raws:
            pipe.lrem(keys.dead, 1, raw)  # type: ignore[arg-type]
        return sum(int(n) for n in pipe.execute()) if raws else 0
    pipe = client.pipeline(transaction=True)
    pipe.llen(keys.dead)
    pipe.delete(keys.dead)
    count, _ = pipe.execute()
    return int(count)
