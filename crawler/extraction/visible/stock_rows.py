"""Stock rows: a details row or a label whose value answers the stock question.

The class of pages: specification tables and details lists (B2B shops, classifieds,
marketplaces) that answer "in stock?" with a yes, a no or a count: ``In stock: No``,
``<th>Stock</th><td>0</td>``, ``Lagerbestand: 3 Stück``. Read by
:func:`.availability.read_availability` among the page's stock wording.
"""

from __future__ import annotations

import re

from lxml.etree import _Element

from ..normalize.text import normalize_text

# A stock row's label ("In stock: No", "Stock: 0", "Lagerbestand: 3 Stück") and the
# answers its value gives (class: specification tables and details lists of B2B shops
# and classifieds that answer the stock question with a yes, a no or a count).
STOCK_LABEL = re.compile(
    r"^(?:in stock|stock|on hand|available|availability|qty available|quantity available|"
    r"lagerbestand|auf lager|verfügbar|bestand|en stock|disponible|disponibilidad|"
    r"disponibilità|disponibilidade|em estoque|op voorraad|voorraad|na stanie|"
    r"stan magazynowy|dostępność|skladem|в наличии|наличие|остаток|stok|"
    r"在庫|库存|庫存|재고)\s*[:：]?\s*(.*)$",
    re.I,
)
_NO = frozenset(
    {
        "no",
        "nein",
        "non",
        "nie",
        "nee",
        "nej",
        "ei",
        "ne",
        "não",
        "нет",
        "なし",
        "없음",
        "无",
        "無",
        "none",
    }
)
_YES = frozenset(
    {"yes", "ja", "oui", "sí", "si", "sim", "tak", "да", "kyllä", "あり", "있음", "有"}
)
_COUNT = re.compile(r"^(\d+)(?:\s*[^\W\d_]{1,6}\.?)?$")


def stock_row(el: _Element, own: str, in_rows: bool) -> str | None:
    """The state a stock row answers: its label in ``own`` (the element's own text)
    and its value after the label or in the next element (``<th>In stock</th><td>No
    </td>``, ``<span>Stock:</span> <span>0</span>``); None when it is no such row.
    In a table of several rows (``in_rows``) only a two-cell row counts, a row of the
    product's details; a cell of a variants' or sellers' table says its own stock."""
    match = STOCK_LABEL.match(own)
    if match is None:
        return None
    value = match.group(1).strip()
    if in_rows:
        row = el.getparent()
        cells = [] if row is None else [c for c in row if c.tag in ("th", "td")]
        if value or len(cells) != 2 or cells[0] is not el:
            return None
    if not value:
        after = el.getnext()
        if after is None or len(after) or el.tail and el.tail.strip():
            return None
        value = normalize_text(after.text) or ""
    value = value.strip(" .!").lower()
    if value in _NO:
        return "OutOfStock"
    if value in _YES:
        return "InStock"
    count = _COUNT.match(value)
    if count is None:
        return None
    return "InStock" if int(count.group(1)) > 0 else "OutOfStock"
