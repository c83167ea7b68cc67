"""JSON serializer for the shared request queue (``SCHEDULER_SERIALIZER``).

scrapy-redis pickles requests by default: anyone who can write to Redis can then
run code on every worker, and pickles are large. This module stores the dict of
``Request.to_dict()`` as compact JSON instead, leaving out every field that has
its default value. Bytes (headers, body) are stored as latin-1 text, which maps
every byte to one code point and back. ``meta`` and ``cb_kwargs`` must hold JSON
values, which the ``ecommerce`` spider guarantees.

The ``lease`` entry of ``meta`` belongs to the worker that popped the request
and is never written to Redis.
"""

from __future__ import annotations

import json
from typing import Any

LEASE_META_KEY = "lease"

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
