"""A seed's strategy and scope (crawler/policy/scope.py): validated, compact, carried by
requests."""

from __future__ import annotations

import json

import pytest
from scrapy import Request

from crawler.policy.scope import Scope, scope_error
from crawler.policy.seeds import InvalidSeed, parse_seed
from crawler.scheduling import serializer


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        ({"strategy": "everything"}, "'strategy' must be one of auto, sitemap"),
        ({"max_pages": 0}, "'max_pages' must be a whole number"),
        ({"max_pages": True}, "'max_pages' must be a whole number"),
        ({"max_depth": "3"}, "'max_depth' must be a whole number"),
        ({"allow": "(unclosed"}, "'allow' pattern '(unclosed' is not a valid regex"),
        ({"deny": [1]}, "'deny' must be a regex or a list of regexes"),
        ({"deny": ["x"] * 21}, "more than 20 patterns"),
        ({"render": "sometimes"}, "'render' must be true, false or auto"),
        ({"render": 1}, "'render' must be true, false or auto"),
    ],
)
def test_bad_scopes_are_refused_with_their_reason(meta: dict, reason: str) -> None:
    assert reason in (scope_error(meta) or "")
    with pytest.raises(InvalidSeed, match="must|pattern"):
        parse_seed(json.dumps({"url": "http://shop.test/", "meta": meta}))


def test_a_plain_seed_carries_nothing() -> None:
    assert Scope.from_seed_meta("http://shop.test/", {"source": "x"}).to_meta() == {}
    assert Scope.of({}) == Scope()


def test_the_scope_survives_the_queue_serializer() -> None:
    seed = parse_seed(
        json.dumps(
            {
                "url": "http://shop.test/c/shoes/",
                "meta": {
                    "strategy": "pagination",
                    "max_pages": 50,
                    "max_depth": 2,
                    "allow": "/c/shoes/|/p/",
                    "deny": ["\\?sort="],
                },
            }
        )
    )
    scope = Scope.from_seed_meta(seed.url, seed.meta)
    assert scope.listing == "/c/shoes/" and len(scope.seed_id) == 12
    request = Request(
        "http://shop.test/c/shoes/?page=2", meta={"site": "shop.test", **scope.to_meta()}
    )
    payload = serializer.encode_request(request, None)
    assert len(payload) < 300  # compact: every request of the seed carries it
    back = serializer.loads(payload)
    assert Scope.of(back["meta"]) == scope
    assert scope.allows("http://shop.test/p/a-1.html")
    assert not scope.allows("http://shop.test/c/shoes/?sort=price")
    assert not scope.allows("http://shop.test/c/hats/")


def test_a_scope_forged_in_redis_is_taken_as_the_strictest() -> None:
    assert Scope.of({"scope": {"id": "x", "s": "everything"}}).strategy == "direct"


@pytest.mark.parametrize(
    ("given", "render"), [(True, "true"), ("true", "true"), (False, "false"), ("false", "false")]
)
def test_render_is_carried_by_every_request_of_the_seed(given: object, render: str) -> None:
    seed = parse_seed(json.dumps({"url": "http://shop.test/", "meta": {"render": given}}))
    scope = Scope.from_seed_meta(seed.url, seed.meta)
    assert scope.render == render and not scope.plain
    payload = serializer.encode_request(Request("http://shop.test/p/1", meta=scope.to_meta()), None)
    assert Scope.of(serializer.loads(payload)["meta"]).render == render
    # render auto is the plain default: a seed with only it carries nothing
    assert Scope.from_seed_meta("http://shop.test/", {"render": "auto"}).to_meta() == {}
