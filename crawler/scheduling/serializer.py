"""JSON serializer for the shared request queue (``SCHEDULER_SERIALIZER``).

scrapy-redis pickles requests by default: anyone who can write to Redis can then
run code on every worker, and pickles are large. This module stores the dict of
``Request.to_dict()`` as compact JSON instead, leaving out every field that has
its default value. Bytes (headers, body) are stored as latin-1 text, which maps
every byte to one code point and back. ``meta`` and ``cb_kwargs`` must hold JSON
values, which the ``ecommerce`` spider guarantees.

The lease a request carries (``meta["lease"]``, see :mod:`crawler.leasing.meta`)
belongs to the worker that popped the request and is never written to Redis,
nor is a ``Proxy-Authorization`` header (proxy credentials stay in the worker's
``PROXY_LIST``).
"""

from __future__ import annotations

import json
from typing import Any

from scrapy import Request

from crawler.leasing.meta import LEASE_META_KEY

_DEFAULTS: dict[str, Any] = {
    "method": "GET",
    "headers": {},
    "body": b"",
    "cookies": {},
    "meta": {},
    "encoding": "utf-8",
    "priority": 0,
    "dont_filter": False,
    "flags": [],
    "cb_kwargs": {},
    "callback": None,
    "errback": None,
}


def dumps(obj: dict[str, Any]) -> bytes:
    data: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "meta" and LEASE_META_KEY in value:
            value = {k: v for k, v in value.items() if k != LEASE_META_KEY}
        if key in _DEFAULTS and value == _DEFAULTS[key]:
            continue
        if key == "headers":
            value = [
                [name.decode("latin-1"), [v.decode("latin-1") for v in values]]
                for name, values in value.items()
                if name.lower() != b"proxy-authorization"
            ]
        elif key == "body":
            value = value.decode("latin-1")
        data[key] = value
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def loads(raw: bytes | str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(raw)
    if "headers" in data:
        data["headers"] = {
            name.encode("latin-1"): [v.encode("latin-1") for v in values]
            for name, values in data["headers"]
        }
    if "body" in data:
        data["body"] = data["body"].encode("latin-1")
    return data


def _own_method(spider: Any, func: Any) -> bool:
    return getattr(func, "__self__", None) is spider and getattr(
        type(spider), func.__name__, None
    ) is getattr(func, "__func__", None)


def request_to_dict(request: Request, spider: Any) -> dict[str, Any]:
    """``request.to_dict(spider=spider)``, without its scan of every spider member.

    Scrapy finds the name of a callback with ``inspect.getmembers(spider)`` for
    each request, which costs more than the rest of the serialization; a bound
    method of the spider's own class is named directly.
    """
    callback, errback = request.callback, request.errback
    if (callback is None or _own_method(spider, callback)) and (
        errback is None or _own_method(spider, errback)
    ):
        data: dict[str, Any] = {
            "url": request.url,
            "callback": callback.__name__ if callback is not None else None,
            "errback": errback.__name__ if errback is not None else None,
            "headers": dict(request.headers),
        }
        for attr in request.attributes:
            data.setdefault(attr, getattr(request, attr))
        if type(request) is not Request:
            data["_class"] = f"{type(request).__module__}.{type(request).__name__}"
        return data
    return request.to_dict(spider=spider)


def encode_request(request: Request, spider: Any) -> bytes:
    """The payload of a request in the shared queue."""
    return dumps(request_to_dict(request, spider))


# Request meta that the downloader and its middlewares set for one attempt.
RUNTIME_META = frozenset(
    {
        LEASE_META_KEY,
        "depth",
        "download_latency",
        "download_slot",
        "download_timeout",
        "is_start_request",
        "rotating_proxy",
        "_auth_proxy",
        "_scheme_proxy",
        "redirect_reasons",
        "redirect_times",
        "redirect_ttl",
        "redirect_urls",
        "retry_times",
        "retry_history",
        "retry_delay",
    }
)


def requeueable(request: Request) -> Request:
    """The request as it should be tried again: no per-attempt headers or meta, unfiltered."""
    meta = {k: v for k, v in request.meta.items() if k not in RUNTIME_META}
    if "rotating_proxy" in request.meta:  # chosen by the rotation: choose again
        meta.pop("proxy", None)
    return request.replace(headers={}, meta=meta, dont_filter=True)
