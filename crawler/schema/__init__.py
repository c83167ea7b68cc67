"""The JSON Schemas of the items (``product.schema.json``, ``quote.schema.json``) and the one
way to check an item against them.

Each schema is the single definition of its kind of item (see
``/work/shared/CONTRACT.md`` and :mod:`crawler.core.itemkinds`): ``<kind>.schema.json``
beside this module. It is loaded and checked once per process
(:func:`validator_of`; :func:`product_validator` for products); every
item goes through :func:`to_json_ready` before it is validated or written as
JSON, so the conversion of Python values to JSON is decided here only:

* ``decimal.Decimal`` becomes a JSON number (``float``). Prices have at most a
  few significant digits, so ``float`` gives back the same decimal text
  (``Decimal("19.99")`` -> ``19.99``). The storage pipelines keep the exact
  ``Decimal`` for their typed ``price`` column or field.
* Non-finite numbers (``NaN``, ``Infinity``, or a ``Decimal`` too large for a
  ``float``) become strings, so the schema refuses them as "not a number".
* ``datetime`` and ``date`` become ISO 8601 strings; a naive ``datetime`` is
  taken as UTC.
* Tuples and sets become lists; items of any kind ``ItemAdapter`` supports
  become dicts.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from itemadapter import ItemAdapter
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

SCHEMA_PATH = Path(__file__).with_name("product.schema.json")
MAX_MESSAGE_LENGTH = 300

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@dataclass(frozen=True)
class ValidationProblem:
    """One reason why an item is not a valid product.

    ``field`` is the top-level property the problem is about (``"price"``, also
    for a problem deep inside it such as ``images/2``), or ``None`` when it is
    about the item as a whole.
    """

    field: str | None
    message: str

    def as_dict(self) -> dict[str, str | None]:
        return {"field": self.field, "message": self.message}


@functools.cache
def schema_of(kind: str) -> dict[str, Any]:
    """The parsed ``<kind>.schema.json`` (cached; do not modify it)."""
    path = SCHEMA_PATH.with_name(f"{kind}.schema.json")
    if not path.is_file():
        raise ValueError(f"no schema for items of kind {kind!r} ({path.name})")
    with path.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema


def product_schema() -> dict[str, Any]:
    """The parsed ``product.schema.json`` (cached; do not modify it)."""
    return schema_of("product")


@functools.cache
def product_fields() -> tuple[str, ...]:
    """The names of the product's properties, in schema order."""
    return tuple(product_schema()["properties"])


def is_rfc3339_datetime(instance: object) -> bool:
    """The ``date-time`` format: RFC 3339, with a UTC offset (raises ValueError if out of range)."""
    if not isinstance(instance, str):
        return True
    if not _RFC3339.match(instance):
        return False
    dt.datetime.fromisoformat(instance.replace("z", "Z").replace("t", "T"))
    return True


def _format_checker() -> FormatChecker:
    checker = FormatChecker()
    # jsonschema checks "date-time" only with an optional extra package installed;
    # this project checks it always, with the standard library.
    checker.checks("date-time", raises=ValueError)(is_rfc3339_datetime)
    return checker


@functools.cache
def validator_of(kind: str) -> Draft202012Validator:
    """The compiled validator of the ``kind`` schema.

    The schema itself is checked (``check_schema``) on the first call, which the
    validation pipeline makes at start-up: a broken schema stops the worker
    before it crawls anything.
    """
    schema = schema_of(kind)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=_format_checker())


def product_validator() -> Draft202012Validator:
    """The compiled validator of the product schema (see :func:`validator_of`)."""
    return validator_of("product")


def to_json_ready(value: Any) -> Any:
    """A copy of ``value`` made only of JSON types (see the module docstring)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        as_float = float(value)
        return as_float if math.isfinite(as_float) else str(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): to_json_ready(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json_ready(inner) for inner in value]
    if ItemAdapter.is_item(value):
        return to_json_ready(ItemAdapter(value).asdict())
    return value


def item_to_dict(item: Any) -> dict[str, Any]:
    """An item of any kind ``ItemAdapter`` supports as a JSON-ready dict."""
    data = item if isinstance(item, Mapping) else ItemAdapter(item).asdict()
    ready = to_json_ready(data)
    if not isinstance(ready, dict):  # pragma: no cover - ItemAdapter gives mappings
        raise TypeError(f"not an item: {type(item).__name__}")
    return ready


def _shorten(text: str) -> str:
    if len(text) <= MAX_MESSAGE_LENGTH:
        return text
    return text[: MAX_MESSAGE_LENGTH - 3] + "..."


# Readable messages for the schema's patterns (jsonschema would print the regex).
_PATTERN_MESSAGES = {
    "^https?://[^\\s/?#]+([/?#]\\S*)?$": "is not an absolute http(s) URL",
    "\\S": "is blank",
    "^[A-Z]{3}$": "is not an ISO 4217 currency code (three upper-case letters)",
    "^([0-9]{8}|[0-9]{12,14})$": "is not a GTIN (8, 12, 13 or 14 digits)",
}


def _message_of(error: ValidationError) -> str:
    if error.validator == "pattern" and error.validator_value in _PATTERN_MESSAGES:
        shown = repr(error.instance)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        message = f"{shown} {_PATTERN_MESSAGES[error.validator_value]}"
    else:
        message = error.message
    if "then" in error.schema_path:
        message = f"{message} (a currency is required with a price)"
    return message


def _problems_of(
    error: ValidationError, instance: dict[str, Any], kind: str = "product"
) -> list[ValidationProblem]:
    path = list(error.absolute_path)
    if path:
        where = "/".join(str(part) for part in path)
        field = str(path[0])
        message = _message_of(error)
        if len(path) > 1:
            message = f"{where}: {message}"
        return [ValidationProblem(field, _shorten(message))]
    # Errors about the object itself: name the property they are about.
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in instance]
        suffix = " with a price" if "then" in error.schema_path else ""
        return [
            ValidationProblem(name, f"{name!r} is a required property{suffix}") for name in missing
        ]
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        return [
            ValidationProblem(name, f"{name!r} is not a {kind} field")
            for name in instance
            if name not in known
        ]
    return [ValidationProblem(None, _shorten(error.message))]


def validation_errors(item: Any, kind: str = "product") -> list[ValidationProblem]:
    """Every problem of ``item`` (a dict or any item ``ItemAdapter`` supports) as an item
    of ``kind`` (``product``, ``quote``).

    An empty list means the item is valid. Problems come sorted by
    field, one per failed rule, each at most ``MAX_MESSAGE_LENGTH`` characters.
    """
    try:
        instance: Any = item_to_dict(item)
    except TypeError as exc:
        return [ValidationProblem(None, str(exc))]
    problems: list[ValidationProblem] = []
    seen: set[ValidationProblem] = set()
    errors = validator_of(kind).iter_errors(instance)
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        for problem in _problems_of(error, instance, kind):
            if problem not in seen:
                seen.add(problem)
                problems.append(problem)
    problems.sort(key=lambda p: (p.field is None, p.field or ""))
    return problems


__all__ = [
    "SCHEMA_PATH",
    "ValidationProblem",
    "item_to_dict",
    "product_fields",
    "product_schema",
    "product_validator",
    "schema_of",
    "to_json_ready",
    "validation_errors",
    "validator_of",
]
