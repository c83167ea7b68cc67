"""Which fields of a row were read uncertainly: the row's ``uncertain`` list
(``data.uncertain`` in the stores; ``master export --trusted`` leaves such rows out).

A field is uncertain when

* its structured value differs from what the site's learned position shows on the
  page (``provenance.disagrees``, :mod:`crawler.extraction.sitepage`);
* the page lacks structured data and its visible read left the field to a guess
  (the extraction's ``uncertain``: a missing price or stock state the site's evidence
  could give);
* a data check fails on the row's site for that field when the row is read
  (:func:`failing_fields`): ``availability`` under ``availability_one_value``,
  ``price`` under ``price_one_value`` and ``price_unchanged``, ``name`` under
  ``name_one_value``, the missing field under ``field_coverage`` (rows without it),
  ``as_of`` under ``as_of_from_fetch`` (rows whose time is the fetch time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_GUESSED = ("price", "availability")  # what a visible-only read may leave to a guess
_CHECK_FIELDS = {
    "availability_one_value": "availability",
    "price_one_value": "price",
    "name_one_value": "name",
    "price_unchanged": "price",
    "as_of_from_fetch": "as_of",
}


def read_uncertainly(product: Mapping[str, Any], guessed: bool) -> list[str]:
    """The fields of an extracted product read uncertainly (``guessed``: the extraction
    says the page left something to a guess)."""
    prov = product.get("provenance") or {}
    fields = set(prov.get("disagrees") or ())
    if guessed:
        fields.update(name for name in _GUESSED if product.get(name) is None)
    return sorted(fields)


def failing_fields(results: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """check name -> the field it puts in doubt, for the failing results of one site."""
    fields = {}
    for result in results:
        if result["status"] != "fail":
            continue
        name = result["check"]
        if name == "field_coverage":
            field = result["figures"].get("field")
            if field:
                fields[name] = str(field)
        elif name in _CHECK_FIELDS:
            fields[name] = _CHECK_FIELDS[name]
    return fields


def mark(item: dict[str, Any], failing: Mapping[str, str]) -> None:
    """Set the item's ``uncertain`` list: its own, and the fields of the checks failing
    on its site (``failing``: :func:`failing_fields`) that concern this row."""
    fields = set(item.get("uncertain") or ())
    prov = item.get("provenance") or {}
    for check, field in failing.items():
        if not field:
            continue  # a check that doubts no field of a row (product_pages_rejected)
        if check == "field_coverage" and item.get(field) not in (None, ""):
            continue  # the row has the field: only the rows without it are in doubt
        if check == "as_of_from_fetch" and prov.get("as_of") != "fetch":
            continue
        fields.add(field)
    item["uncertain"] = sorted(fields)
