"""JSON serializer for the shared request queue (``SCHEDULER_SERIALIZER``).

scrapy-redis pickles requests by default: anyone who can write to Redis can then
run code on every worker, and pickles are large. This module stores the dict of
``Request.to_dict()`` as compact JSON instead. Bytes (headers, body) are stored
as latin-1 text, which maps every byte to one code point and back. ``meta`` and
``cb_kwargs`` must hold JSON values, which the ``ecommerce`` spider guarantees.

A queued request is most of a crawl's Redis memory, so a payload carries only
what cannot be derived when it is popped (``docs/benchmarks.md``, "Frontier
memory"): one-letter keys (:data:`SHORT_KEYS`; any other key of the dict is kept
under its own name), no field with its default value (:data:`DEFAULTS`: the
``ecommerce`` spider's ``parse`` and ``errback`` are the default callbacks, a
request without one says ``null``), and no ``meta["site"]`` when it is the
site of the URL (:func:`crawler.core.sites.site_key`; a request without one says
``"site": null``). Every other meta key is kept as it is. A typical product
link: ``{"u":"https://www.example-shop.com/p/...-1618.html","m":{"depth":2}}``.
Payloads of the earlier format (full key names: ``{"url": ...}``) still decode.

The lease a request carries (``meta["lease"]``, see :mod:`crawler.leasing.meta`)
belongs to the worker that popped the request and is never written to Redis,
nor is a ``Proxy-Authorization`` header (proxy credentials stay in the worker's
``PROXY_LIST``).
"""

from __future__ import annotations

import json
from typing import Any

from scrapy import Request

from crawler.core.sites import site_key
from crawler.leasing.meta import LEASE_META_KEY

# Request.to_dict() key -> key in a payload
SHORT_KEYS = {
    "url": "u",
    "callback": "c",
    "errback": "e",
    "meta": "m",
    "priority": "p",
    "headers": "h",
    "body": "b",
    "cookies": "k",
    "method": "x",
    "encoding": "n",
    "dont_filter": "d",
    "flags": "f",
    "cb_kwargs": "a",
}
_LONG_KEYS = {short: key for key, short in SHORT_KEYS.items()}

# Values left out of a payload (the defaults of Request, and the spider's callbacks)
DEFAULTS: dict[str, Any] = {
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
    "callback": "parse",
    "errback": "errback",
}
SITE_META_KEY = "site"


def _compact_meta(meta: dict[str, Any], url: str) -> dict[str, Any]:
    meta = {k: v for k, v in meta.items() if k != LEASE_META_KEY}
    site = meta.get(SITE_META_KEY)
    if SITE_META_KEY not in meta:
        meta[SITE_META_KEY] = None  # says "no site": the decoder derives one otherwise
    elif isinstance(site, str) and site == site_key(url):
        del meta[SITE_META_KEY]
    return meta


def dumps(obj: dict[str, Any]) -> bytes:
    data: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "meta":
            value = _compact_meta(value, obj["url"])
        if key in DEFAULTS and value == DEFAULTS[key]:
            continue
        if key == "headers":
            value = [
                [name.decode("latin-1"), [v.decode("latin-1") for v in values]]
                for name, values in value.items()
                if name.lower() != b"proxy-authorization"
            ]
            if not value:
                continue
        elif key == "body":
            value = value.decode("latin-1")
        data[SHORT_KEYS.get(key, key)] = value
    for key in ("callback", "errback"):  # absent: the spider's; None must be said
        if key not in obj or obj[key] is None:
            data[SHORT_KEYS[key]] = None
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def loads(raw: bytes | str) -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(raw)
    if "url" in stored:  # the earlier format: full key names, no derived values
        data = stored
    else:
        data = {key: value for key, value in DEFAULTS.items() if key in ("callback", "errback")}
        data.update((_LONG_KEYS.get(key, key), value) for key, value in stored.items())
        meta = dict(data.get("meta") or {})
        if SITE_META_KEY not in meta:
            meta[SITE_META_KEY] = site_key(data["url"])
        elif meta[SITE_META_KEY] is None:
            del meta[SITE_META_KEY]
        data["meta"] = meta
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
