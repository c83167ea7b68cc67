"""Product codes the page shows in label/value rows (SKU, UPC, EAN, GTIN, MPN,
brand), and the maker named by a brand block."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from itertools import compress, islice
from operator import not_

from lxml import etree
from lxml.etree import _Element

from ..normalize.currency import is_amount
from ..normalize.identifiers import normalize_gtin, normalize_identifier
from ..normalize.text import normalize_text
from .code_labels import label_kind
from .dom import CachedSearch, text_at, text_of, visible_text
from .index import PageIndex, register_class_test

# A block that names the product's maker: "product-manufacturer", "brand-logo"...
_BRAND_BLOCK = re.compile(
    r"^(?:product[-_]{1,2})?(?:manufacturer|brand)(?:[-_]{1,2}(?:logo|name|link|img|image))?$",
    re.I,
)
_LABEL_TAGS = frozenset({"label", "strong", "b", "span", "em", "dt", "th", "div", "p", "h5", "h6"})
# Label, separator, value: "SKU: MH07", "Item # 101095", "Walmart #: 553503329", "REF. 8107".
_LABEL_VALUE = re.compile(
    r"^\s*([^\W\d_][\w .&'\"״\-]{0,30}?)\s*(#\s*:?|:|\.(?=\s*\S*\d))\s*(\S[^:]{0,80}?)\s*$"
)
# A label written before the code with only a space: "SKU MH07", "Item 3928".
_LABEL_SPACE_VALUE = re.compile(r"^\s*([^\W\d_][\w .&'\-]{0,30}?)\s+(\S*\d\S*)(?:\s+[-|/;,]\s.*)?$")
# An element marked as the product code by its class or id: "sku", "product-sku",
# "item-number", "itemNo", "product-code", "sku-value"... Searched in the page index's
# "class id" string (remembered per string): a match is one whitespace-separated token,
# so it is found there exactly when it is found in the class or in the id.
_CODE_CLASS = CachedSearch(
    re.compile(
        r"(?:^|\s)(?:(?:product|prod|item|article|art)[-_]?(?:sku|code|no|nr|num|number|ref|reference)|"
        r"sku|item[-_]?sku)(?:[-_]?(?:value|id|number|code|text|info|wrap|wrapper|container|box))?"
        r"(?=\s|$)",
        re.I,
    )
)
register_class_test(
    _CODE_CLASS.search,
    need=re.compile(r"(?:product|prod|item|article|art)[-_]?(?:sku|code|no|nr|num|ref)|sku"),
)
# "#790485" alone in an element after the heading (a product-details list ends with it).
_HASH_CODE = re.compile(r"^#\s?([A-Za-z]{0,3}\d{4,}[A-Za-z0-9-]{0,8})$")


def read_codes(idx: PageIndex, h1_pos: int = -1) -> dict[str, str]:
    """The codes the page shows: ``sku`` (labelled as the shop's code, or in an
    element marked as one), ``mpn`` (model or part number), ``hash_code`` (a lone
    "#790485" after the heading), ``gtin``, ``brand``. The first of each kind wins;
    a shop's "<name> #" number counts as ``sku`` when no SKU label is shown."""
    codes: dict[str, str] = {}

    def add(label: str, value: str | None) -> bool:
        value = (value or "").lstrip(":#. ")  # "Item #: OAK-49"
        kind = label_kind(label) if value else None
        if kind == "gtin":
            gtin = normalize_gtin(value)
            if gtin:
                codes.setdefault("gtin", gtin)
        elif kind in ("sku", "shop", "mpn"):
            ident = _code_value(value)
            if (
                ident
                and kind == "mpn"
                and _MODEL_LABEL.match(label.strip().lower())
                and not (any(c.isdigit() for c in ident))
            ):
                return True  # "Model: Primrose" names a model; it is no code
            if ident and (kind != "shop" or any(c.isdigit() for c in ident)):
                codes.setdefault(kind, ident)
        elif kind == "brand":
            ident = normalize_identifier(value)
            if ident:
                codes.setdefault("brand", ident)
        return kind is not None

    # the rows, terms and text elements only, in document order; the elements marked
    # as a code by their class or id found once per class-and-id string, or by an
    # itemprop "sku" outside any item (class: themes whose microdata lacks its itemscope,
    # so no microdata reader sees the property)
    marked = set(idx.with_class(_CODE_CLASS.search))
    marked.update(p for p in idx.by_itemprop.get("sku", []) if _outside_items(idx.elements[p]))
    texts = _text_elements(idx, marked)
    rows = [idx.by_tag.get(tag, []) for tag in ("tr", "dt")]
    elements = idx.elements
    for pos in idx.positions(*rows, list(texts)):
        el = elements[pos]
        tag = el.tag
        if tag == "tr":
            cells = [c for c in el if c.tag in ("th", "td")]
            if len(cells) == 2 and not idx.is_excluded(el):
                add(visible_text(cells[0]), visible_text(cells[1]))
            continue
        if tag == "dt":
            dd = el.getnext()
            if dd is not None and dd.tag == "dd" and not idx.is_excluded(el):
                add(visible_text(el), visible_text(dd))
            continue
        raw, excluded = texts[pos]
        if pos in marked and not excluded:
            own = el.find(".//*[@itemprop='sku']")
            ident = _code_value(visible_text(own if own is not None else el), any_label=True)
            if ident:
                codes.setdefault("sku", ident)
                continue
        if raw is None:
            continue
        children = [c for c in el if isinstance(c.tag, str)] if len(el) else []
        if tag in _LABEL_TAGS and not children:
            _adjacent_value(el, idx, add)
        if excluded:
            continue
        if len(children) == 2 and children[0].tag in _LABEL_TAGS and not (el.text or "").strip():
            # <div class=product-reference><label>Reference</label><span>demo_12</span>
            label = visible_text(children[0])
            if 0 < len(label) <= 30 and not idx.is_excluded(el):
                add(label, visible_text(children[1]))
        text = visible_text(el) if len(raw) <= 200 else ""
        # CJK pages: a full-width colon, the row in brackets ("〈商品編號：M67296549〉")
        text = text.replace("：", ":").strip("〈〉《》【】 ")
        if not 3 < len(text) <= 90:
            continue
        # "Ref.: 81070185 | Colour: black": the first of several rows written in one line
        # ("Ref. 81070185 · Colour: black", "• " too)
        match = _LABEL_VALUE.match(_ROW_SEPARATOR.split(text, 1)[0])
        spaced = None if match else _LABEL_SPACE_VALUE.match(text)
        if (
            spaced
            and spaced.group(1).strip().lower() in _TOO_VAGUE_WITHOUT_COLON
            and not _REFERENCE_NUMBER.fullmatch(spaced.group(2))
        ):
            spaced = None  # "Code FIVE4U": a coupon, not a product code ("REF 81070185" is)
        if (match or spaced) and not idx.is_excluded(el) and not _in_promotion(el):
            if match:
                add(match.group(1) + match.group(2), match.group(3))
            elif spaced:
                add(spaced.group(1), spaced.group(2))
        elif h1_pos >= 0 and pos > h1_pos and not children and "hash_code" not in codes:
            hashed = _HASH_CODE.match(text)
            if hashed and not idx.is_excluded(el) and not _is_rank(el):
                codes["hash_code"] = hashed.group(1)
    if "shop" in codes:
        codes.setdefault("sku", codes.pop("shop"))
    return codes


