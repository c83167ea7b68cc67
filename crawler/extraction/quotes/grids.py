"""Where a page's market tables are: header rows that name a quote's fields, and the rows
of cells under them (:mod:`.tables` reads each row as a quote).

Two shapes are looked for: a ``<table>`` whose header row (the last of its ``<thead>``,
else its first row) names its columns, and a grid of elements (``<div>`` rows of cells,
ARIA ``role="row"``) whose first row does. A header row makes a market table's headers
only when its cells name a symbol, a price (``Last``, ``Close``) and one more field of a
quote (:func:`header_field`: the quote pages' label vocabulary, and :data:`_HEADERS` for
the words tables use and quote pages do not).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .pairs import SKIP
from .vocabulary import field_of_label, label_key

MIN_ROWS = 2
MAX_COLUMNS = 40
# column headers of market tables the quote pages' label vocabulary has no need of
# (the name of an instrument, its "% change" as tables abbreviate it); compared as
# :func:`.vocabulary.label_key` writes labels
_HEADERS = {
    label_key(text): name
    for name, texts in {
        "name": ("instrument name", "security", "stock", "share", "company", "bezeichnung",
                 "wertpapier", "titel", "aktie", "nom", "libelle", "valeur", "societe",
                 "nombre", "valor", "titulo", "nome", "titolo", "naam", "fonds", "namn",
                 "nazwa", "spolka", "название", "компания", "銘柄", "名称", "股票名称",
                 "종목"),
        "symbol": ("code", "ticker code", "wkn", "kurzel", "kürzel", "isin code", "sigle"),
        "price": ("last trade price", "letzter kurs", "kurs aktuell", "akt kurs", "cours",
                  "ult", "ultimo", "último", "ultima", "senaste", "現在値", "最新价"),
        "change_percent": ("% chg", "chg %", "% change", "change %", "% var", "var %",
                           "variation %", "var", "veränd %", "veränderung %", "+/- %",
                           "perf %", "dif %", "diferencia %", "騰落率", "涨跌幅"),
        "change": ("chg", "+/-", "veränd", "veränderung", "dif", "diferencia", "variación",
                   "前日比", "涨跌额"),
    }.items()
    for text in texts
}
# fields besides the symbol and the price that make a header row a market table's
_OTHER_FIELDS = frozenset(
    {"name", "change", "change_percent", "volume", "currency", "market_cap", "exchange",
     "previous_close", "open", "day_low", "day_high"}
)
_MAYBE_ROW = f"//*[count(*) >= 3 and count(*) <= {MAX_COLUMNS}]"


@dataclass
class Grid:
    """One table found on the page: what each column is, and its rows' cells."""

    element: Any
    columns: list[str | None]
    hints: list[str | None]  # a currency code a header names ("Last (EUR)")
    rows: list[list[Any]] = field(default_factory=list)


@functools.lru_cache(maxsize=20_000)
def header_field(text: str) -> tuple[str | None, str | None]:
    """The field a column header names, and a currency code its parentheses name."""
    named, code = field_of_label(text)
    if named is None:
        named = _HEADERS.get(label_key(text))
    if named == "day_range":
        return None, code  # "185.00 - 189.20" in one cell: left out
    return named, code


def _cells(row: Any) -> list[Any]:
    return [c for c in row if isinstance(c.tag, str) and c.tag not in SKIP]


def _short_text(cell: Any, limit: int = 60) -> str | None:
    """A header cell's words, or None when it has more than ``limit`` characters (read no
    further: a container is no header)."""
    children = len(cell)
    if children > 3:
        return None
    if not children:
        raw = cell.text or ""
    else:
        pieces, size = [], 0
        for piece in cell.itertext():
            size += len(piece)
            if size > 2 * limit:
                return None
            pieces.append(piece)
        raw = " ".join(pieces)
    if len(raw) > 2 * limit:
        return None
    text = " ".join(raw.split())
    return text if 0 < len(text) <= limit else None


def _columns(cells: list[Any]) -> tuple[list[str | None], list[str | None]] | None:
    """Each header cell's field, when they make a market table's headers."""
    if not MIN_ROWS < len(cells) + 1 <= MAX_COLUMNS:
        return None
    columns, hints = [], []
    unnamed = 0
    for cell in cells:
        text = _short_text(cell)
        named, hint = header_field(text) if text else (None, None)
        unnamed += named is None
        if unnamed > len(cells) - 3:
            return None  # fewer than three columns named: no market table's headers
        columns.append(named)
        hints.append(hint)
    fields = {c for c in columns if c}
    if "symbol" not in fields or not {"price", "close"} & fields:
        return None
    if not fields & _OTHER_FIELDS:
        return None
    if columns.count("symbol") > 1:
        return None  # two symbol columns: which one is the row's is unknown
    return columns, hints


def _table_rows(table: Any) -> list[Any]:
    rows = []
    for child in table:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody"):  # a foot holds totals, not instruments
            rows.extend(r for r in child if isinstance(r.tag, str) and r.tag == "tr")
    return rows


def find_tables(root: Any) -> Iterator[Grid]:
    for table in root.iter("table"):
        rows = _table_rows(table)
        if len(rows) <= MIN_ROWS:
            continue
        head = [r for r in rows if r.getparent().tag == "thead"]
        header = head[-1] if head else rows[0]
        found = _columns(_cells(header))
        if found is None:
            continue
        grid = Grid(table, *found)
        body = rows[rows.index(header) + 1 :]
        grid.rows = [c for c in (_cells(r) for r in body) if len(c) == len(grid.columns)]
        yield grid


def find_grids(root: Any, taken: set[Any]) -> Iterator[Grid]:
    """Grids of elements: a header row of cells, then rows of as many cells (its
    following siblings, or the children of its next sibling: a head and a body)."""
    # elements of 3 to MAX_COLUMNS children, found by libxml2 (no Python object for others)
    for element in root.xpath(_MAYBE_ROW):
        if not isinstance(element.tag, str) or element.tag in SKIP or element in taken:
            continue
        if element.tag in ("table", "thead", "tbody", "tfoot", "tr"):
            continue
        cells = _cells(element)
        if not 3 <= len(cells) <= MAX_COLUMNS or any(len(c) > 3 for c in cells):
            continue
        found = _columns(cells)
        if found is None:
            continue
        grid = Grid(element, *found)
        grid.rows = _rows_after(element, len(grid.columns))
        yield grid


def _row(element: Any, width: int) -> list[Any] | None:
    """The cells of a row of ``width`` cells (a cell holds a few elements at most: an
    element of rows is a body, not a row)."""
    cells = _cells(element)
    if len(cells) != width or any(len(_cells(c)) > 3 for c in cells):
        return None
    return cells


def _rows_after(header: Any, width: int) -> list[list[Any]]:
    """The rows of ``width`` cells after a header row: its following siblings, else the
    children of its next sibling (a body after the header); the same from its parent when
    the header row is alone in a head."""
    for start in (header, header.getparent()):
        if start is None:
            break
        siblings = [s for s in start.itersiblings() if isinstance(s.tag, str)]
        rows = [r for r in (_row(s, width) for s in siblings) if r]
        if not rows and siblings:
            rows = [r for r in (_row(s, width) for s in _cells(siblings[0])) if r]
        if rows:
            return rows
        parent = start.getparent()
        if parent is None or len(_cells(parent)) != 1:
            break  # the header row is not alone in its parent: no head around it
    return []
