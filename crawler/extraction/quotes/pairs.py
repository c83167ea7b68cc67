"""What a quote page shows: labels and their values, elements named for a field, the heading.

Three readers of the page's tree, each giving :class:`Found` values (text, and
the element it came from) for the fields of :mod:`.vocabulary`:

* :func:`label_pairs`: a label and its value, as pages lay them out: table rows
  (``<th>Volume</th><td>52,345,678</td>``, several pairs a row), a table whose
  header row labels its one body row, definition lists (``<dt>``/``<dd>``), an
  element and its next sibling (``<span>Vorheriger Schluss</span><span>1.234,56</span>``),
  an element and the text after it, and one text (``Volume 52,345,678``,
  ``Stand: 12.03.2025 17:35``);
* :func:`named_elements`: elements whose ``class``, ``id``, ``itemprop`` or
  ``data-*`` names say the field (``<span class="current-price">``,
  ``<fin-streamer data-field="regularMarketVolume" value="...">``), the innermost
  one when several nest;
* :class:`PageTree`: document order and each element's distance to the page's
  heading (``h1``), which tells the page's own quote from the others it shows
  (a list of related instruments, a market overview).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from crawler.extraction.normalize.text import normalize_text

from .numbers import label_scale
from .vocabulary import field_of_label, field_of_names, label_prefix

SKIP = frozenset({"script", "style", "noscript", "template", "head", "svg", "select", "option",
                  "button", "nav", "footer", "form", "iframe"})
MAX_VALUE = 80  # characters of a value
MAX_LABEL = 60
_NAME_ATTRIBUTES = ("class", "id", "itemprop", "data-field", "data-test", "data-testid",
                    "data-role", "data-type", "data-name", "data-qa", "name")
_PARTS = re.compile(r"\s+[·|•]\s+|\s{2,}|\s+-\s+(?=\D)")
_VALUE_ATTRIBUTES = ("value", "data-value", "content", "data-raw", "data-price", "datetime",
                     "data-symbol", "data-ticker")


@dataclass(frozen=True)
class Found:
    """A value the page shows for ``field``: its text, the element, a currency hint (a code
    the label's parentheses named), and how it was found."""

    field: str
    text: str
    element: Any
    source: str  # "label", "attribute"
    hint: str | None = None
    before_label: bool = False  # printed before its label (a snapshot block): not the header's
    scale: int | None = None  # a power of ten the label names ("Market Cap (Rs. Cr.)")


def inline_text(element: Any) -> str:
    """An element's text as one value: its pieces joined as they are ("187" "<small>.44")."""
    return normalize_text("".join(element.itertext())) or ""


def words_text(element: Any) -> str:
    """An element's text with its pieces separated (labels, headings)."""
    return normalize_text(" ".join(element.itertext())) or ""


class PageTree:
    """The elements of a page in document order (scripts, navigation, forms left out),
    and each one's closeness to the heading: the depth of their nearest common ancestor
    (deeper is closer)."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.elements: list[Any] = []
        self.order: dict[Any, int] = {}
        self._walk(root)
        self.heading = next((e for e in self.elements if e.tag == "h1"), None)
        # characters of text under each element (its own, its children's, their tails):
        # one pass, children first, so that big containers are never joined into text
        self.size: dict[Any, int] = {}
        for node in reversed(self.elements):
            size = len(node.text or "")
            for child in node:
                if isinstance(child.tag, str):
                    size += self.size.get(child, 0)
                size += len(child.tail or "")
            self.size[node] = size
        self._inline: dict[Any, str] = {}
        self._words: dict[Any, str] = {}
        self.listed: dict[Any, bool] = {}  # evidence.in_listing's answers
        self._anchor: dict[Any, int] = {}
        if self.heading is not None:
            chain = [self.heading, *self.heading.iterancestors()]
            for depth, element in enumerate(reversed(chain)):
                self._anchor[element] = depth

    def _walk(self, element: Any) -> None:
        stack = [element]
        while stack:
            node = stack.pop()
            if not isinstance(node.tag, str) or node.tag in SKIP:
                continue
            self.order[node] = len(self.elements)
            self.elements.append(node)
            stack.extend(reversed(list(node)))

    def inline(self, element: Any) -> str:
        """:func:`inline_text`, once per element."""
        found = self._inline.get(element)
        if found is None:
            found = self._inline[element] = inline_text(element)
        return found

    def words(self, element: Any) -> str:
        """:func:`words_text`, once per element."""
        found = self._words.get(element)
        if found is None:
            found = self._words[element] = words_text(element)
        return found

    def closeness(self, element: Any) -> int:
        if element is None or not self._anchor:
            return 0
        for node in (element, *element.iterancestors()):
            if node in self._anchor:
                return self._anchor[node]
        return 0

    def after_heading(self, limit: int) -> list[Any]:
        """The first ``limit`` elements after the heading (after the top without one)."""
        start = self.order[self.heading] + 1 if self.heading is not None else 0
        return self.elements[start : start + limit]


def _next_element(tree: PageTree, element: Any) -> Any:
    sibling = element.getnext()
    while sibling is not None and (not isinstance(sibling.tag, str) or not tree.inline(sibling)):
        sibling = sibling.getnext()
    return sibling


def _pair(tree: PageTree, label: Any, value: Any, value_text: str | None = None,
          hint: str | None = None, before_label: bool = False) -> Found | None:
    label_text = tree.words(label)
    if not label_text or len(label_text) > MAX_LABEL:
        return None
    field, code = field_of_label(label_text)
    if field is None:
        return None
    if value_text is None and value.tag == "select":
        # a list of dates (or of anything) whose chosen option is the value
        chosen = [o for o in value.iter("option") if o.get("selected") is not None]
        value_text = inline_text(chosen[0]) if chosen else ""
    text = value_text if value_text is not None else tree.inline(value)
    if not text or len(text) > MAX_VALUE or field_of_label(text)[0] is not None:
        return None  # no value, or another label (a header row: "Symbol", "Name", "Last")
    return Found(field, text, value, "label", code or hint or currency_sign(label_text),
                 before_label, label_scale(label_text) if field in _SCALED else None)


_SCALED = ("market_cap",)  # a volume under "(Mio.)" is rare, and a count
_PAREN_SIGN = re.compile(r"[(（]\s*(R\$|Rs\.?|[$€£¥₹₩円원])\s*[)）]")


def currency_sign(text: str) -> str | None:
    """A currency sign a label or a column header names in parentheses (``NAV (₹)``,
    ``Value ($)``): a hint for the currency of the values under it."""
    match = _PAREN_SIGN.search(text)
    return match.group(1) if match else None


def _column_signs(table: Any) -> dict[int, str]:
    """The currency codes or signs a table's header row names for its columns
    (``Details | Value ($)``, ``Kennzahl | Wert (EUR)``)."""
    first = next(table.iter("tr"), None)
    if first is None:
        return {}
    signs: dict[int, str] = {}
    for index, cell in enumerate(c for c in first if isinstance(c.tag, str)):
        text = words_text(cell)
        if len(text) > MAX_LABEL:
            continue
        sign = field_of_label(text)[1] or currency_sign(text)
        if sign:
            signs[index] = sign
    return signs


def _snapshot_pairs(tree: PageTree, element: Any) -> list[Found]:
    """A block that prints each value before its label (``44,90 Clôture veille 45,00
    Ouverture``): the children alternate value and label, a value first, a label last."""
    elements = [c for c in element if isinstance(c.tag, str)]
    if len(elements) < 4 or len(elements) > 48:
        return []
    shown = (c for c in elements if tree.size.get(c))
    first, second = next(shown, None), next(shown, None)
    if first is None or second is None or tree.size[first] > MAX_VALUE \
            or tree.size[second] > MAX_LABEL or not any(ch.isdigit() for ch in tree.inline(first)) \
            or field_of_label(tree.words(second))[0] is None:
        return []  # (cheap refusals first: most blocks are not snapshots)
    children = [c for c in elements if tree.inline(c)]
    if len(children) < 4 or len(children) % 2 or len(children) > 24:
        return []
    found: list[Found] = []
    for value, label in zip(children[::2], children[1::2], strict=True):
        if not any(ch.isdigit() for ch in tree.inline(value)) or field_of_label(
            tree.words(value)
        )[0] is not None:
            return []
        pair = _pair(tree, label, value, before_label=True)
        if pair is None:
            return []
        found.append(pair)
    return found


def _table_pairs(tree: PageTree) -> Iterator[Found]:
    signs: dict[Any, dict[int, str]] = {}
    for row in (e for e in tree.elements if e.tag == "tr"):
        cells = [cell for cell in row if isinstance(cell.tag, str) and cell.tag in ("th", "td")]
        table = next(row.iterancestors("table"), None)
        if table is not None and table not in signs:
            signs[table] = _column_signs(table)
        columns = signs.get(table, {})
        index = 0
        while index < len(cells) - 1:
            found = _pair(tree, cells[index], cells[index + 1], hint=columns.get(index + 1))
            if found is not None:
                yield found
                index += 2
            else:
                index += 1
    for table in (e for e in tree.elements if e.tag == "table"):
        rows = [row for row in table.iter("tr")]
        if len(rows) != 2:  # a header row and one body row; more rows: a listing
            continue
        header, body = ([c for c in row if isinstance(c.tag, str)] for row in rows)
        if len(header) != len(body) or len(header) < 2:
            continue
        for label, value in zip(header, body, strict=True):
            found = _pair(tree, label, value)
            if found is not None:
                yield found


def label_pairs(tree: PageTree) -> list[Found]:
    """Every label the vocabulary knows and its value, in page order (see the module doc)."""
    found: list[Found] = list(_table_pairs(tree))
    for element in tree.elements:
        if element.tag not in ("tr", "table", "tbody", "thead", "dl") and \
                tree.size[element] <= 24 * (MAX_LABEL + MAX_VALUE):
            found.extend(_snapshot_pairs(tree, element))
    taken = {id(f.element) for f in found}
    for element in tree.elements:
        tag = element.tag
        if tag in ("tr", "td", "th", "table", "tbody", "thead", "html", "body"):
            continue
        if tag == "dt":
            value = _next_element(tree, element)
            if value is not None and value.tag == "dd":
                pair = _pair(tree, element, value)
                if pair is not None:
                    found.append(pair)
                    taken.add(id(value))
            continue
        children = [child for child in element if isinstance(child.tag, str)]
        if tree.size[element] > 2 * (MAX_LABEL + MAX_VALUE):
            continue  # a container: no label and value of its own
        if not children or all(not tree.inline(child) for child in children):
            # a label element: its value is its next sibling, or the text after it
            tail = normalize_text(element.tail)
            if tail and any(ch.isdigit() for ch in tail):
                pair = _pair(tree, element, element, tail)
            else:
                value = _next_element(tree, element)
                pair = _pair(tree, element, value) if value is not None and id(value) not in taken \
                    else None
            if pair is not None:
                found.append(pair)
                taken.add(id(pair.element))
                continue
        if len(children) > 6:
            continue  # a container, not one line "Label value"
        text = tree.words(element)
        if not text or len(text) > 2 * (MAX_LABEL + MAX_VALUE):
            continue
        # "Código: BEJ · ISIN: ES01 · Mercado: BME": one pair per part
        for part in _PARTS.split(text):
            field, width = label_prefix(part)
            if field is not None and width < len(part) <= MAX_LABEL + MAX_VALUE:
                rest = part[width:].strip()
                if rest and not any(f.field == field and f.text == rest for f in found):
                    found.append(Found(field, rest, element, "label"))
    return found


def named_elements(tree: PageTree) -> list[Found]:
    """Elements whose names say their field (see the module doc), innermost first kept."""
    found: list[Found] = []
    for element in tree.elements:
        names = tuple(value for name in _NAME_ATTRIBUTES if (value := element.get(name)))
        field = field_of_names(names) if names else None
        if field is None:
            continue
        text = ""
        for name in _VALUE_ATTRIBUTES:
            value = (element.get(name) or "").strip()
            if value and name not in ("data-symbol", "data-ticker"):
                text = value
                break
        if not text and tree.size[element] <= 2 * MAX_VALUE:
            text = tree.inline(element)
        if text and len(text) <= MAX_VALUE:
            found.append(Found(field, text, element, "attribute"))
    # an element holding another of the same field (a box around the price) is not one
    outer = {(f.field, ancestor) for f in found for ancestor in f.element.iterancestors()}
    return [f for f in found if (f.field, f.element) not in outer]


def symbol_attributes(tree: PageTree) -> list[tuple[str, Any]]:
    """Symbols elements carry in ``data-symbol``/``data-ticker`` (live-quote widgets)."""
    return [
        ((element.get("data-symbol") or element.get("data-ticker") or "").strip(), element)
        for element in tree.elements
        if element.get("data-symbol") or element.get("data-ticker")
    ]


_DATE_LIKE = re.compile(r"\d{1,4}[./\-年]\s?(?:\d{1,2}|[A-Za-z]{3,9})[./\-月]\s?\d{1,4}")
_CHOSEN_CLASSES = frozenset("selected active current chosen is-selected is-active".split())


def chosen_date(root: Any) -> tuple[str, Any] | None:
    """The date chosen in a list of dates (a fund's NAV date): the selected ``<option>`` of a
    ``<select>`` of dates, or the one item of a list of dates marked ``selected``,
    ``active`` or ``aria-selected``; its text and element, or None."""
    for select in root.iter("select"):
        options = list(select.iter("option"))
        dates = [o for o in options if _DATE_LIKE.search(inline_text(o))]
        chosen = [o for o in dates if o.get("selected") is not None]
        if len(dates) >= 2 and len(chosen) == 1:
            return inline_text(chosen[0]), select
    for item in root.iter("li", "a", "button", "span"):
        classes = set((item.get("class") or "").lower().split())
        if not (classes & _CHOSEN_CLASSES or item.get("aria-selected") == "true"
                or item.get("aria-current") in ("true", "date")):
            continue
        text = inline_text(item)
        parent = item.getparent()
        if len(text) > 30 or not _DATE_LIKE.search(text) or parent is None:
            continue
        siblings = [c for c in parent if isinstance(c.tag, str) and c is not item]
        if any(_DATE_LIKE.search(inline_text(c)) for c in siblings):
            return text, item
    return None
