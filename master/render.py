"""Human-readable output: aligned tables for ``status``, ``report``, ``dead`` and ``invalid``.

Every function takes the plain dicts built by :mod:`master.inspection` or
:mod:`master.deadletters` and returns text; ``--json`` prints those dicts instead.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from crawler.core.itemkinds import kind_of_spider
from crawler.core.records import as_epoch
from master.deadletters import format_errors
from master.listings import describe


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: Sequence[int] = ()) -> str:
    """Columns padded to their widest cell; columns listed in ``right`` are right-aligned."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def when(moment: Any) -> str:
    """Local date and time of an epoch or an RFC 3339 text, or ``-``."""
    epoch = as_epoch(moment)
    if epoch is None:
        return "-" if moment in (None, "") else str(moment)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def shorten(value: Any, width: int = 80) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def render_status(status: dict[str, Any], redis_url: str) -> str:
    state = status["state"]
    pause = status.get("paused")
    if pause:
        ago = (status["time"] - pause["since"]) if pause.get("since") else None
        state += (
            f" since {when(pause.get('since'))} ({duration(ago)} ago) by {pause.get('by') or '?'}"
        )
    lines = [f"crawl {status['spider']!r} on {redis_url}: {state}", f"  {status['detail']}", ""]
    live = status["live_workers"]
    known = status["known_workers"]
    notes = [f"{status['pages_per_min']:.2f} pages/min"] if live else []
    if known != live:
        notes.append(f"{known} known")
    if status.get("stale_workers"):
        notes.append(f"{len(status['stale_workers'])} stale: below")
    rate = f"  ({'; '.join(notes)})" if notes else ""
    held = "  (held while paused)" if status.get("in_flight_held") else ""
    invalid = "  (python -m master invalid)" if status["items_invalid"] else ""
    rows = [
        ("queued requests", status["queued_requests"], ""),
        ("pending seeds", status["pending_seeds"], ""),
        ("seen fingerprints", status["seen_fingerprints"], ""),
        ("requests in flight", status["in_flight"], held),
        ("live workers", live, rate),
        ("items stored", status["items_stored"], ""),
        ("items invalid", status["items_invalid"], invalid),
        ("dead letters", status["dead_letters"], ""),
    ]
    if status.get("requests_refused"):  # each of them is a dead letter too
        rows.append(("requests refused", status["requests_refused"], "  (network rule, seed meta)"))
    if status.get("browser_queued"):  # requests that wait for a worker with a browser
        rows.insert(1, ("waiting for a browser", status["browser_queued"], "  (--sites)"))
    backoff = status.get("backoff") or {}
    if backoff.get("retries_waiting") or backoff.get("sites"):
        due = backoff.get("next_retry_in")
        next_due = f"  (next due in {duration(due)})" if due is not None else ""
        rows.insert(1, ("retries waiting", backoff["retries_waiting"], next_due))
    width = max(len(name) for name, _, _ in rows)
    numbers = max(len(str(value)) for _, value, _ in rows)
    for name, value, extra in rows:
        lines.append(f"  {name.ljust(width)}  {str(value).rjust(numbers)}{extra}".rstrip())
    if status.get("listings"):
        kind = kind_of_spider(str(status.get("spider") or ""))
        lines.extend(f"  {line}" for line in describe(status["listings"], kind.plural, kind.name))
    bloom = status.get("bloom")
    if bloom:
        lines.append(
            f"  Bloom dupefilter: {bloom['count']} of {bloom['capacity']} URLs, "
            f"{bloom['memory_bytes'] / 1e6:.2f} MB, k={bloom['hashes']}, estimated false "
            f"positives {bloom['estimated_error_rate'] * 100:.2g} % "
            f"(sized for {bloom['error_rate'] * 100:g} %)"
        )
    if backoff.get("sites"):
        lines.append("")
        lines.append(render_backoff_sites(backoff["sites"]))
    if status["workers"]:
        lines.append("")
        lines.append(
            table(
                ["worker", "host", "state", "pages", "items", "pages/min", "updated"],
                [
                    (
                        w["worker"],
                        w["host"] or "-",
                        w["state"],
                        w["pages"],
                        w["items"],
                        f"{w['pages_per_min']:.2f}",
                        f"{duration(w['updated_ago'])} ago"
                        if w["updated_ago"] is not None
                        else "-",
                    )
                    for w in status["workers"]
                ],
                right=(3, 4, 5, 6),
            )
        )
    stale = status.get("stale_workers") or []
    if stale:
        lines.append("")
        lines.append(
            table(
                ["stale worker", "host", "state", "no heartbeat since"],
                [
                    (
                        w["worker"],
                        w["host"] or "-",
                        w["state"],
                        f"{when(w['since'])} ({duration(w['stale_for'])} ago)"
                        if w["since"] is not None
                        else "-",
                    )
                    for w in stale
                ],
            )
        )
        lines.append(
            "  (a stale worker stopped beating without finishing: cut off from Redis, "
            "stalled or killed; its leases go to other workers)"
        )
    return "\n".join(lines)


