"""Per-attribute precision, recall and F1, by the rules of the public product-extraction
benchmark the shared sets come from (``../shared/product-pages-intl/README.md``).

For each attribute, over all product pages: a prediction equal to one of the
acceptable values is a true positive; a different value is a false positive AND
a false negative; a prediction where the truth has none is a false positive; no
prediction where the truth has one is a false negative.

Comparisons: ``price`` as decimals (a truth written as the page shows it,
``"1.299,00"``, ``"131990 "``, is read as a number); ``sku`` exactly (surrounding
whitespace aside); ``availability`` as ``InStock`` or ``OutOfStock``
(``LimitedAvailability``, ``PreOrder``, ``BackOrder`` count as ``InStock``;
``Discontinued``, ``SoldOut`` as ``OutOfStock``); ``currency``: the extractor's
ISO 4217 code against the truth's code or symbol (``€``, ``zł``, ``₽``; a bare
``$`` accepts any dollar currency); ``name`` exactly, whitespace collapsed.
``OutOfStock`` is also scored apart, as its own yes/no attribute.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

#: What a truth's currency symbol (as the page shows it) may stand for.
_DOLLARS = frozenset(
    {"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN", "CLP", "ARS", "COP", "UYU"}
)
CURRENCY_SYMBOLS: dict[str, frozenset[str]] = {
    "$": _DOLLARS,
    "US$": frozenset({"USD"}),
    "NT$": frozenset({"TWD"}),
    "R$": frozenset({"BRL"}),
    "€": frozenset({"EUR"}),
    "£": frozenset({"GBP"}),
    "₹": frozenset({"INR"}),
    "₽": frozenset({"RUB"}),
    "руб": frozenset({"RUB"}),
    "zł": frozenset({"PLN"}),
    "kn": frozenset({"HRK"}),
    "тг": frozenset({"KZT"}),
    "₸": frozenset({"KZT"}),
    "원": frozenset({"KRW"}),
    "₩": frozenset({"KRW"}),
    "ر.س": frozenset({"SAR"}),
    "₪": frozenset({"ILS"}),
    "¥": frozenset({"JPY", "CNY"}),
    "円": frozenset({"JPY"}),
    "₺": frozenset({"TRY"}),
    "kč": frozenset({"CZK"}),
    "р.": frozenset({"BYN", "RUB"}),
}
_IN_STOCK = frozenset(
    {"InStock", "LimitedAvailability", "PreOrder", "BackOrder", "InStoreOnly", "OnlineOnly"}
)
_OUT_OF_STOCK = frozenset({"OutOfStock", "Discontinued", "SoldOut"})


@dataclass
class Score:
    """Counts of one attribute and the figures that follow from them."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, predicted: Any, acceptable: list[Any], same: Callable[[Any, Any], bool]) -> str:
        """Count one page; returns ``tp``, ``fp`` (a value where none is), ``wrong``
        (fp and fn), ``fn`` or ``tn``."""
        if predicted is None:
            if acceptable:
                self.fn += 1
                return "fn"
            return "tn"
        if not acceptable:
            self.fp += 1
            return "fp"
        if any(same(predicted, a) for a in acceptable):
            self.tp += 1
            return "tp"
        self.fp += 1
        self.fn += 1
        return "wrong"


def as_decimal(value: Any) -> Decimal | None:
    """A price as a number: ``12.5``, ``"1.299,00"``, ``"1,299.00"``, ``"131990 "``."""
    if value is None:
        return None
    if isinstance(value, (int, float, Decimal)):
        return Decimal(str(value))
    text = re.sub(r"[^\d.,]", "", str(value))
    if not text:
        return None
    last = max(text.rfind("."), text.rfind(","))
    # a separator followed by 3 digits and nothing else is a thousands separator
    if last >= 0 and len(text) - last - 1 != 3:
        whole, frac = text[:last], text[last + 1 :]
    else:
        whole, frac = text, ""
    whole = re.sub(r"[.,]", "", whole)
    try:
        return Decimal(f"{whole or 0}.{frac or 0}")
    except InvalidOperation:
        return None


def stock_class(value: Any) -> str | None:
    """``InStock``, ``OutOfStock`` or None, by the benchmark's mapping."""
    if value in _IN_STOCK:
        return "InStock"
    if value in _OUT_OF_STOCK:
        return "OutOfStock"
    return None


def _same_currency(predicted: Any, truth: Any) -> bool:
    code, shown = str(predicted).upper(), str(truth).strip()
    if shown.upper() == code:
        return True
    key = shown.rstrip(".~ ").casefold()
    return code in CURRENCY_SYMBOLS.get(key, CURRENCY_SYMBOLS.get(shown, frozenset()))


def _same_text(predicted: Any, truth: Any) -> bool:
    return " ".join(str(predicted).split()) == " ".join(str(truth).split())


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "price": lambda p, t: as_decimal(p) is not None and as_decimal(p) == as_decimal(t),
    "sku": lambda p, t: str(p).strip() == str(t).strip(),
    "availability": lambda p, t: p == stock_class(t),
    "currency": _same_currency,
    "name": _same_text,
}


def predicted_value(field: str, product: dict[str, Any] | None) -> Any:
    """The product's value of ``field`` as the benchmark reads it (None: no prediction)."""
    if product is None:
        return None
    value = product.get(field)
    if field == "availability":
        return stock_class(value)
    return None if value in (None, "") else value


def acceptable_values(truth: dict[str, Any], field: str) -> list[Any]:
    """The truth's acceptable values of ``field`` (a list; ``[]``: the page shows none)."""
    value = truth.get(field)
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if field == "availability":
        values = [stock_class(v) for v in values]
    return [v for v in values if v not in (None, "")]


def score_pages(
    pages: Iterable[tuple[str, dict[str, Any] | None, dict[str, Any]]], fields: Iterable[str]
) -> tuple[dict[str, Score], list[str]]:
    """(field -> Score, misses) over (page name, product or None, truth) triples;
    ``OutOfStock`` is scored apart as a yes/no attribute."""
    fields = list(fields)
    scores = {f: Score() for f in fields}
    oos = Score()
    misses: list[str] = []
    for name, product, truth in pages:
        for field in fields:
            got = predicted_value(field, product)
            accept = acceptable_values(truth, field)
            outcome = scores[field].add(got, accept, COMPARE[field])
            if outcome in ("fp", "wrong", "fn"):
                source = ((product or {}).get("provenance") or {}).get(field, "-")
                misses.append(
                    f"{name}: {field} [{outcome}]: got {got!r} ({source}), truth {accept or None!r}"
                )
        if "availability" in fields:
            said = predicted_value("availability", product) == "OutOfStock"
            is_oos = "OutOfStock" in acceptable_values(truth, "availability")
            oos.add(True if said else None, [True] if is_oos else [], lambda p, t: p == t)
    if "availability" in fields:
        scores["OutOfStock"] = oos
    return scores, misses


def f1_lines(scores: dict[str, Score]) -> list[str]:
    """The table: attribute, tp, fp, fn, precision, recall, F1."""
    lines = [f"{'attribute':<14}{'tp':>5}{'fp':>5}{'fn':>5}{'precision':>11}{'recall':>8}{'F1':>7}"]
    for field, s in scores.items():
        lines.append(
            f"{field:<14}{s.tp:>5}{s.fp:>5}{s.fn:>5}{s.precision:>11.3f}"
            f"{s.recall:>8.3f}{s.f1:>7.3f}"
        )
    return lines
