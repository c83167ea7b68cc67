"""The JSON API under ``/api/v1``: thin routes over the functions the commands call.

=====================================  =================================================
route                                  answer (the same function as the command)
=====================================  =================================================
``GET /status``                        ``master status --json`` (inspection.gather_status)
``GET /workers``                       ``master report --json`` (inspection.gather_report)
``GET /sites``                         ``master status --sites --json`` (sites.gather_sites)
``GET /checks``                        ``master checks --json`` (datachecks.report.gather_checks)
``GET /series``                        pages and items per minute, last hour (crawler.core.series)
``POST /seeds``                        ``master seed --json`` (seeding.seed_stream)
``POST /pause``, ``POST /resume``      control.pause / control.resume
``GET /dead``                          ``master dead list --json`` (deadletters.list_dead)
``GET /dead/reasons``                  ``master dead reasons --json``
``POST /dead/requeue``                 ``master dead requeue --json`` (deadletters.requeue)
``POST /dead/clear``                   ``master dead clear`` (deadletters.clear_dead)
``GET /invalid``                       ``master invalid --json`` (deadletters.list_invalid)
``GET /products``                      one page of products by cursor (catalog.product_page)
``GET /products/history``              a product's price history (the store's ``history``)
``GET /quotes``                        one page of quotes by cursor (the finance spider's)
``GET /quotes/history``                a quote's observations (``quote_history``)
``GET /spiders``                       every spider's crawl in brief (the dashboard's tabs)
``GET /export``                        ``master export`` streamed (export.format_products)
=====================================  =================================================

Every route takes ``?spider=NAME``, the crawl it is about (``master --spider``):
the default is the spider ``master serve`` was started with (``ecommerce`` unless
it was given ``--spider``). ``/export`` exports the spider's items: products, or
quotes (``history=true``: their observations).
"""

from __future__ import annotations

import io
import socket
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from crawler.core.itemkinds import QUOTE, kind_of_spider
from crawler.core.items import Availability
from crawler.core.keys import CrawlKeys
from crawler.core.layout import ensure_layout
from crawler.core.series import read_series
from crawler.datachecks.report import CheckSettings, gather_checks
from crawler.net.network import NetworkRule, resolve
from master import control, deadletters, inspection, sites
from master.catalog import MAX_LIMIT, ProductQuery, decode_cursor, product_page
from master.commands.export import csv_columns, format_products
from master.quotestore import open_item_store
from master.seeding import seed_stream
from master.stores import ProductStore, StoreError, read_errors
from master.web.config import (
    DashboardConfig,
    get_config,
    get_keys,
    get_quote_store,
    get_store,
    keys_for,
    spiders_of,
)
from master.web.security import require_api

router = APIRouter(prefix="/api/v1", dependencies=[Depends(require_api)])
Config = Annotated[DashboardConfig, Depends(get_config)]
Keys = Annotated[CrawlKeys, Depends(get_keys)]
Store = Annotated[ProductStore, Depends(get_store)]
QuoteStore = Annotated[ProductStore, Depends(get_quote_store)]
EXPORT_CHUNK = 64 * 1024  # characters of export sent at once
SEED_TYPES = ("text/plain", "application/x-ndjson", "application/jsonl", "application/json-lines")


@router.get("/status", summary="The crawl at a glance (master status --json)")
def status(config: Config, keys: Keys) -> dict[str, Any]:
    return inspection.gather_status(config.client, keys)


@router.get("/sites", summary="Per site and per seed figures, and what needs a browser")
def site_figures(config: Config, keys: Keys) -> dict[str, Any]:
    return sites.gather_sites(config.client, keys)


@router.get("/checks", summary="The data checks of every site (master checks --json)")
def data_checks(config: Config, keys: Keys) -> dict[str, Any]:
    return gather_checks(config.client, keys, CheckSettings.from_project())


@router.get("/workers", summary="Every worker's record and the totals (master report --json)")
def workers(config: Config, keys: Keys) -> dict[str, Any]:
    return inspection.gather_report(config.client, keys)


