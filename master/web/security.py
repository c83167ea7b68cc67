"""The dashboard's safety: who may call, from where, with what.

* **Loopback only without a token.** :func:`refusal` says why a ``--host`` is refused
  when ``DASHBOARD_TOKEN`` is unset; without a token the ``Host`` header must name a
  loopback address too (no DNS rebinding from a web page).
* **The token.** With ``DASHBOARD_TOKEN`` set every route but ``/healthz`` and the login
  form needs it: ``Authorization: Bearer <token>`` (programs), or the session cookie the
  login form sets (browsers). Tokens are compared with :func:`hmac.compare_digest`.
* **Sessions.** The cookie ``dashboard_session`` is ``nonce.expiry.authenticated.mac``,
  signed (HMAC-SHA256) with a secret drawn at start; HttpOnly, SameSite=Strict, Secure
  over HTTPS; valid ``SESSION_SECONDS``. Nothing is stored server-side.
* **CSRF.** A state-changing request from a browser (one that carries the session
  cookie, an ``Origin`` or a ``Sec-Fetch-Site`` header) must carry the session's CSRF
  token (``X-CSRF-Token`` header or ``csrf_token`` form field), an HMAC of its nonce.
  Bearer calls carry no ambient credential and need none.
* **Bounded bodies.** :class:`BodyLimit` answers 413 to a body over ``max_body`` bytes
  (``Content-Length`` or counted while reading) before any route sees it.
* **No secret in logs.** The token is never printed; uvicorn's access log shows paths,
  and no route takes the token in a URL.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from master.web.config import DashboardConfig, get_config

SESSION_COOKIE = "dashboard_session"
SESSION_SECONDS = 12 * 3600
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refusal(host: str, token: str | None) -> str | None:
    """Why ``master serve --host host`` must not start, or ``None``."""
    if token or is_loopback(host):
        return None
    return (
        f"error: refusing to serve on {host}: without DASHBOARD_TOKEN the dashboard "
        "serves on a loopback address only (127.0.0.1, ::1, localhost); set "
        "DASHBOARD_TOKEN to serve on other addresses"
    )


def _host_name(header: str) -> str:
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass(frozen=True)
class Session:
    nonce: str
    expires: int
    authenticated: bool

    def payload(self) -> str:
        return f"{self.nonce}.{self.expires}.{int(self.authenticated)}"


def _mac(secret: bytes, text: str) -> str:
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()


def new_session(authenticated: bool) -> Session:
    return Session(secrets.token_urlsafe(18), int(time.time()) + SESSION_SECONDS, authenticated)


def session_cookie(config: DashboardConfig, session: Session) -> str:
    return f"{session.payload()}.{_mac(config.secret, session.payload())}"


def read_session(config: DashboardConfig, cookie: str | None) -> Session | None:
    """The session a cookie names, if its signature holds and it has not expired."""
    if not cookie:
        return None
    payload, _, mac = cookie.rpartition(".")
    if not hmac.compare_digest(mac, _mac(config.secret, payload)):
        return None
    nonce, _, rest = payload.partition(".")
    expires, _, authed = rest.partition(".")
    if not expires.isdigit() or int(expires) < time.time():
        return None
    return Session(nonce, int(expires), authed == "1")


def csrf_token(config: DashboardConfig, session: Session) -> str:
    return _mac(config.secret, f"csrf:{session.nonce}")


def set_session(response: Any, request: Request, config: DashboardConfig, session: Session) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        session_cookie(config, session),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )


def bearer_ok(config: DashboardConfig, request: Request) -> bool:
    scheme, _, sent = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not config.token:
        return False
    return hmac.compare_digest(sent.strip().encode(), config.token.encode())


class LoginRequired(Exception):
    """A page was asked for without the token: the browser is sent to the login form."""


def _check_host(config: DashboardConfig, request: Request) -> None:
    if config.token:
        return
    host = _host_name(request.headers.get("host", ""))
    if not is_loopback(host):
        raise HTTPException(400, f"Host {host!r} refused: without a token only loopback")


def authenticate(request: Request, page: bool) -> str:
    """How the caller is authenticated: ``bearer``, ``session`` or ``open`` (no token set)."""
    config = get_config(request)
    _check_host(config, request)
    session = read_session(config, request.cookies.get(SESSION_COOKIE))
    request.state.session = session
    if not config.token:
        return "open"
    if bearer_ok(config, request):
        return "bearer"
    if session is not None and session.authenticated:
        return "session"
    if page:
        raise LoginRequired()
    raise HTTPException(401, "DASHBOARD_TOKEN required", {"WWW-Authenticate": "Bearer"})


def check_csrf(request: Request, how: str, form_token: str | None = None) -> None:
    """Refuse (403) a browser's state-changing request without its session's CSRF token."""
    if request.method in SAFE_METHODS or how == "bearer":
        return
    session: Session | None = request.state.session
    headers = request.headers
    browser = session is not None or "origin" in headers or "sec-fetch-site" in headers
    if not browser:
        return  # a program without cookies, on loopback without a token
    sent = headers.get(CSRF_HEADER) or form_token or ""
    expected = csrf_token(get_config(request), session) if session is not None else ""
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise HTTPException(403, "CSRF token missing or wrong: reload the page")


def require_api(request: Request) -> None:
    """The dependency of every API route: authenticated, and CSRF-checked when it writes."""
    check_csrf(request, authenticate(request, page=False))


class BodyLimit:
    """ASGI middleware: a request body over ``max_body`` bytes is answered 413."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"detail": f"request body over {self.max_body} bytes"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._refuse(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
