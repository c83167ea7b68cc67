"""The data checks, declared once: each a name, a default threshold, a minimum number
of rows before it speaks, and a pure function of a site's :class:`~.figures.Figures`.

Every surface (the worker's WARNING, ``master checks``, ``master status --sites``, the
API, the dashboard, ``master metrics``) calls :func:`run_checks`; nothing else decides
whether a check fails. A check's threshold and minimum are set, in this order of
precedence, by the site's profile (``"checks"``: ``{"<name>": {"threshold": x,
"min_rows": n}}``, or ``false`` to silence it on that site), the setting
``DATACHECKS_OVERRIDES`` (the same object, for every site) and the declaration below.

A result is ``{"check", "site", "kind", "status", "threshold", "min_rows", "rows",
"figures", "message", "examples"}``; ``status`` is ``fail``, ``ok``, ``quiet`` (fewer
rows than ``min_rows``: it does not speak yet) or ``off`` (silenced).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .figures import Figures

FAIL, OK, QUIET, OFF = "fail", "ok", "quiet", "off"

#: availability values a site may well show on nearly every row (a shop lists what it
#: sells): one of them on >= the threshold is not taken for a misreading
_COMMON_AVAILABILITY = frozenset({"InStock"})
_STRUCTURED = ("json-ld", "microdata", "rdfa", "embedded-state")


#: what a check's evaluation returns: (failing, rows, seen, message, examples)
Verdict = tuple[bool, int, dict[str, Any], str, list[str]]


@dataclass(frozen=True)
class Check:
    """One declared check. ``evaluate(figures, threshold)`` returns ``(failing, rows,
    seen, message, examples)``: ``rows`` what ``min_rows`` is held to, ``seen`` the
    figures the message names."""

    name: str
    kind: str  # "product" or "quote"
    threshold: float
    min_rows: int
    meaning: str
    evaluate: Callable[[Figures, float], Verdict]


def _one_value(
    group: str, have: str, label: str, skip: frozenset[str] = frozenset()
) -> Callable[[Figures, float], Verdict]:
    def evaluate(fig: Figures, threshold: float) -> Verdict:
        rows = fig.get(have)
        value, count = fig.most_common(group)
        share = count / rows if rows else 0.0
        seen = {"rows": rows, "value": value, "rows_with_value": count, "share": round(share, 3)}
        failing = bool(rows) and share >= threshold and value not in skip
        message = f"{share:.0%} of {rows} rows have the {label} {value!r}"
        return failing, rows, seen, message, fig.examples(f"{group}\t{value}")

    return evaluate


def _field_coverage(fig: Figures, threshold: float) -> Verdict:
    rows = fig.get("rows")
    seen: dict[str, Any] = {"rows": rows}
    worst, worst_share = None, 0.0
    for name in ("price", "sku", "availability"):
        have, shown = fig.get(f"have:{name}"), fig.get(f"shown:{name}")
        structured = sum(fig.get(f"prov:{name}:{s}") for s in _STRUCTURED)
        share = shown / rows if rows else 0.0
        seen[name] = {
            "coverage": round(have / rows, 3) if rows else 0.0,
            "missing_but_shown": shown,
            "structured": structured,
        }
        if share > worst_share:
            worst, worst_share = name, share
    seen["field"] = worst
    failing = worst is not None and worst_share >= threshold
    message = (
        f"{worst_share:.0%} of {rows} rows have no {worst} although their page shows one"
        if worst
        else f"no field missing where the pages show it ({rows} rows)"
    )
    return failing, rows, seen, message, fig.examples(f"shown:{worst}") if worst else []


def product_looking_rejections(fig: Figures) -> tuple[int, dict[str, int], list[str]]:
    """Pages that looked like the site's product pages (their URL looks like a product's
    by itself, or has the shape of the site's own product pages) but gave no product:
    how many, by reason, and example URLs."""
    rows = fig.get("rows")
    shapes = {
        shape for shape, count in (fig.top.get("shape") or {}).items()
        if count >= max(2, 0.02 * rows)
    }
    total, reasons, examples = 0, dict[str, int](), list[str]()
    for key, count in (fig.top.get("rejected") or {}).items():
        flagged, _, reason = key.partition("\t")
        looks, shape = flagged[:1] == "P", flagged[1:]
        if not (looks or shape in shapes):
            continue
        total += int(count)
        reasons[reason] = reasons.get(reason, 0) + int(count)
        examples.extend(fig.examples(f"rejected\t{key}"))
    return total, reasons, examples


def _product_pages_rejected(fig: Figures, threshold: float) -> Verdict:
    rows = fig.get("rows")
    rejected, reasons, examples = product_looking_rejections(fig)
    looked = rows + rejected
    share = rejected / looked if looked else 0.0
    seen = {"product_looking": looked, "rejected": rejected, "share": round(share, 3),
            "reasons": reasons}
    why = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
    message = f"{share:.0%} of {looked} product-looking pages gave no product ({why or '-'})"
    return looked > 0 and share >= threshold, looked, seen, message, examples[:3]


def _as_of_from_fetch(fig: Figures, threshold: float) -> Verdict:
    rows, fetched = fig.get("rows"), fig.get("as_of:fetch")
    share = fetched / rows if rows else 0.0
    seen = {"rows": rows, "as_of_from_fetch": fetched, "share": round(share, 3)}
    message = f"{share:.0%} of {rows} quotes have no time of their own (as_of = fetch time)"
    return bool(rows) and share >= threshold, rows, seen, message, fig.examples("as_of:fetch")


CHECKS: tuple[Check, ...] = (
    Check(
        "availability_one_value", "product", 0.95, 50,
        "one availability on nearly every row (InStock excepted): a template's wording "
        "read as every product's stock",
        _one_value("availability", "have:availability", "availability", _COMMON_AVAILABILITY),
    ),
    Check(
        "price_one_value", "product", 0.95, 50,
        "one price on nearly every row: a template's number read as every product's price",
        _one_value("price", "have:price", "price"),
    ),
    Check(
        "name_one_value", "product", 0.5, 50,
        "one name on many rows: the site's title or a heading of the template read as "
        "the product's name",
        _one_value("name", "have:name", "name"),
    ),
    Check(
        "field_coverage", "product", 0.2, 50,
        "price, SKU or availability missing on many rows whose page shows one",
        _field_coverage,
    ),
    Check(
        "product_pages_rejected", "product", 0.3, 50,
        "many product-looking pages gave no product",
        _product_pages_rejected,
    ),
    Check(
        "as_of_from_fetch", "quote", 0.9, 20,
        "the quotes' time is the fetch time on nearly every row: the pages give none "
        "of their own, or it is not found",
        _as_of_from_fetch,
    ),
    Check(
        "price_unchanged", "quote", 0.95, 20,
        "one price on nearly every quote: every instrument (or every observation) at one "
        "price, a template's number read as the price",
        _one_value("price", "have:price", "price"),
    ),
)
BY_NAME: dict[str, Check] = {check.name: check for check in CHECKS}


class CheckConfigError(ValueError):
    """A check's override names no check, or gives a bad threshold or minimum."""


