"""The dashboard's pure rules: which hosts count as loopback, signed sessions, cursors."""

from __future__ import annotations

import argparse
import time

import pytest

from crawler.core.keys import CrawlKeys
from master.catalog import ProductQuery, decode_cursor, encode_cursor
from master.web.config import DashboardConfig
from master.web.security import (
    Session,
    csrf_token,
    is_loopback,
    new_session,
    read_session,
    refusal,
    session_cookie,
)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("example.com", False),
        ("localhost.evil.example", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert (refusal(host, None) is None) is loopback
    assert refusal(host, "a-token") is None  # with a token any address may be served


def config() -> DashboardConfig:
    return DashboardConfig("redis://127.0.0.1:1/0", CrawlKeys(), argparse.Namespace())


def test_sessions_are_signed_and_expire() -> None:
    cfg = config()
    session = new_session(authenticated=True)
    cookie = session_cookie(cfg, session)
    assert read_session(cfg, cookie) == session
    nonce, expires, authed, mac = cookie.split(".")
    assert read_session(cfg, f"{nonce}.{expires}.1.{'0' * len(mac)}") is None
    assert read_session(config(), cookie) is None  # another server's key
    anonymous = session_cookie(cfg, Session(nonce, session.expires, False))
    assert read_session(cfg, anonymous.replace(".0.", ".1.", 1)) is None  # raised to login
    expired = Session(nonce, int(time.time()) - 1, True)
    assert read_session(cfg, session_cookie(cfg, expired)) is None
    assert read_session(cfg, None) is None and read_session(cfg, "garbage") is None
    assert csrf_token(cfg, session) != csrf_token(cfg, new_session(True))


def test_cursors_round_trip_and_refuse_garbage() -> None:
    url = "https://shop.example/p/ä?x=1&y=2"
    assert decode_cursor(encode_cursor(url)) == url
    for bad in ("%%%", "", "not base64!", "_-_"):
        with pytest.raises(ValueError):
            decode_cursor(bad)


def test_like_wildcards_are_characters() -> None:
    params = ProductQuery(q="50%_off", site="a_b.example").sql_params()
    assert params["q_like"] == "%50\\%\\_off%"
    assert params["http"] == "http://a\\_b.example/%"
