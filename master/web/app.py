"""The application factory of ``master serve``: FastAPI (Starlette) routes, served by uvicorn.

Why FastAPI: the routes declare their parameters once and get validation and the
OpenAPI document (``/api/v1/openapi.json``) from them; dependencies hand each route
the crawl's Redis client, the product store and the authentication check, so a route
is a call of the command's own function. Its Swagger and ReDoc pages are off: they
load their scripts from a CDN.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from crawler.core.layout import LayoutMismatch
from master.web import api, pages
from master.web.config import DashboardConfig
from master.web.security import BodyLimit, LoginRequired, require_api

VERSION = "1"


def create_app(config: DashboardConfig) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        config.close()

    app = FastAPI(
        title="ecommerce crawler: control room",
        version=VERSION,
        description="The crawl's state, seeds, pause and resume, dead letters, invalid items "
        "and products. With DASHBOARD_TOKEN set every call needs "
        "`Authorization: Bearer <token>`.",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.config = config
    app.add_middleware(BodyLimit, max_body=config.max_body)

    @app.exception_handler(LoginRequired)
    async def to_login(request: Request, exc: LoginRequired) -> Response:
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(LayoutMismatch)
    async def other_layout(request: Request, exc: LayoutMismatch) -> Response:
        # a write (seeds, requeue) with another REDIS_CLUSTER_SHARDS than the crawl's
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.get("/api/v1/openapi.json", include_in_schema=False)
    def openapi(request: Request) -> dict[str, Any]:
        require_api(request)
        return app.openapi()

    app.include_router(api.router)
    app.include_router(pages.router)
    return app