def validate_overrides(overrides: Any, where: str) -> dict[str, Any]:
    """``{"<check>": {"threshold": x, "min_rows": n} or false}``, checked; raises
    :class:`CheckConfigError` naming ``where`` and the check."""
    if not isinstance(overrides, Mapping):
        raise CheckConfigError(f"{where}: must be an object of check name -> settings")
    clean: dict[str, Any] = {}
    for name, spec in overrides.items():
        if name not in BY_NAME:
            raise CheckConfigError(
                f"{where}.{name}: unknown check (known: {', '.join(BY_NAME)})"
            )
        if spec is False or spec is True:
            clean[name] = spec
            continue
        if not isinstance(spec, Mapping) or set(spec) - {"threshold", "min_rows"}:
            raise CheckConfigError(
                f'{where}.{name}: must be false, true or {{"threshold": x, "min_rows": n}}'
            )
        threshold, min_rows = spec.get("threshold"), spec.get("min_rows")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
            or not 0 <= threshold <= 1
        ):
            raise CheckConfigError(f"{where}.{name}.threshold: a share from 0 to 1")
        if min_rows is not None and (
            isinstance(min_rows, bool) or not isinstance(min_rows, int) or min_rows < 1
        ):
            raise CheckConfigError(f"{where}.{name}.min_rows: a whole number >= 1")
        clean[name] = dict(spec)
    return clean


def run_checks(
    site: str,
    figures: Figures,
    kind: str,
    overrides: Mapping[str, Any] | None = None,
    site_overrides: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The checks of ``kind`` (``product`` or ``quote``) on one site's figures."""
    results = []
    for check in CHECKS:
        if check.kind != kind:
            continue
        spec: dict[str, Any] = {}
        silenced = False
        for layer in (overrides or {}, site_overrides or {}):
            given = layer.get(check.name)
            if given is False:
                silenced = True
            elif given is True:
                silenced = False
            elif isinstance(given, Mapping):
                silenced = False
                spec.update(given)
        threshold = float(spec.get("threshold", check.threshold))
        min_rows = int(spec.get("min_rows", check.min_rows))
        failing, rows, seen, message, examples = check.evaluate(figures, threshold)
        if silenced:
            status = OFF
        elif rows < min_rows:
            status = QUIET
        else:
            status = FAIL if failing else OK
        results.append(
            {
                "check": check.name,
                "site": site,
                "kind": kind,
                "status": status,
                "threshold": threshold,
                "min_rows": min_rows,
                "rows": rows,
                "figures": seen,
                "message": message,
                "examples": examples if status == FAIL else [],
            }
        )
    return results