def render_backoff_sites(sites: list[dict[str, Any]]) -> str:
    """The sites whose shared rate is cut: rate against budget, why, since when, paused."""
    rows = [
        (
            site["site"],
            f"{site['rate']:.3g}",
            f"{site['budget']:.3g}" if site["budget"] else "none",
            site["cuts"],
            site["reason"] or "-",
            f"{duration(site['cut_ago'])} ago" if site["cut_ago"] is not None else "-",
            f"{duration(site['paused_for'])}" if site["paused_for"] else "-",
        )
        for site in sites
    ]
    return table(
        ["site in backoff", "req/s", "budget", "cuts", "last cut by", "cut", "paused for"],
        rows,
        right=(1, 2, 3),
    )


def render_report(report: dict[str, Any]) -> str:
    headers = [
        "worker",
        "state",
        "elapsed s",
        "idle tail s",
        "active s",
        "pages",
        "items",
        "pages/min",
    ]
    rows: list[Sequence[Any]] = []
    for w in report["workers"]:
        state = w["state"]
        if not w["live"] and state != "finished":
            state += " (no heartbeat)"
        rows.append(
            (
                w["worker"],
                state,
                f"{w['elapsed']:.2f}",
                f"{w['idle_tail']:.2f}",
                f"{w['active']:.2f}",
                w["pages"],
                w["items"],
                f"{w['pages_per_min']:.2f}",
            )
        )
    total = report["total"]
    rows.append(
        (
            "TOTAL",
            f"{total['workers']} workers, {total['live']} live",
            f"{total['elapsed']:.2f}",
            f"{total['idle_tail']:.2f}",
            f"{total['active']:.2f}",
            total["pages"],
            total["items"],
            f"{total['pages_per_min']:.2f}",
        )
    )
    lines = [table(headers, rows, right=(2, 3, 4, 5, 6, 7))]
    if total["started_at"] is not None:
        lines.append(f"crawl window: {when(total['started_at'])} to {when(total['ended_at'])}")
    if not report["workers"]:
        lines.append("no worker has reported yet")
    stores = report["stores"]
    if not stores:
        lines.append(f"{kind_of_spider(str(report.get('spider') or '')).plural}: no store "
                     "reported by the workers")
    kind = kind_of_spider(str(report.get("spider") or ""))
    items = kind.plural
    if report.get("listings"):
        lines.extend(describe(report["listings"], items, kind.name))
    for store in stores:
        if store.get(items) is not None:
            lines.append(f"{items}: {store['store']} ({store[items]} {items})")
        elif store["note"]:
            lines.append(f"{items}: {store['store']} ({store['note']})")
        else:
            lines.append(f"{items}: {store['store']}")
    return "\n".join(lines)


def render_dead(listing: dict[str, Any]) -> str:
    records = listing["records"]
    lines = [
        f"{listing['total']} dead letter(s)"
        + (f", showing {len(records)}" if len(records) < listing["total"] else "")
    ]
    if records:
        rows = [
            (
                r["index"],
                when(r.get("time")),
                r.get("worker") or "-",
                "yes" if r.get("request") else "no",
                shorten(r.get("reason") or ("malformed record" if r.get("malformed") else "-"), 50),
                shorten(r.get("url") or r.get("raw") or "-", 100),
            )
            for r in records
        ]
        lines.append(table(["#", "time", "worker", "request", "reason", "url"], rows, right=(0,)))
    return "\n".join(lines)


def render_invalid(listing: dict[str, Any]) -> str:
    records = listing["records"]
    lines = [
        f"{listing['total']} invalid item(s)"
        + (f", showing {len(records)}" if len(records) < listing["total"] else "")
    ]
    for r in records:
        if r.get("malformed"):
            lines.append(f"#{r['index']}  malformed record: {shorten(r.get('raw'), 100)}")
            continue
        lines.append(
            f"#{r['index']}  {when(r.get('time'))}  {r.get('worker') or '-'}  {r.get('url') or '-'}"
        )
        lines.append(f"    {format_errors(r.get('errors')) or '(no errors recorded)'}")
    return "\n".join(lines)
