"""The records workers and the master exchange through Redis: one type, one encoder, one decoder.

* ``<s>:workers`` (hash, field: the worker id): :class:`WorkerRecord`, written by
  :mod:`crawler.extensions.workerstats`, read by ``master status``, ``report``
  and ``metrics``;
* ``<s>:dead`` (list): :class:`DeadLetter`, written by the lease tracker, read
  by ``master dead`` (list, requeue);
* ``<s>:invalid`` (list): :class:`InvalidItem`, written by
  :mod:`crawler.pipelines.rejects`, read by ``master invalid``;
* ``<s>:paused`` (string): :class:`PauseMarker`, set by ``master pause``, read by
  ``master status`` and ``resume`` (the workers only test that it exists);
* ``<s>:stats`` (hash of counters): the field names in :class:`StatsFields`.

``encode()`` gives the JSON text stored in Redis; its keys, their order and their
types are the wire format (readers of older versions parse it too).
``decode(raw)`` takes what Redis returns, ``bytes`` or ``str``, and tolerates
what the master always tolerated: missing keys, values of the wrong type, and
records written by hand or by older workers. A value that is not a JSON object
at all raises :class:`MalformedRecord` where the reader has to say so (dead
letters, invalid items); a worker record or a pause marker is never refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

# --- tolerant reading of Redis values ------------------------------------------------


def as_text(value: Any) -> str:
    """``str`` of a Redis value (``bytes`` decoded as UTF-8, bad bytes replaced)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def as_float(value: Any) -> float | None:
    """A number from a number or a numeric text; ``None`` for anything else, NaN included."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN -> None


def as_int(value: Any) -> int:
    number = as_float(value)
    return int(number) if number is not None else 0


def as_epoch(value: Any) -> float | None:
    """Seconds since the epoch from a number or an ISO 8601 / RFC 3339 text, else ``None``."""
    number = as_float(value)
    if number is not None or not isinstance(value, str):
        return number
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def loads_json(raw: Any) -> Any:
    """JSON from a Redis value, or ``None`` when it is not JSON."""
    try:
        return json.loads(as_text(raw))
    except (ValueError, TypeError):
        return None


def _moment(value: Any) -> float | str | None:
    """A time as written: epoch seconds (a number) or RFC 3339 text; anything else is ``None``."""
    if isinstance(value, str):
        return value
    return as_float(value)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


class MalformedRecord(ValueError):
    """The stored value is not a JSON object."""


def _object(raw: Any) -> dict[str, Any]:
    data = loads_json(raw)
    if not isinstance(data, dict):
        raise MalformedRecord(f"not a JSON object: {as_text(raw)[:80]!r}")
    return data


# --- <spider>:workers -----------------------------------------------------------------


@dataclass
class WorkerRecord:
    """One worker's figures, refreshed by the worker while it runs and written once more at close.

    ``state`` is ``running``, ``paused`` or ``finished``; times are epoch
    seconds; ``elapsed`` and ``idle_tail`` (time between the last page parsed
    and the close) are seconds, ``pages_per_min`` is over the active time;
    ``store`` names the product store (``sqlite:PATH``, a redacted DSN, ...).
    ``live`` is the reader's knowledge, never stored: whether the worker's
    heartbeat ``<spider>:alive:<worker>`` exists.
    """

    worker: str
    host: str = ""
    pid: int = 0
    state: str = "unknown"
    started_at: float | None = None
    updated_at: float | None = None
    finished_at: float | None = None
    elapsed: float = 0.0
    idle_tail: float = 0.0
    pages: int = 0
    items: int = 0
    pages_per_min: float = 0.0
    store: str = ""
    finish_reason: str | None = None
    live: bool = False

    def encode(self) -> str:
        """The JSON value of the worker's field in ``<spider>:workers``."""
        return json.dumps(
            {  # the order the workers have always written
                "worker": self.worker,
                "host": self.host,
                "pid": self.pid,
                "state": self.state,
                "started_at": self.started_at,
                "updated_at": self.updated_at,
                "finished_at": self.finished_at,
                "store": self.store,
                "finish_reason": self.finish_reason,
                "elapsed": self.elapsed,
                "idle_tail": self.idle_tail,
                "pages": self.pages,
                "items": self.items,
                "pages_per_min": self.pages_per_min,
            }
        )

    @classmethod
    def decode(
        cls, raw: Any, field: Any = b"", live: bool = False, now: float | None = None
    ) -> WorkerRecord:
        """The record stored under ``field`` (the worker id, used when the JSON has none).

        Missing or unusable figures are derived where they can be: ``elapsed``
        from the timestamps (up to ``now`` for a live worker), ``pages_per_min``
        from pages over the active time; ``idle_tail`` is kept within ``elapsed``.
        """
        data = loads_json(raw)
        if not isinstance(data, dict):
            data = {}
        worker = str(data.get("worker") or as_text(field))
        started = as_float(data.get("started_at"))
        updated = as_float(data.get("updated_at"))
        finished = as_float(data.get("finished_at"))
        elapsed = as_float(data.get("elapsed"))
        if elapsed is None:
            end = finished or updated or (now if live else None)
            elapsed = max(0.0, end - started) if end is not None and started is not None else 0.0
        idle_tail = min(max(0.0, as_float(data.get("idle_tail")) or 0.0), elapsed)
        pages = as_int(data.get("pages"))
        rate = as_float(data.get("pages_per_min"))
        if rate is None:
            active = elapsed - idle_tail
            rate = pages * 60.0 / active if active > 0 else 0.0
        reason = data.get("finish_reason")
        return cls(
            worker=worker,
            host=str(data.get("host") or ""),
            pid=as_int(data.get("pid")),
            state=str(data.get("state") or "unknown"),
            started_at=started,
            updated_at=updated,
            finished_at=finished,
            elapsed=elapsed,
            idle_tail=idle_tail,
            pages=pages,
            items=as_int(data.get("items")),
            pages_per_min=rate,
            store=str(data.get("store") or ""),
            finish_reason=str(reason) if reason is not None else None,
            live=live,
        )

    @property
    def active(self) -> float:
        """Seconds spent working: elapsed minus the idle time before closing."""
        return max(0.0, self.elapsed - self.idle_tail)

    @property
    def lost(self) -> bool:
        """The record says the worker is at work, but its heartbeat has expired: the worker
        is *stale* (cut off from Redis, stalled, or killed) in ``master status``, the API
        and the dashboard."""
        return not self.live and self.state not in ("finished",)

    def end_time(self, now: float) -> float | None:
        """When this worker stopped (finished_at), or now while live, or its last update."""
        if self.finished_at is not None:
            return self.finished_at
        if self.live:
            return now
        return self.updated_at