def _outside_items(el: _Element) -> bool:
    """No ancestor of ``el`` opens a microdata item (``itemscope``)."""
    return all(a.get("itemscope") is None for a in el.iterancestors())


def _text_elements(idx: PageIndex, marked: set[int]) -> dict[int, tuple[str | None, bool]]:
    """The text elements :func:`read_codes` reads, by position: their text (None for one
    read only as marked as a code: its text is over 400 characters long, or can hold no
    label), and whether it is excluded. Read in reverse document order: the text of an
    element holds that of each of its descendants, so one found over 400 characters long
    makes its ancestors so without their subtrees being serialized again."""
    elements, order = idx.elements, idx.order
    excluded_at = idx.excluded_flags()
    # an excluded element (a header, a related product...) gives at most the value
    # beside it when it is a childless label (every other way wants it not excluded):
    # the excluded elements of the other text tags are left out of the loop (most of a
    # page's text elements are excluded), picked out of their tag's positions at C speed
    groups = [idx.by_tag.get(tag, []) for tag in _LABELLED_TEXT_TAGS]
    for tag in _UNLABELLED_TEXT_TAGS:
        if where := idx.by_tag.get(tag):
            groups.append(list(compress(where, map(not_, map(excluded_at.__getitem__, where)))))
    long: set[int] = set()  # positions of the elements known to be over 400 characters
    found: dict[int, tuple[str | None, bool]] = {}
    for pos in reversed(idx.positions(*groups)):
        el = elements[pos]
        excluded = excluded_at[pos]
        # the count of child nodes is read once (lxml counts them on every call)
        nodes = len(el)
        if excluded:  # an excluded label is passed over when it has an element child
            # (comments do not count): its first child is one, mostly
            if nodes and (
                isinstance(el[0].tag, str) or next(el.iterchildren(etree.Element), None) is not None
            ):
                continue
        elif nodes > 3 and sum(1 for _ in islice(el.iterchildren(etree.Element), 4)) > 3:
            continue  # more than 3 element children
        raw: str | None
        if nodes:  # (only an element with children can be known to be long)
            raw = None if pos in long else text_at(idx.texts, pos, el)
        else:  # a leaf's text is its text node
            raw = el.text
            if not raw or raw.isspace():
                continue  # nothing to read, nor as a code (its visible text is empty)
        if raw is not None and len(raw) > 400:
            raw = None
            parent = el.getparent()
            while parent is not None:
                up = order.get(parent)
                if up is None or up in long:
                    break  # above the walk, or marked with its own ancestors
                long.add(up)
                parent = parent.getparent()
        if raw is not None and not (":" in raw or "#" in raw or "：" in raw):
            # a label written before the code with a space ("Item 3928", "REF. 8107 - x"),
            # tested cheaply before the visible text is read
            text = raw.strip()
            if not (len(text) <= 120 and text[:1].isalpha() and _DIGIT.search(text)) and not (
                len(text) <= 12 and text.endswith(".") and not nodes
            ):  # (an abbreviated label alone, "Ref.", is read with the value beside it)
                raw = None
        if raw is not None or (pos in marked and not excluded):
            found[pos] = (raw, excluded)
    return found