@router.get("/series", summary="Pages and items per minute over the last minutes")
def series(
    config: Config, keys: Keys, minutes: Annotated[int, Query(ge=1, le=1440)] = 60
) -> dict[str, Any]:
    return read_series(config.client, keys, minutes)


@router.post(
    "/seeds",
    summary="Validate and push seeds (master seed --json)",
    description='The body: one URL per line, or JSON lines {"url": ..., "meta": {...}} '
    "(text/plain or application/x-ndjson). Every line is validated as `master seed` "
    "validates it; 422 when no line was valid (the answer still lists why).",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {kind: {"schema": {"type": "string"}} for kind in SEED_TYPES},
        }
    },
)
async def seeds(request: Request, config: Config, keys: Keys, dry_run: bool = False) -> Any:
    kind = request.headers.get("content-type", "text/plain").split(";")[0].strip().lower()
    if kind not in SEED_TYPES:
        raise HTTPException(415, f"send seeds as one of {', '.join(SEED_TYPES)}, not {kind}")
    body = await request.body()

    def run() -> dict[str, Any]:
        try:
            rule = NetworkRule(config.allow_private_networks, resolve)
        except ValueError as exc:
            raise HTTPException(500, f"ALLOW_PRIVATE_NETWORKS: {exc}") from None
        client = None if dry_run else config.client
        return seed_stream(client, keys, io.BytesIO(body), rule)

    summary = await run_in_threadpool(run)
    if summary["accepted"] + summary["already_seeded"] == 0:
        return JSONResponse(summary, status_code=422)
    return summary


def _by() -> str:
    return f"dashboard@{socket.gethostname()}"


@router.post("/pause", summary="Pause every worker (master pause)")
def pause(config: Config, keys: Keys) -> dict[str, Any]:
    return asdict(control.pause(config.client, keys, by=_by()))


@router.post("/resume", summary="Resume every worker (master resume)")
def resume(config: Config, keys: Keys) -> dict[str, Any]:
    return asdict(control.resume(config.client, keys))


Limit = Annotated[int, Query(ge=0, le=10_000, description="records (0: all)")]
Start = Annotated[int, Query(ge=0)]


@router.get("/dead", summary="Dead letters (master dead list --json)")
def dead(
    config: Config, keys: Keys, limit: Limit = 50, start: Start = 0, reason: str | None = None
) -> dict[str, Any]:
    return deadletters.list_dead(config.client, keys, limit, start, reason)


@router.get("/dead/reasons", summary="Dead letters grouped by reason, with counts")
def dead_reasons(config: Config, keys: Keys) -> dict[str, Any]:
    return deadletters.dead_reasons(config.client, keys)


class DeadAction(BaseModel):
    reason: str | None = None  # only the dead letters of this reason
    limit: int = 0  # requeue: the first N (0: all)


@router.post("/dead/requeue", summary="Requeue dead letters (master dead requeue --json)")
def dead_requeue(
    config: Config, keys: Keys, action: Annotated[DeadAction | None, Body()] = None
) -> dict[str, Any]:
    action = action or DeadAction()
    ensure_layout(config.client, keys)  # another shard count: 409
    result = deadletters.requeue(config.client, keys, action.limit, action.reason)
    return {**asdict(result), "requeued": result.requeued}


@router.post("/dead/clear", summary="Delete dead letters (master dead clear --yes)")
def dead_clear(
    config: Config, keys: Keys, action: Annotated[DeadAction | None, Body()] = None
) -> dict[str, Any]:
    reason = (action or DeadAction()).reason
    return {"cleared": deadletters.clear_dead(config.client, keys, reason)}


@router.get("/invalid", summary="Items the schema rejected, with their errors")
def invalid(config: Config, keys: Keys, limit: Limit = 50, start: Start = 0) -> dict[str, Any]:
    return deadletters.list_invalid(config.client, keys, limit, start)


def _read(store: ProductStore, call: Any) -> Any:
    try:
        return call()
    except read_errors() as exc:
        raise HTTPException(503, f"reading {store.location} failed: {exc}") from None


