"""The user-agent pool: drawn once at start-up, from fake-useragent's real database."""

from __future__ import annotations

import fake_useragent
from scrapy import Request
from scrapy.utils.project import get_project_settings
from scrapy.utils.test import get_crawler
from scrapy_fake_useragent.providers import FakeUserAgentProvider

from crawler.middlewares.useragent import RotatingUserAgentMiddleware, _filtered_draw

_AGENT_SETTINGS = ("FAKEUSERAGENT_PROVIDERS", "FAKEUSERAGENT_FALLBACK", "USER_AGENT")


def _middleware(**settings: object) -> RotatingUserAgentMiddleware:
    """The middleware with the project's user-agent settings and ``settings``."""
    project = get_project_settings()
    ours = {name: project[name] for name in _AGENT_SETTINGS}
    return RotatingUserAgentMiddleware(get_crawler(settings_dict=ours | settings))


def test_the_pool_holds_agents_of_fake_useragents_filtered_database() -> None:
    middleware = _middleware(USERAGENT_POOL_SIZE=100)
    provider = middleware._ua_provider
    assert isinstance(provider, FakeUserAgentProvider)
    database = {entry["useragent"] for entry in provider._ua._filter_useragents()}
    pool = middleware._pool
    # a hundred draws from thousands of weighted agents: many distinct ones, each a
    # real agent of the database (not the fallback), sorted and each once
    assert 10 <= len(pool) <= 100
    assert set(pool) <= database
    assert pool == sorted(set(pool))
    seen = set()
    for _ in range(200):
        request = Request("http://shop.test/p/1")
        middleware.process_request(request)
        agent = request.headers[b"User-Agent"].decode()
        assert agent in pool
        seen.add(agent)
    assert len(seen) > 1  # it rotates


def test_the_database_is_filtered_once_for_the_whole_pool(monkeypatch) -> None:
    # fake-useragent's own draw filters its whole database (about 6 ms of CPU each):
    # the pool's hundred draws filter it once (the real method, counted)
    calls = []
    real = fake_useragent.UserAgent._filter_useragents

    def counted(self, *args, **kwargs):
        calls.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(fake_useragent.UserAgent, "_filter_useragents", counted)
    middleware = _middleware(USERAGENT_POOL_SIZE=100)
    assert len(calls) == 1 and len(middleware._pool) >= 10
    middleware._ua_provider.get_random_ua()  # the provider's own draw still filters
    assert len(calls) == 2


def test_other_providers_draw_as_before() -> None:
    fixed = _middleware(
        FAKEUSERAGENT_PROVIDERS=["scrapy_fake_useragent.providers.FixedUserAgentProvider"],
        USER_AGENT="fixed-agent/1.0",
    )
    assert _filtered_draw(fixed._ua_provider, fixed._random) is None
    assert fixed._pool == ["fixed-agent/1.0"]
    chrome = _middleware(FAKE_USERAGENT_RANDOM_UA_TYPE="chrome", USERAGENT_POOL_SIZE=20)
    assert _filtered_draw(chrome._ua_provider, chrome._random) is None  # not "random"
    every = {entry["useragent"] for entry in chrome._ua_provider._ua.data_browsers}
    assert chrome._pool and set(chrome._pool) <= every  # the provider's own draws
    none = _middleware(USERAGENT_POOL_SIZE=0)
    request = Request("http://shop.test/p/1")
    none.process_request(request)
    assert none._pool == [] and request.headers[b"User-Agent"]  # a draw per request