_DIGIT = re.compile(r"\d")
# The separator of several rows written in one line.
_ROW_SEPARATOR = re.compile(r"\s[|·•]\s")
# A model's label: its value is a model name ("Primrose") unless it holds a digit.
_MODEL_LABEL = re.compile(r"^(?:item )?(?:model|modell|modèle|modelo|modello)\b")
# A "#4198" that is a rank ("Overall Rank: #4198", "Best Sellers Rank #12"), not a code.
_RANK = re.compile(r"\brank|\bposition\b|\bplatz\b|\bclassement\b", re.I)


def _is_rank(el: _Element) -> bool:
    parent = el.getparent()
    previous = el.getprevious()
    around = " ".join(
        visible_text(x) for x in (previous, parent) if x is not None and len(text_of(x)) < 200
    )
    return bool(_RANK.search(around))


_TEXT_TAGS = frozenset(
    {"li", "p", "span", "div", "strong", "b", "small", "em", "h5", "h6", "label", "td", "dd"}
)
# the text tags that can be labels (read excluded too), and the others
_LABELLED_TEXT_TAGS = tuple(sorted(_TEXT_TAGS & _LABEL_TAGS))
_UNLABELLED_TEXT_TAGS = tuple(sorted(_TEXT_TAGS - _LABEL_TAGS))


# A value that no coupon is: a number of five digits or more ("REF 81070185").
_REFERENCE_NUMBER = re.compile(r"\d{5,}")
# Labels that name a product code only when a ":" or "#" follows them (or a number).
_TOO_VAGUE_WITHOUT_COLON = frozenset({"code", "kood", "kod", "kód", "cod", "ref", "item"})
# Coupon banners: "New to the shop? $5 off with code FIVE4U".
_PROMOTION = re.compile(r"promo|coupon|voucher|use-?code|offer-?code|discount|banner", re.I)


@lru_cache(maxsize=4096)
def _promotional(cls: str) -> bool:
    """A class or id of a coupon banner (remembered: a page's ancestors' repeat)."""
    return _PROMOTION.search(cls) is not None


def _in_promotion(el: _Element) -> bool:
    node: _Element | None = el
    for _ in range(4):  # the element and its three nearest ancestors
        if node is None:
            return False
        if _promotional(node.get("class") or "") or _promotional(node.get("id") or ""):
            return True
        node = node.getparent()
    return False


