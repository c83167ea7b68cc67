"""Product codes the page shows in label/value rows (SKU, UPC, EAN, GTIN, MPN,
brand), and the maker named by a brand block."""

from __future__ import annotations

import re

from ..normalize.identifiers import normalize_gtin, normalize_identifier
from ..normalize.text import normalize_text
from .dom import visible_text
from .index import PageIndex

# A block that names the product's maker: "product-manufacturer", "brand-logo"...
_BRAND_BLOCK = re.compile(
    r"^(?:product[-_]{1,2})?(?:manufacturer|brand)(?:[-_]{1,2}(?:logo|name|link|img|image))?$",
    re.I,
)
_LABEL_TAGS = frozenset({"label", "strong", "b", "span", "em", "dt", "th"})
_CODE_LABELS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:gtin(?:-?\d+)?|ean(?:-?13)?|upc(?:-?a)?|barcode|isbn(?:-?13)?|jan)$"),
     "gtin"),
    (re.compile(r"^(?:código de barras|codigo de barras)$"), "gtin"),
    (
        re.compile(
            r"^(?:mpn|manufacturer part (?:number|no)|part (?:number|no)|"
            r"(?:item )?model (?:number|no))$"
        ),
        "mpn",
    ),
    (
        re.compile(
            r"^(?:sku|item|item (?:number|no|code|#)|product (?:code|number|no|id|sku)|"
            r"article (?:number|no)|art\.?-?\s?nr|artikelnummer|reference|ref|code|"
            r"style(?: number| no)?|model|asin|referencia|código|codigo|"
            r"código de producto|artikel-?nr|bestellnummer|artikelcode|productcode|"
            r"r[ée]f[ée]rence|r[ée]f|code (?:produit|article)|codice(?: articolo| prodotto)?|"
            r"cod(?:\.|ice)?(?: produs| produto| art\.?| articolo)?|c[óo]digo do produto|"
            r"[šs]ifra(?: proizvoda| izdelka)?|k[óo]d(?: produktu| tovaru)?|"
            r"katalogov[ée] [čc][íi]slo|numer katalogowy|kod produktu|indeks|"
            r"tootekood|kood|tuotekoodi|tuotenumero|artikelnummer|artikelnr|varenummer|"
            r"item ?#|style ?#|model ?#|web id|sku ?#|item no|style no)$"
        ),
        "sku",
    ),
    (re.compile(r"^(?:brand|manufacturer|marca|marke|marque|hersteller|fabricante|made by)$"),
     "brand"),
]
_LABEL_VALUE = re.compile(r"^\s*([^\W\d_][\w .#\-]{1,30}?)\s*[:#]\s*(\S[^:]{0,80}?)\s*$")


def read_codes(idx: PageIndex) -> dict[str, str]:
    codes: dict[str, str] = {}

    def add(label: str, value: str | None) -> None:
        label = re.sub(r"[:#.\s]+$", "", label.strip().lower())
        label = re.sub(r"\s+", " ", label)
        value = (value or "").lstrip(":#. ")  # "Item #: OAK-49"
        if not value:
            return
        for pattern, key in _CODE_LABELS:
            if pattern.match(label):
                if key == "gtin":
                    gtin = normalize_gtin(value)
                    if gtin:
                        codes.setdefault("gtin", gtin)
                else:
                    ident = _code_value(value) if key == "sku" else normalize_identifier(value)
                    if ident:
                        codes.setdefault(key, ident)
                return

    for el in idx.elements:
        tag = el.tag
        if tag == "tr":
            cells = [c for c in el if c.tag in ("th", "td")]
            if len(cells) == 2 and not idx.is_excluded(el):
                add(visible_text(cells[0]), visible_text(cells[1]))
        elif tag == "dt":
            dd = el.getnext()
            if dd is not None and dd.tag == "dd" and not idx.is_excluded(el):
                add(visible_text(el), visible_text(dd))
        elif tag in ("li", "p", "span", "div", "strong", "b", "small", "em") and len(el) <= 3:
            cls = (el.get("class") or "").lower().split()
            if "sku" in cls and not idx.is_excluded(el):
                own = el.find(".//*[@itemprop='sku']")
                shown = visible_text(own if own is not None else el)
                ident = _code_value(shown)
                if ident:
                    codes.setdefault("sku", ident)
                continue
            if len(el) == 2 and el[0].tag in _LABEL_TAGS and not (el.text or "").strip():
                # <div class=product-reference><label>Reference</label><span>demo_12</span>
                label = visible_text(el[0])
                if 0 < len(label) <= 30 and not idx.is_excluded(el):
                    add(label, visible_text(el[1]))
            raw = el.text_content()
            if len(raw) > 400 or (":" not in raw and "#" not in raw):
                continue
            text = visible_text(el)
            if 3 < len(text) <= 90 and (":" in text or "#" in text):
                match = _LABEL_VALUE.match(text)
                if match and not idx.is_excluded(el):
                    add(match.group(1), match.group(2))
    return codes


def _code_value(text: str) -> str | None:
    """A product code as shown: one token ("MH07", "BA5208-010"), its label and any
    trailing words ("Black/White", "Write a review") dropped; None for plain words."""
    text = _strip_code_label(text.split("|")[0]).lstrip(":#. ")
    tokens = text.split()
    if not tokens or len(tokens[0]) > 40:
        return None
    if len(tokens) == 1 or (any(c.isdigit() for c in tokens[0]) and len(tokens[0]) >= 3):
        return normalize_identifier(tokens[0].rstrip(",;"))
    return None


def _strip_code_label(text: str) -> str:
    """"SKU MH07" -> "MH07": a label written before the code in the same element."""
    match = re.match(r"^\s*([^\W\d][\w .#\-]{0,30}?)\s*[:#]?\s+(\S+)\s*$", text)
    if match and any(p.match(match.group(1).strip().lower()) for p, _ in _CODE_LABELS):
        return match.group(2)
    return text


def brand_block(idx: PageIndex, h1_pos: int) -> str | None:
    """The maker named by a brand/manufacturer block after the heading: its short
    text, else the ``alt`` of its logo."""
    if h1_pos < 0:
        return None
    for el in idx.elements[h1_pos + 1 : h1_pos + 300]:
        tokens = (el.get("class") or "").split() + (el.get("id") or "").split()
        if not any(_BRAND_BLOCK.match(t) for t in tokens) or idx.is_excluded(el):
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