@router.get(
    "/products",
    summary="One page of products, by cursor",
    description="In URL order; `next` is the URL of the next page (null on the last). "
    "The cursor names the last URL shown, so pages stay right while workers insert.",
)
def products(
    request: Request,
    store: Store,
    q: Annotated[str | None, Query(description="part of the name, any case")] = None,
    site: Annotated[str | None, Query(description="host, e.g. shop.example:8080")] = None,
    availability: Annotated[Availability | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    return _page(request, store, q, site, availability, limit, cursor)


@router.get("/products/history", summary="A product's price history, oldest first")
def history(store: Store, url: str) -> dict[str, Any]:
    return {"url": url, "history": _read(store, lambda: store.history(url))}


@router.get(
    "/quotes",
    summary="One page of quotes (the finance spider's), by cursor",
    description="In URL order, as `/products`; `q` matches the symbol or the name.",
)
def quotes(
    request: Request,
    store: QuoteStore,
    q: Annotated[str | None, Query(description="part of the symbol or name, any case")] = None,
    site: Annotated[str | None, Query(description="host, e.g. quotes.example:8080")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    return _page(request, store, q, site, None, limit, cursor)


def _page(
    request: Request,
    store: Any,
    q: str | None,
    site: str | None,
    availability: Availability | None,
    limit: int,
    cursor: str | None,
) -> dict[str, Any]:
    """One page of a store's rows by cursor (``/products`` and ``/quotes``)."""
    try:
        after = decode_cursor(cursor) if cursor else None
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
    query = ProductQuery(q or None, site or None, availability, limit, after)
    items, following = _read(store, lambda: product_page(store, query))
    link = str(request.url.include_query_params(cursor=following)) if following else None
    return {"items": items, "next": link}


@router.get("/quotes/history", summary="A quote's observations (quote_history), oldest first")
def quote_history(store: QuoteStore, url: str) -> dict[str, Any]:
    rows = _read(store, lambda: store.history(url))
    # prices as JSON numbers, as a product's history gives them
    return {"url": url, "history": [{**row, "price": _number(row["price"])} for row in rows]}


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


@router.get("/spiders", summary="Every spider's crawl in brief: state, queue, items, workers")
def spiders(config: Config) -> dict[str, Any]:
    crawls = []
    for name in spiders_of(config):
        status = inspection.gather_status(config.client, keys_for(config, name))
        crawls.append({
            "spider": name,
            "items": kind_of_spider(name).plural,
            **{key: status.get(key) for key in (
                "state", "queued_requests", "in_flight", "live_workers", "items_stored",
                "items_invalid", "dead_letters",
            )},
        })
    return {"default": config.keys.spider, "spiders": crawls}


@router.get("/export", summary="Every item of the spider, streamed (master export)")
def export(
    config: Config,
    keys: Keys,
    format: Literal["csv", "jsonl", "json"] = "jsonl",
    history: Annotated[bool, Query(description="quotes: their observations")] = False,
) -> StreamingResponse:
    kind = kind_of_spider(keys.spider)
    if history and kind != QUOTE:
        raise HTTPException(400, f"the {kind.plural} of {keys.spider!r} have no history to export")
    try:
        store = open_item_store(config.store_args, kind)
    except StoreError as exc:
        raise HTTPException(503, f"{kind.name} store: {exc}") from None
    rows = store.observations() if history else store.products()  # type: ignore[attr-defined]
    columns = csv_columns(kind, history)
    noun = "observations" if history else kind.plural

    def chunks() -> Any:
        # rows gathered into chunks of about EXPORT_CHUNK bytes: one hop to the
        # thread pool per chunk, not per product
        buffer: list[str] = []
        size = 0
        try:
            for text in format_products(rows, format, None, columns):
                buffer.append(text)
                size += len(text)
                if size >= EXPORT_CHUNK:
                    yield "".join(buffer).encode("utf-8")
                    buffer, size = [], 0
            if buffer:
                yield "".join(buffer).encode("utf-8")
        finally:
            store.close()

    media = {"csv": "text/csv", "jsonl": "application/x-ndjson", "json": "application/json"}
    headers = {"Content-Disposition": f'attachment; filename="{noun}.{format}"'}
    return StreamingResponse(chunks(), media_type=media[format], headers=headers)