def _adjacent_value(el: _Element, idx: PageIndex, add: Callable[[str, str], bool]) -> None:
    """A label element followed by its value in the next element:
    ``<span>Item Id:</span><span>GLOWROLL</span>``."""
    label = visible_text(el)
    if not 1 < len(label) <= 30 or not re.search(r"[:#.]\s*$", label):
        return
    # an abbreviated label ends with its point ("Ref.", "Art.-Nr."; class: shops writing
    # their reference as a label element and the code beside it): a code's label only,
    # and its value must hold a digit
    dotted = label.rstrip().endswith(".") and label_kind(label) is not None
    if label.rstrip().endswith(".") and not dotted:
        return
    value = el.getnext()
    while value is not None and not isinstance(value.tag, str):
        value = value.getnext()
    if value is None or value not in idx.order or idx.is_excluded(value):
        return
    shown = visible_text(value)
    if 0 < len(shown) <= 60 and (not dotted or _DIGIT.search(shown)):
        add(label, shown)


def _code_value(text: str, any_label: bool = False) -> str | None:
    """A product code as shown: one token ("MH07", "BA5208-010"), its label and any
    trailing words ("Black/White", "- Crepus", "Write a review") dropped; None for
    plain words. ``any_label``: the element is marked as a code, so whatever label
    ends with ":" is dropped ("Online Inquiries: NMF17_X3U1W")."""
    text = _strip_code_label(text.split("|")[0], any_label).lstrip(":#. ")
    tokens = text.split()
    if tokens and is_amount(tokens[0]):
        return None  # "US$11.99" in a code's place: a price, never a code
    if not tokens or len(tokens[0]) > 40:
        return None
    if len(tokens) == 1 or (any(c.isdigit() for c in tokens[0]) and len(tokens[0]) >= 3):
        return normalize_identifier(tokens[0].rstrip(",;"))
    return None


def _label_and_value(text: str) -> tuple[str, str] | None:
    """A code row's label and value ("SKU: MH07", "Item # 101095", "Model 12AB")."""
    if match := _LABEL_VALUE.match(text):
        return match.group(1) + match.group(2), match.group(3)
    if spaced := _LABEL_SPACE_VALUE.match(text):
        return spaced.group(1), spaced.group(2)
    return None


def read_code_row(text: str) -> dict[str, str]:
    """``{kind: code}`` of one code row ("Код: 01245" -> ``{"sku": "01245"}``)."""
    row = _label_and_value(text)
    if row is None:
        return {}
    label, value = row
    kind = label_kind(label)
    ident = _code_value(value.lstrip(":#. "))
    if kind in ("sku", "shop") and ident:
        return {"sku": ident}
    if kind == "mpn" and ident:
        return {"mpn": ident}
    return {}


def is_code_row(text: str) -> bool:
    """A product code with its label and nothing else: "Item # 101095", "SKU: MH07"."""
    row = _label_and_value(text)
    if row is None:
        return False
    label, value = row
    return (
        label_kind(label) in ("sku", "shop", "mpn", "gtin")
        and len(value.split()) == 1
        and _code_value(value) is not None
    )


def _strip_code_label(text: str, any_label: bool = False) -> str:
    """ "SKU MH07" -> "MH07": a label written before the code in the same element."""
    match = _LABEL_VALUE.match(text)
    if match and (any_label and ":" in match.group(2) or label_kind(match.group(1))):
        return match.group(3)
    match = _LABEL_SPACE_VALUE.match(text)
    if match and label_kind(match.group(1)):
        return match.group(2)
    match = re.match(r"^\s*([^\W\d][\w .#\-]{0,30}?)\s*[:#]?\s+(\S+)\s*$", text)
    if match and label_kind(match.group(1)):
        return match.group(2)
    return text


def brand_block(idx: PageIndex, h1_pos: int) -> str | None:
    """The maker named by a brand/manufacturer block after the heading: its short
    text, else the ``alt`` of its logo."""
    if h1_pos < 0:
        return None
    for pos in idx.with_class(_names_brand):  # in document order
        if pos <= h1_pos:
            continue
        if pos >= h1_pos + 300:
            break
        el = idx.elements[pos]
        if idx.is_excluded(el):
            continue
        imgs = [el] if el.tag == "img" else el.findall(".//img")
        text = visible_text(el) if el.tag != "img" else ""
        if text:
            if len(text) <= 40 and ":" not in text:
                return text
            continue
        for img in imgs:
            alt = normalize_text(img.get("alt"))
            if alt and len(alt) <= 40:
                return alt
    return None


@register_class_test(need=re.compile(r"manufacturer|brand", re.I))
@lru_cache(maxsize=4096)
def _names_brand(key: str) -> bool:
    """A token of a class-and-id string names a brand block (its tokens are those of
    the class and of the id; remembered per string)."""
    return any(_BRAND_BLOCK.match(t) for t in key.split())
