"""The dashboard's safety points, each tried: the token (401, Bearer, the login form and
its cookie), CSRF, loopback only without a token (the ``--host`` refused, a foreign
``Host`` header refused), bounded bodies, and no secret in the server's output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
import redis

from crawler.core.keys import CrawlKeys
from tests.support.dashboard import DashboardServer, dashboard
from tests.support.net import free_port, wait_for_port
from tools.workers import ROOT

KEYS = CrawlKeys()
TOKEN = "s3cret-token-for-the-test-" + "x" * 16


@pytest.fixture
def guarded(redis_url: str) -> Iterator[DashboardServer]:
    with dashboard(redis_url, token=TOKEN, max_body=64 * 1024) as running:
        yield running


def csrf_of(page: str) -> str:
    match = re.search(r'<meta name="csrf-token" content="([0-9a-f]+)">', page)
    assert match, page[:500]
    return match.group(1)


def test_without_the_token_every_call_is_refused(guarded: DashboardServer) -> None:
    with httpx.Client(base_url=guarded.url, timeout=30) as client:
        for method, path in [
            ("GET", "/api/v1/status"),
            ("GET", "/api/v1/products"),
            ("GET", "/api/v1/openapi.json"),
            ("GET", "/api/v1/export"),
            ("POST", "/api/v1/pause"),
            ("POST", "/api/v1/seeds"),
            ("GET", "/static/dashboard.js"),
        ]:
            answer = client.request(method, path)
            assert answer.status_code == 401, (path, answer.text)
            assert answer.headers["www-authenticate"] == "Bearer"
        wrong = client.get("/api/v1/status", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert client.get("/").headers["location"] == "/login"  # pages: to the login form
        assert client.get("/healthz").text == "ok"  # probes need no token
        right = client.get("/api/v1/status", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200 and right.json()["spider"] == "ecommerce"
        # a Bearer call carries no ambient credential: it needs no CSRF token
        paused = client.post("/api/v1/pause", headers={"Authorization": f"Bearer {TOKEN}"})
        assert paused.status_code == 200


def test_login_form_sets_a_strict_httponly_session(
    guarded: DashboardServer, redis_client: redis.Redis
) -> None:
    with httpx.Client(base_url=guarded.url, timeout=30) as browser:
        form = browser.get("/login")
        csrf = csrf_of(form.text)
        # the login form is CSRF-protected too
        forged = browser.post("/login", data={"token": TOKEN})
        assert forged.status_code == 403
        bad = browser.post("/login", data={"token": "wrong", "csrf_token": csrf})
        assert bad.status_code == 401 and "Wrong token." in bad.text
        assert "dashboard_session" not in str(bad.headers)
        good = browser.post("/login", data={"token": TOKEN, "csrf_token": csrf})
        assert good.status_code == 303 and good.headers["location"] == "/"
        cookie = good.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie, cookie
        assert TOKEN not in cookie
        page = browser.get("/")
        assert page.status_code == 200 and "Submit URLs" in page.text
        csrf = csrf_of(page.text)
        assert browser.get("/api/v1/status").status_code == 200
        # a write with the cookie alone (what a forged cross-site form sends) is refused
        assert browser.post("/api/v1/pause").status_code == 403
        assert browser.post("/api/v1/pause", headers={"X-CSRF-Token": "0" * 64}).status_code == 403
        assert not redis_client.exists(KEYS.paused)
        assert browser.post("/api/v1/pause", headers={"X-CSRF-Token": csrf}).status_code == 200
        assert redis_client.exists(KEYS.paused)
        out = browser.post("/logout", data={"csrf_token": csrf})
        assert out.headers["location"] == "/login"
        browser.cookies.clear()
        assert browser.get("/api/v1/status").status_code == 401


def test_without_a_token_browsers_still_need_the_csrf_token(
    redis_url: str, redis_client: redis.Redis
) -> None:
    with dashboard(redis_url) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        # a page of another site posting here: its browser sends an Origin, no token
        cross = client.post("/api/v1/pause", headers={"Origin": "https://evil.example"})
        assert cross.status_code == 403
        cross = client.post(
            "/api/v1/seeds",
            content="http://127.0.0.1:8001/\n",
            headers={"Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site"},
        )
        assert cross.status_code == 403
        assert not redis_client.exists(KEYS.paused) and not redis_client.exists(KEYS.start_urls)
        # the dashboard's own page gives the session and its token
        csrf = csrf_of(client.get("/").text)
        ok = client.post("/api/v1/pause", headers={"Origin": server.url, "X-CSRF-Token": csrf})
        assert ok.status_code == 200
        # a program (no cookie, no Origin) on loopback needs nothing
        client.cookies.clear()
        assert client.post("/api/v1/resume").status_code == 200
        # DNS rebinding: a foreign name for this address is refused without a token
        rebound = client.get("/api/v1/status", headers={"Host": f"evil.example:{server.port}"})
        assert rebound.status_code == 400


def test_oversized_bodies_are_refused(guarded: DashboardServer, redis_client: redis.Redis) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/plain"}
    big = ("http://127.0.0.1:8001/product/%d\n" * 3000 % tuple(range(3000))).encode()
    assert len(big) > 64 * 1024
    with httpx.Client(base_url=guarded.url, timeout=30) as client:
        answer = client.post("/api/v1/seeds", content=big, headers=auth)
        assert answer.status_code == 413
        assert "over 65536 bytes" in answer.json()["detail"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
            for start in range(0, len(big), 8192):
                yield big[start : start + 8192]

        answer = client.post("/api/v1/seeds", content=chunks(), headers=auth)
        assert answer.status_code == 413
        assert not redis_client.exists(KEYS.start_urls)
        small = client.post("/api/v1/seeds", content=big[:2000], headers=auth)
        assert small.status_code == 200 and small.json()["accepted"] > 50  # under the bound


def serve(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "master", "serve", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_serve_refuses_other_hosts_without_a_token(redis_url: str) -> None:
    env = {"REDIS_URL": redis_url, "DASHBOARD_TOKEN": ""}
    for host in ("0.0.0.0", "192.168.1.5", "::"):
        process = serve("--host", host, "--port", str(free_port()), env=env)
        out, _ = process.communicate(timeout=60)
        assert process.returncode == 2, out
        lines = out.strip().splitlines()
        assert len(lines) == 1 and "DASHBOARD_TOKEN" in lines[0] and host in lines[0], out


def test_serve_with_a_token_never_prints_it(redis_url: str) -> None:
    port = free_port()
    process = serve(
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        env={"REDIS_URL": redis_url, "DASHBOARD_TOKEN": TOKEN},
    )
    try:
        wait_for_port(port, timeout=60)
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=30) as client:
            assert client.get("/healthz").text == "ok"
            auth = {"Authorization": f"Bearer {TOKEN}"}
            assert client.get("/api/v1/status", headers=auth).status_code == 200
            assert client.get("/api/v1/status").status_code == 401
            csrf = csrf_of(client.get("/login").text)
            client.post("/login", data={"token": TOKEN, "csrf_token": csrf})
            client.post("/login", data={"token": TOKEN + "x", "csrf_token": csrf})
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=60)
    assert "dashboard on http://0.0.0.0:" in out and "token required" in out
    assert "GET /api/v1/status" in out  # the access log is on...
    assert TOKEN not in out  # ...and holds no secret