# --- <spider>:dead --------------------------------------------------------------------


@dataclass
class DeadLetter:
    """A request that failed for good: kept to be seen, requeued or cleared (``master dead``).

    ``request`` is the serialized request as the queue stores it (requeued as
    it is); without it the URL is requeued as a seed. ``refused``: the worker
    refused it (network rule, seed meta); written only when true. ``time`` is
    epoch seconds (older records: RFC 3339 text).
    """

    url: str | None
    reason: str = ""
    worker: str = ""
    time: float | str | None = None
    refused: bool = False
    request: str | None = None
    #: what was tried before giving up: ``{"status": 429 | "ExceptionName", "time": epoch,
    #: "wait": seconds}`` per failure (the retry policy's history), oldest first
    history: list[Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON object as stored: ``refused``, ``request``, ``history`` only when set."""
        data: dict[str, Any] = {
            "url": self.url,
            "reason": self.reason,
            "worker": self.worker,
            "time": self.time,
        }
        if self.refused:
            data["refused"] = True
        if self.request is not None:
            data["request"] = self.request
        if self.history:
            data["history"] = self.history
        return data

    def encode(self) -> str:
        """The JSON pushed to ``<spider>:dead``."""
        return json.dumps(self.as_dict())

    @classmethod
    def decode(cls, raw: Any) -> DeadLetter:
        """A stored dead letter (:class:`MalformedRecord` if it is not a JSON object).

        A ``url`` or ``request`` that is not a non-empty text counts as absent.
        """
        data = _object(raw)
        url = data.get("url")
        request = data.get("request")
        history = data.get("history")
        return cls(
            url=url if isinstance(url, str) else None,
            reason=_text(data.get("reason")),
            worker=_text(data.get("worker")),
            time=_moment(data.get("time")),
            refused=data.get("refused") is True,
            request=request if isinstance(request, str) and request else None,
            history=history if isinstance(history, list) and history else None,
        )


# --- <spider>:invalid -----------------------------------------------------------------


@dataclass
class InvalidItem:
    """An item the schema or a store refused, kept with its errors (``master invalid``).

    ``item`` is the item as a JSON object (its ``repr`` when it could not be
    converted); ``errors`` a list of ``{"field": name or null, "message": text}``
    (older records: a dict field -> messages, or a list of texts, kept as they
    are); ``time`` RFC 3339 UTC text (older records: epoch seconds).
    """

    item: Any
    errors: Any
    worker: str = ""
    url: str | None = None
    time: float | str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "errors": self.errors,
            "worker": self.worker,
            "url": self.url,
            "time": self.time,
        }

    def encode(self) -> str:
        """The JSON pushed to ``<spider>:invalid``.

        ASCII: text that cannot be encoded as UTF-8 (a lone surrogate, a reason to
        be rejected) is kept escaped. ``default=repr``: a value that is not JSON is
        kept as text.
        """
        return json.dumps(self.as_dict(), ensure_ascii=True, default=repr)

    @classmethod
    def decode(cls, raw: Any) -> InvalidItem:
        """A stored invalid item (:class:`MalformedRecord` if it is not a JSON object).

        Without a ``url`` of its own, the item's ``url`` is taken.
        """
        data = _object(raw)
        item = data.get("item")
        url = data.get("url")
        if not url and isinstance(item, dict):
            url = item.get("url")
        return cls(
            item=item,
            errors=data.get("errors"),
            worker=_text(data.get("worker")),
            url=url if isinstance(url, str) else None,
            time=_moment(data.get("time")),
        )


# --- <spider>:paused ------------------------------------------------------------------


@dataclass
class PauseMarker:
    """Present while the crawl is paused: since when (epoch seconds) and by whom (``user@host``)."""

    since: float | None
    by: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"since": self.since, "by": self.by}

    def encode(self) -> str:
        """The JSON value ``master pause`` sets."""
        return json.dumps(self.as_dict())

    @classmethod
    def decode(cls, raw: Any) -> PauseMarker:
        """The marker; a value that is not a JSON object is kept as ``by`` (200 characters)."""
        data = loads_json(raw)
        if not isinstance(data, dict):
            return cls(since=None, by=as_text(raw)[:200])
        return cls(since=as_float(data.get("since")), by=str(data.get("by") or ""))


# --- <spider>:stats -------------------------------------------------------------------


class StatsFields:
    """The fields of ``<spider>:stats``, the crawl-wide counters (``HINCRBY``), and their writers.

    The master reads them all (``status``, ``metrics``, which also exports every
    numeric field as ``crawl_stats{field}``).
    """

    #: items written to a product store (the storage pipelines, per batch)
    ITEMS_STORED: Final = "items_stored"
    #: listed products (cards of listing pages) written to a product store as
    #: observations (the storage pipelines, per batch; not in ``items_stored``)
    LISTED_STORED: Final = "listed_stored"
    #: items refused by the schema or by a store (:mod:`crawler.pipelines.rejects`)
    ITEMS_INVALID: Final = "items_invalid"
    #: seeds and requests a worker refused (network rule, seed meta): dead letters with
    #: ``refused`` (the lease tracker)
    REQUESTS_REFUSED: Final = "requests_refused"
    #: times a worker waited for a site's shared budget, and the milliseconds waited
    #: (the politeness script, :mod:`crawler.policy.politeness`)
    POLITENESS_WAITS: Final = "politeness_waits"
    POLITENESS_WAIT_MS: Final = "politeness_wait_ms"
    #: times a site's shared rate was cut (429, 503, timeouts) and climbed back to its
    #: budget (the politeness scripts)
    SITE_RATE_CUTS: Final = "site_rate_cuts"
    SITE_RATE_RESTORES: Final = "site_rate_restores"
    #: retries queued to wait in Redis (the retry middleware's pushes)
    RETRIES_DELAYED: Final = "retries_delayed"
