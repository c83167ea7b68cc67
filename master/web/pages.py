"""The pages: the dashboard, the login form, and ``/healthz``.

The dashboard is one server-rendered page; ``static/dashboard.js`` fills it from the
API (``/api/v1``) every ``REFRESH_MS`` and sends its actions there, with the page's
CSRF token. With ``DASHBOARD_TOKEN`` set, a browser without a session is sent to
``/login``, whose form (CSRF-protected too) sets the session cookie.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from fastapi.templating import Jinja2Templates

from crawler.core.itemkinds import kind_of_spider
from master.web.config import SPIDER_NAME, DashboardConfig, get_config, spiders_of
from master.web.security import (
    CSRF_FIELD,
    SESSION_COOKIE,
    Session,
    authenticate,
    check_csrf,
    csrf_token,
    new_session,
    read_session,
    set_session,
)

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=str(HERE / "templates"))
# the files under /static (a fixed list: no path from the URL reaches the file system)
STATIC = {
    "dashboard.js": "text/javascript",
    "dashboard.css": "text/css",
}
REFRESH_MS = 2000  # the page polls the status this often (the issue asks for <= 2 s)

router = APIRouter(include_in_schema=False)
Config = Annotated[DashboardConfig, Depends(get_config)]


def _page(
    request: Request, config: DashboardConfig, name: str, session: Session | None, **context: object
) -> Response:
    """A template, with the session (created when missing) and its CSRF token."""
    fresh = session is None
    session = session or new_session(authenticated=False)
    response = TEMPLATES.TemplateResponse(
        request,
        name,
        {
            "csrf": csrf_token(config, session),
            "spider": config.keys.spider,
            "spiders": spiders_of(config),
            "token_set": bool(config.token),
            "refresh_ms": REFRESH_MS,
            **context,
        },
    )
    if fresh:
        set_session(response, request, config, session)
    return response


@router.get("/healthz")
def healthz(config: Config) -> PlainTextResponse:
    """200 ``ok`` when Redis answers, 503 otherwise; needs no token (probes)."""
    try:
        config.client.ping()
    except Exception as exc:  # Redis away or refusing: the probe says so
        return PlainTextResponse(f"redis: {type(exc).__name__}", status_code=503)
    return PlainTextResponse("ok")


@router.get("/", response_class=HTMLResponse)
def dashboard(
    request: Request,
    config: Config,
    spider: Annotated[str | None, Query(pattern=SPIDER_NAME)] = None,
) -> Response:
    """The dashboard of one spider's crawl (``?spider=``; tabs lead to the others)."""
    authenticate(request, page=True)
    shown = spider or config.keys.spider
    return _page(
        request,
        config,
        "dashboard.html",
        request.state.session,
        spider=shown,
        kind=kind_of_spider(shown).name,
    )


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, config: Config) -> Response:
    if not config.token:
        return RedirectResponse("/", status_code=303)
    return _page(
        request, config, "login.html", read_session(config, request.cookies.get(SESSION_COOKIE))
    )


@router.post("/login")
def login(
    request: Request,
    config: Config,
    token: Annotated[str, Form(max_length=4096)],
    csrf_token_field: Annotated[str, Form(alias=CSRF_FIELD)] = "",
) -> Response:
    request.state.session = read_session(config, request.cookies.get(SESSION_COOKIE))
    check_csrf(request, "login", csrf_token_field)
    if not config.token or not hmac.compare_digest(token.encode(), config.token.encode()):
        refused = _page(request, config, "login.html", request.state.session, error="Wrong token.")
        refused.status_code = 401
        return refused
    response = RedirectResponse("/", status_code=303)
    set_session(response, request, config, new_session(authenticated=True))
    return response


@router.post("/logout")
def logout(
    request: Request,
    config: Config,
    csrf_token_field: Annotated[str, Form(alias=CSRF_FIELD)] = "",
) -> Response:
    check_csrf(request, authenticate(request, page=True), csrf_token_field)
    response = RedirectResponse("/login" if config.token else "/", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/static/{name}")
def static(request: Request, name: str) -> Response:
    authenticate(request, page=False)
    if name not in STATIC:
        return PlainTextResponse("not found", status_code=404)
    return FileResponse(HERE / "static" / name, media_type=STATIC[name])
