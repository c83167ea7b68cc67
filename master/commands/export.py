"""``python -m master export``: stream the stored items as CSV, JSON lines or JSON.

The items of the spider's kind (``--spider``: products for ``ecommerce``, quotes
for ``finance``, :mod:`crawler.core.itemkinds`) come from the store the workers write
to (:mod:`master.stores`, :mod:`master.quotestore`), one at a time, so the export
of a large catalogue needs little memory. ``--history`` exports the quotes'
observations (``quote_history``: ``url``, ``symbol``, ``price``, ``currency``,
``volume``, ``as_of``, ``seen_at``) instead of the latest quotes. A progress
bar (tqdm) goes to stderr when stderr is a terminal, or with ``--progress``.

* ``jsonl``: one JSON object per line;
* ``json``: one JSON array, streamed;
* ``csv``: a header row, then one row per product; lists and objects (images,
  breadcrumbs, rating, provenance) are written as JSON text.

``--trusted`` leaves out the rows whose ``uncertain`` list names a field
(:mod:`crawler.datachecks.uncertain`).

Every format carries the item's fields plus ``first_seen`` and ``last_seen``;
``--fields`` picks and orders them. ``--since`` keeps the items seen (``last_seen``; an
observation: ``seen_at``) at or after a time: an ISO 8601 time, or a duration back
from now (``6h``, ``2d``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from crawler.core.itemkinds import QUOTE, ItemKind, kind_of_spider
from crawler.core.items import CRAWL_FIELDS, PAGE_FIELDS, QUOTE_PAGE_FIELDS
from master.durations import parse_since
from master.quotestore import OBSERVATION_FIELDS, open_item_store
from master.stores import StoreError, json_default, read_errors

if TYPE_CHECKING:
    from master.commands.base import Subcommands

FORMATS = ("csv", "jsonl", "json")
# CSV columns when --fields is not given: the product's fields (its provenance left
# out), then the store's
CSV_FIELDS = (*PAGE_FIELDS, *CRAWL_FIELDS, "first_seen", "last_seen")
QUOTE_CSV_FIELDS = (*QUOTE_PAGE_FIELDS, *CRAWL_FIELDS, "first_seen", "last_seen")


def csv_columns(kind: ItemKind, history: bool = False) -> tuple[str, ...]:
    """The CSV columns of an export of ``kind`` (``history``: of the observations)."""
    if kind == QUOTE:
        return OBSERVATION_FIELDS if history else QUOTE_CSV_FIELDS
    return CSV_FIELDS


def _pick(product: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    return product if fields is None else {name: product.get(name) for name in fields}


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=json_default)
    return value


class _Line:
    """A file-like object for :mod:`csv` that hands back the row it was given."""

    def write(self, text: str) -> str:
        return text


def format_products(
    products: Iterable[dict[str, Any]],
    fmt: str,
    fields: list[str] | None = None,
    columns: tuple[str, ...] = CSV_FIELDS,
) -> Iterator[str]:
    """The items in ``fmt``, one chunk of text at a time (a row, a line): what the
    command writes to its file and ``GET /api/v1/export`` streams (``columns``: the
    CSV's when ``fields`` does not say)."""
    if fmt == "csv":
        writer = csv.writer(_Line())
        columns = tuple(fields or columns)
        yield writer.writerow(columns)
        for product in products:
            yield writer.writerow([_cell(product.get(name)) for name in columns])
        return

    def dump(product: dict[str, Any]) -> str:
        return json.dumps(_pick(product, fields), ensure_ascii=False, default=json_default)

    if fmt == "jsonl":
        for product in products:
            yield dump(product) + "\n"
        return
    count = 0
    yield "["
    for product in products:
        yield ("\n" if count == 0 else ",\n") + dump(product)
        count += 1
    yield "\n]\n" if count else "]\n"


def write_products(
    products: Iterable[dict[str, Any]],
    fmt: str,
    out: TextIO,
    fields: list[str] | None,
    columns: tuple[str, ...] = CSV_FIELDS,
) -> int:
    """Write every item in ``fmt``; returns how many were written."""
    count = 0

    def counted() -> Iterator[dict[str, Any]]:
        nonlocal count
        for product in products:
            count += 1
            yield product

    for chunk in format_products(counted(), fmt, fields, columns):
        out.write(chunk)
    return count


def _progress(
    products: Iterator[dict[str, Any]], total: int | None, show: bool, unit: str = "products"
) -> Iterator[dict[str, Any]]:
    if not show:
        yield from products
        return
    from tqdm import tqdm

    with tqdm(products, total=total, unit=f" {unit}", file=sys.stderr, dynamic_ncols=True) as bar:
        yield from bar


def trusted(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The rows none of whose fields was read uncertainly (their ``uncertain`` list is
    empty: :mod:`crawler.datachecks.uncertain`)."""
    return (row for row in rows if not row.get("uncertain"))


def cmd_export(ctx: Any, args: argparse.Namespace) -> int:
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        print(f"error: --since: {exc}", file=sys.stderr)
        return 2
    fields = (
        [name.strip() for name in args.fields.split(",") if name.strip()] if args.fields else None
    )
    kind = kind_of_spider(ctx.keys.spider)
    history = bool(getattr(args, "history", False))
    if history and kind != QUOTE:
        print(f"error: --history: the {kind.plural} of spider {ctx.keys.spider!r} have no "
              "observations to export (quotes do: --spider finance)", file=sys.stderr)
        return 2
    noun = "observations" if history else kind.plural
    try:
        store = open_item_store(args, kind)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out: TextIO = sys.stdout
    try:
        show = args.progress if args.progress is not None else sys.stderr.isatty()
        total = None if history else store.count(since) if show else None
        rows = store.observations(since) if history else store.products(since)  # type: ignore[attr-defined]
        if args.trusted and not history:
            rows = trusted(rows)
        if args.out != "-":
            out = open(args.out, "w", encoding="utf-8", newline="")  # noqa: SIM115
        count = write_products(
            _progress(rows, total, show, noun), args.format, out, fields, csv_columns(kind, history)
        )
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except read_errors() as exc:
        print(f"error: reading {store.location} failed: {exc}".rstrip(), file=sys.stderr)
        return 1
    finally:
        if out is not sys.stdout:
            out.close()
        store.close()
    where = "standard output" if args.out == "-" else args.out
    when = f" seen since {since.isoformat(timespec='seconds')}" if since else ""
    print(
        f"exported {count} {noun}{when} from {store.location} to {where} ({args.format})",
        file=sys.stderr,
    )
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from master.stores import add_store_options

    parser.add_argument(
        "--format", choices=FORMATS, default="jsonl", help="output format (default jsonl)"
    )
    parser.add_argument(
        "--out", metavar="FILE", default="-", help="file to write; - is standard output (default)"
    )
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only products seen at or after WHEN: an ISO 8601 time (UTC unless it says) "
        "or a duration back from now such as 30m, 6h, 2d",
    )
    parser.add_argument(
        "--fields",
        metavar="A,B,...",
        help="comma-separated fields, in this order (default: all; for CSV: "
        + ", ".join(CSV_FIELDS[:6])
        + ", ...)",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="quotes (--spider finance): export their observations (quote_history), one row "
        "per url and as_of, instead of the latest quote of each url",
    )
    parser.add_argument(
        "--trusted",
        action="store_true",
        help="leave out the rows with a field read uncertainly (data.uncertain not empty: "
        "a value the page contradicts or left to a guess, a data check failing on the "
        "site when the row was read; docs/data-checks.md)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    add_store_options(parser)


def register(commands: Subcommands) -> None:
    parser = commands.add(
        "export",
        help="stream the stored products (or quotes: --spider finance) as CSV, JSON lines "
        "or JSON",
        description=(
            "Read the spider's items (products; --spider finance: quotes, or with --history "
            "their observations) from the store the workers write to (PostgreSQL, else "
            "MongoDB, else the embedded SQLite file; options or the workers' environment "
            "variables) and write them to FILE or standard output, one at a time, with a "
            "progress bar on stderr. Exit 1 when the store cannot be opened."
        ),
        examples=[
            "export --format csv --out products.csv",
            "export --spider finance --format csv --out quotes.csv",
            "export --spider finance --history --format jsonl --since 1d",
            "export --format jsonl --since 6h --fields url,name,price,currency",
            "export --format json --out - --postgres-dsn postgresql://crawler@db/crawler",
        ],
    )
    add_arguments(parser)
    parser.set_defaults(handler=cmd_export)
