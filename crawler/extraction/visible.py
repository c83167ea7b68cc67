"""What a shopper sees: the visible page, read without structured data.

:func:`read_visible_page` walks the lxml tree once and finds

* the main heading (one ``<h1>``, outside headers, navs and product cards);
* price elements (``itemprop=price``, classes containing ``price``/``amount``),
  grouped into *grids*: three or more sibling blocks that each hold a price are
  product cards of a listing or of a "related products" strip;
* the selling price shown right after the heading, outside any grid: in its
  price box a sale price (``ins``, ``.special-price``, ``.sale-price``...) beats
  list prices (``del``, ``s``, ``.old-price``, ``.was-price``,
  ``.regular-price``...);
* stock wording, product-code rows (SKU, UPC, EAN, GTIN, MPN, brand),
  breadcrumb trails, gallery images, the description block and add-to-cart
  controls.

The result is a :class:`VisiblePage`; :mod:`crawler.extraction.product` decides
what wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from lxml.html import HtmlElement

from .normalize.availability import availability_from_text, availability_states
from .normalize.identifiers import normalize_gtin, normalize_identifier
from .normalize.price import parse_price
from .normalize.text import normalize_text

_PRICE_CLASS = re.compile(
    r"price|amount|precio|preço|preco|preis|prix|prezzo|"
    r"(?:^|[\s_-])(?:cena|cijena|pris|hinta|hind|pret|preț|cost|kaina|prijs)(?:$|[\s_-])",
    re.I,
)
# A second amount right after a price: "<span>$12.97</span> - $24.99", "10 € bis 20 €".
_RANGE_AFTER = re.compile(r"\s*(?:-|–|—|to|bis|à|a|до|–)\s*\S{0,4}\s?\d", re.I)
# Links that do something (or ask) rather than name another product.
_ACTION_LABEL = re.compile(
    r"\?\s*$|^\s*(?:add|see|view|notify|don'?t|do not|find|write|read|share|tell|learn|shop|"
    r"compare|sign|log|check|get|ask|email|print|save|more|show|size|free)\b",
    re.I,
)
# A link out of a block to another page (a product card's title or image link).
_NOT_CARD_LINK = re.compile(r"^\s*(?:#|javascript:|mailto:)|cart|basket|wish|review|compare", re.I)
# Parts of a split price ("<span class=price-whole>1,099</span><span class=price-fraction>99")
# are not prices of their own: the element around them is.
_PRICE_PART = re.compile(
    r"(?:^|[-_\s])(?:whole|fraction|decimals?|integer|cents|symbol|currency|entero|decimales|"
    r"ganzzahl|entier|intero)(?:$|\s)",
    re.I,
)
_PRICE_WHOLE = re.compile(r"(?:^|[-_\s])(?:whole|integer|entero|entier|intero)(?:$|\s)", re.I)
_PRICE_FRACTION = re.compile(
    r"(?:^|[-_\s])(?:fraction|decimals?|decimales|cents)(?:$|\s)", re.I
)
# Screen-reader copies of a price: the full amount, in one string.
_SCREEN_READER = re.compile(
    r"(?:^|\s)(?:a-offscreen|sr-only|visually-?hidden|visuallyhidden|screen-?reader-?text|"
    r"offscreen)(?:$|\s)",
    re.I,
)
# A label right before a price that makes it a list price ("List Price: $1,299.00").
_LIST_LABEL = re.compile(
    r"(?:list price|was|before|rrp|msrp|srp|uvp|statt|vorher|antes|normal|"
    r"precio (?:normal|de lista|anterior|regular)|prix (?:barré|initial|de référence)|de)"
    r"\s*:?",
    re.I,
)
# A label right before a price that makes it the current one ("Was $64.95 Now $52.00").
_SALE_LABEL = re.compile(
    r"\s*(?:now|sale|sale price|now only|special price|our price|jetzt|nur|ahora|"
    r"maintenant|ora|nu)\s*:?\s*$",
    re.I,
)
_NOT_PRICE_CLASS = re.compile(
    r"label|unit|per-?(?:kg|item|100|l\b)|excl|excluding|installment|instalment|klarna|"
    r"afterpay|saving|save|discount|percent|off\b|range|filter|slider|currency-?code|"
    r"tax-?info|points|shipping|grundpreis|precio-?unit|prix-?unit",
    re.I,
)
_NOT_PRICE_CONTEXT = re.compile(
    r"excl|excluding|installment|instalment|klarna|afterpay|saving|unit-?price|price-?per",
    re.I,
)
_HARD_LIST_TAGS = frozenset({"del", "s", "strike"})
_HARD_LIST_CLASS = re.compile(
    r"old-?price|price-?old|was-?price|price-?was|\bwas\b|list-?price|price-?list|"
    r"compare-?at|price--?compare|compare-?price|strike|crossed|price-?before|"
    r"original-?price|price--?original|rrp|msrp|retail-?price|"
    r"precio-?(?:anterior|normal|lista|antes)|streichpreis|alter-?preis|prix-?barr",
    re.I,
)
_SOFT_LIST_CLASS = re.compile(r"regular-?price|price--?regular|price-item--regular", re.I)
_SALE_CLASS = re.compile(
    r"special-?price|sale-?price|price--?sale|price-item--sale|final-?price|current-?price|"
    r"price--?current|price-?new|new-?price|\bnow\b|price-?now|offer-?price|our-?price|"
    r"precio-?(?:oferta|final|ahora)|angebots-?preis|aktions-?preis|prix-?promo",
    re.I,
)
_EXCLUDED_SECTION = re.compile(
    r"related|upsell|up-sell|cross-?sell|recommend|recently|similar|also-(?:bought|viewed|like)|"
    r"you-may|minicart|mini-cart|cart-drawer|site-header|site-footer",
    re.I,
)
_EXCLUDED_TAGS = frozenset({"header", "footer", "nav", "aside"})
_SKIPPED_TAGS = frozenset(
    {"script", "style", "noscript", "template", "option", "select", "textarea", "svg"}
)
_ADD_TO_CART_TEXT = re.compile(
    r"add to (?:cart|bag|basket|trolley|order)|buy (?:it )?now|pre-?order now|"
    r"añadir al carrito|agregar al carrito|comprar|in den warenkorb|ajouter au panier|"
    r"agregar al carro|añadir al carro|añadir a la cesta|agregar a la bolsa|"
    r"in den einkaufswagen|zum warenkorb|in den korb|"
    r"adicionar ao carrinho|aggiungi al carrello|in winkelwagen|lägg i varukorgen",
    re.I,
)
_ADD_TO_CART_ATTR = re.compile(
    r"add-?to-?cart|addtocart|add_to_cart|btn-cart|tocart|product-form__submit|"
    r"single_add_to_cart_button|buy-?now",
    re.I,
)
_CART_FORM_ACTION = re.compile(r"cart/add|checkout/cart/add|add-?to-?cart|basket/add", re.I)
_MONEY_TEXT = re.compile(
    r"(?:[$€£¥₹₩₽₺]|R\$|\b(?:USD|EUR|GBP|CAD|AUD|CLP|BRL|MXN|ARS|COP|JPY|CHF|SEK|NOK|DKK|PLN)\b)"
    r"\s?\d[\d.,\s]*\d|\d(?:[\d.,]|[\s\u00a0\u202f](?=\d{3}))*\s?"
    r"(?:€|zł|kr|\b(?:EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|CLP)\b)"
)
_NEGATIVE_HEADING = re.compile(
    r"shopping (?:cart|bag|basket)|your (?:cart|bag|basket)|^(?:cart|basket|bag|checkout)$|"
    r"checkout|search results|results for|wish ?list|sign in|log ?in|my account|"
    r"page not found|\b404\b",
    re.I,
)
_BREADCRUMB_SEPARATORS = re.compile(r"\s+[/>|›»→·]\s+|^[/>|›»→·]+|[/>|›»→·]+$")
_GALLERY = re.compile(
    r"gallery|product-?image|product-?media|product-?photo|main-?image|zoom|"
    r"product__media|woocommerce-product-gallery|fotorama|swiper|galer[ií]a|galerie|"
    r"landing-?image|product-?cover|primary-?image|hero-?image",
    re.I,
)
_BAD_IMAGE = re.compile(r"logo|icon|sprite|placeholder|spinner|loading|blank|pixel|badge", re.I)
_DESCRIPTION = re.compile(r"description|^desc$|^product-?desc$", re.I)
_NOT_DESCRIPTION = re.compile(r"short|title|heading|toggle|label|link|tab$|meta", re.I)
_SHORT = re.compile(r"short", re.I)
_BREADCRUMB_MARKER = re.compile(
    r"breadcrumb|\bmigas\b|miga-?de-?pan|brotkr[uü]mel|fil-?d-?ariane", re.I
)
# A block that names the product's maker: "product-manufacturer", "brand-logo"...
_BRAND_BLOCK = re.compile(
    r"^(?:product[-_]{1,2})?(?:manufacturer|brand)(?:[-_]{1,2}(?:logo|name|link|img|image))?$",
    re.I,
)
_LABEL_TAGS = frozenset({"label", "strong", "b", "span", "em", "dt", "th"})
_RATING_CLASS = re.compile(r"rating|review|stars", re.I)
_RATING_VALUE = re.compile(
    r"(\d+(?:[.,]\d+)?)\s*(?:out of|of|/|von|de|sur)\s*(5|10|100)\b|"
    r"(?:rated|rating:?)\s*(\d(?:[.,]\d+)?)\b",
    re.I,
)
_RATING_COUNT = re.compile(
    r"(\d[\d,.]*)\s*(?:customer\s+)?(?:reviews?|ratings?|votes?|bewertungen|rezensionen|"
    r"reseñas|opiniones|valoraciones|avis|évaluations)\b",
    re.I,
)
# Headings of review and Q&A widgets, dialogs and modals: never the product's.
_WIDGET = re.compile(r"BVQA|BVRR|review|question|modal|dialog|popup|tooltip", re.I)
_LOGO = re.compile(r"logo|site-?title|site-?name|site-?brand|masthead", re.I)
_STOCK_CLASS = re.compile(r"stock|availability|inventory|delivery-(?:information|status)", re.I)
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

_MAX_H1_TO_PRICE = 400  # elements between the heading and the selling price
_MAX_LIST_TO_SALE = 12  # elements between a lone list price and the selling price


def _classes(el: HtmlElement) -> str:
    return (el.get("class") or "") + " " + (el.get("id") or "")


def _text(el: HtmlElement) -> str:
    return normalize_text(" ".join(_visible_strings(el))) or ""


def _visible_strings(el: HtmlElement) -> list[str]:
    out: list[str] = []
    if el.text:
        out.append(el.text)
    for child in el:
        if isinstance(child.tag, str) and child.tag not in _SKIPPED_TAGS:
            out.extend(_visible_strings(child))
        if child.tail:
            out.append(child.tail)
    return out


# Class names that hide an element on every screen (not "hidden-xs": that is one size).
_HIDDEN_CLASSES = frozenset(
    {"hidden", "hide", "d-none", "is-hidden", "js-hidden", "u-hidden", "displaynone",
     "display-none", "no-display", "nodisplay", "invisible", "ng-hide", "ng-cloak",
     "x-cloak", "hidden-all"}
)


# display:none / visibility:hidden, not "-webkit-backface-visibility:hidden" (a 3-D
# transform setting that hides nothing of a flat page)
_HIDING_STYLE = re.compile(r"(?:^|[;{])(?:display:none|visibility:hidden)(?:!important)?(?:;|$)")


def _hidden(el: HtmlElement) -> bool:
    style = (el.get("style") or "").replace(" ", "").lower()
    if el.get("hidden") is not None or (style and _HIDING_STYLE.search(style)):
        return True
    cls = el.get("class")
    return bool(cls) and not _HIDDEN_CLASSES.isdisjoint(cls.lower().split())


@dataclass
class VisiblePage:
    """The product as the visible page shows it (every field may be missing)."""

    name: str | None = None
    price: Decimal | None = None
    price_text: str | None = None
    #: True when one selling price stands out in the price box after the heading.
    price_clear: bool = False
    availability: str | None = None
    #: True when a dedicated stock element (``.stock``, ``.availability``) said it.
    availability_clear: bool = False
    codes: dict[str, str] = field(default_factory=dict)
    breadcrumbs: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    description: str | None = None
    rating: dict[str, float | int] | None = None
    add_to_cart: bool = False
    #: The page says the product cannot be bought online ("in-store only").
    not_sold_online: bool = False
    #: Number of cards in the largest grid of priced blocks (0: no grid).
    grid_cards: int = 0
    #: The page is a cart, checkout, search, account or error page.
    negative: bool = False

    @property
    def product_signals(self) -> int:
        return sum(
            (self.add_to_cart, bool(self.codes.get("sku") or self.codes.get("gtin")),
             self.availability is not None)
        )


class _Index:
    """One walk of the tree: document order, price elements and grids."""

    def __init__(self, root: HtmlElement) -> None:
        self.elements: list[HtmlElement] = []
        self.order: dict[HtmlElement, int] = {}
        self.prices: list[HtmlElement] = []
        self.h1s: list[HtmlElement] = []
        stack = [root]
        while stack:  # document order, skipping hidden and non-content subtrees
            el = stack.pop()
            tag = el.tag if isinstance(el.tag, str) else ""
            if not tag or tag in _SKIPPED_TAGS or _hidden(el):
                continue
            self.order[el] = len(self.elements)
            self.elements.append(el)
            if tag == "h1":
                self.h1s.append(el)
            elif self._is_price(el, tag):
                self.prices.append(el)
            stack.extend(reversed(el))
        # innermost price elements only
        price_set = set(self.prices)
        outer = {a for p in self.prices for a in p.iterancestors() if a in price_set}
        self.prices = [p for p in self.prices if p not in outer]
        self.excluded: set[HtmlElement] = set()
        self.in_grid: dict[HtmlElement, int] = {}
        self.cards: set[HtmlElement] = set()
        self._excluded: dict[HtmlElement, bool] = {}

    @staticmethod
    def _inside(el: HtmlElement, ancestor: HtmlElement) -> bool:
        return any(a is ancestor for a in el.iterancestors())

    @staticmethod
    def _is_price(el: HtmlElement, tag: str) -> bool:
        if tag in ("meta", "link", "input", "form", "img", "body", "html", "table", "ul"):
            return False
        cls = el.get("class") or ""
        if (
            el.get("itemprop") != "price"
            and not _PRICE_CLASS.search(cls)
            and not _SALE_CLASS.search(cls)
            and tag not in ("ins", "del", "s")
        ):
            return False
        if _NOT_PRICE_CLASS.search(cls) or _PRICE_PART.search(cls):
            return False
        parent = el.getparent()
        for _ in range(3):  # "<span class=price-excluding-tax><span class=price>"
            if parent is None:
                break
            if _NOT_PRICE_CONTEXT.search(parent.get("class") or ""):
                return False
            parent = parent.getparent()
        text = el.text_content()
        if len(text) > 80 or not any(ch.isdigit() for ch in text) or "%" in text:
            return False
        return True

    def find_grids(self, h1: HtmlElement | None) -> int:
        """Mark prices that sit in repeated priced cards; return the largest grid size."""
        containing: set[HtmlElement] = set()
        for p in self.prices:
            containing.add(p)
            containing.update(p.iterancestors())
        h1_ancestors = set(h1.iterancestors()) if h1 is not None else set()
        largest = 0
        counts: dict[tuple[HtmlElement, str], int] = {}
        for p in self.prices:
            node = p
            for _ in range(8):
                parent = node.getparent()
                if parent is None or node in h1_ancestors or node is h1:
                    break
                key = (parent, node.tag)
                if key not in counts:
                    siblings = [c for c in parent if c.tag == node.tag and c in containing]
                    blocked = any(c in h1_ancestors for c in siblings)
                    counts[key] = 0 if blocked else len(siblings)
                if counts[key] >= 3:
                    self.in_grid[p] = counts[key]
                    self.cards.add(node)
                    largest = max(largest, counts[key])
                    break
                node = parent
        self._excluded.clear()
        return largest

    def is_excluded(self, el: HtmlElement) -> bool:
        """Inside a grid card, a site header/footer, a nav/aside or a related-products block."""
        cached = self._excluded.get(el)
        if cached is not None:
            return cached
        result = el in self.cards or bool(_EXCLUDED_SECTION.search(_classes(el)))
        if not result and el.tag in _EXCLUDED_TAGS:
            # <header> inside <article>/<main> is the product's own header
            result = el.tag in ("nav", "aside") or not any(
                a.tag in ("main", "article") for a in el.iterancestors()
            )
        if not result:
            parent = el.getparent()
            result = parent is not None and self.is_excluded(parent)
        self._excluded[el] = result
        return result


def _class_tokens(el: HtmlElement) -> str:
    """Class tokens, minus state modifiers such as ``with-list-price`` or ``has-sale``."""
    return " ".join(
        t for t in (el.get("class") or "").split() if not t.startswith(("with-", "has-", "is-"))
    )


def _is_hard_list(el: HtmlElement, box: HtmlElement) -> bool:
    for a in [el, *el.iterancestors()]:
        if a.tag in _HARD_LIST_TAGS or _HARD_LIST_CLASS.search(_class_tokens(a)):
            return True
        if (a.get("data-price-type") or "").lower() == "oldprice":
            return True
        if a is not el and _list_label(a.text):
            return True  # <p>List Price: <span class=price>$1,299.00</span></p>
        previous = a.getprevious()
        if previous is not None and not len(previous) and _list_label(
            (previous.text or "") + " " + (previous.tail or "")
        ):
            return True  # <span>Was</span> <span class=price>$10</span>
        if a is box:
            break
    return False


def _list_label(text: str | None) -> bool:
    text = (text or "").strip()
    return bool(text) and len(text) <= 25 and _LIST_LABEL.fullmatch(text) is not None


def _has_class(el: HtmlElement, box: HtmlElement, pattern: re.Pattern[str]) -> bool:
    for a in [el, *el.iterancestors()]:
        if a.tag == "ins" and pattern is _SALE_CLASS:
            return True
        if pattern.search(_class_tokens(a)) or (
            pattern is _SALE_CLASS and (a.get("data-price-type") or "") == "finalPrice"
        ):
            return True
        if a is box:
            break
    return False


def _price_box(first: HtmlElement) -> HtmlElement:
    """The small block around the first price: climbs while it stays price-sized."""
    box = first
    for _ in range(3):
        parent = box.getparent()
        if parent is None or parent.tag in ("body", "html", "form", "main"):
            break
        if len(_text(parent)) > 160 or parent.find(".//h1") is not None:
            break
        box = parent
    return box


def _select_price(
    idx: _Index, h1: HtmlElement, h1_pos: int
) -> tuple[Decimal | None, str | None, bool]:
    usable = [
        p for p in idx.prices
        if p not in idx.in_grid and not idx.is_excluded(p) and not _in_card(p, h1)
    ]
    candidates = [
        p for p in usable
        if 0 < idx.order[p] - h1_pos <= _MAX_H1_TO_PRICE and not _in_titled_block(p, h1)
    ]
    if not candidates:
        # Some themes put the price above the heading, in the same small block.
        near = h1.getparent()
        before = [
            p for p in usable
            if 0 < h1_pos - idx.order[p] <= 30
            and near is not None
            and _Index._inside(p, near)
            and not _in_titled_block(p, h1)
        ]
        candidates = before[-1:]
    if candidates:
        box = _price_box(candidates[0])
        in_box = [p for p in candidates if p is box or _Index._inside(p, box)] or candidates[:1]
        boxes = {p: box for p in in_box}
        if all(_is_hard_list(p, box) for p in in_box):
            rest = _text_without(box, in_box)
            match = _MONEY_TEXT.search(rest)
            if match and parse_price(match.group(0)) is not None:
                # "<s>2 157,00 €</s> <strong>1 626,00 €</strong>": the unmarked amount
                return parse_price(match.group(0)), match.group(0), True
            # Only a struck list price in the first box ("Normal: <s>$59.990</s>"): the
            # selling price is the next one, in a block of its own right after it.
            last = idx.order[in_box[-1]]
            after = [
                p for p in candidates
                if p not in boxes and 0 < idx.order[p] - last <= _MAX_LIST_TO_SALE
            ]
            if after:
                box2 = _price_box(after[0])
                for p in after:
                    if p is box2 or _Index._inside(p, box2):
                        in_box.append(p)
                        boxes[p] = box2
        hard = {p for p in in_box if _is_hard_list(p, boxes[p])}
        sale = [p for p in in_box if p not in hard and _has_class(p, boxes[p], _SALE_CLASS)]
        regular = [
            p for p in in_box if p not in hard and not _has_class(p, boxes[p], _SOFT_LIST_CLASS)
        ]
        soft = [p for p in in_box if p not in hard]
        for group in (sale, regular, soft):
            texts = [(p, _price_value(p)) for p in group]
            # a zero amount ("Special price: $0.00") is a template, never a selling price
            parsed = [(p, t, v) for p, t in texts if (v := parse_price(t)) is not None and v > 0]
            if parsed:
                values = {v for _, _, v in parsed}
                el, text, value = parsed[0]
                if _RANGE_AFTER.match(el.tail or ""):
                    # "$12.97 - $24.99": a range, no single price (the text says a price shows)
                    return None, normalize_text(f"{text}{el.tail}"), False
                shown = _price_text(el) if text == el.get("content") else text
                return value, shown or el.get("content"), len(values) == 1
        return None, None, False
    if idx.prices:
        return None, None, False  # the site marks prices up, and none follows the heading
    # No price element at all: look for money written in the text right after the heading.
    found: list[tuple[int, str, Decimal, bool]] = []
    for pos in range(h1_pos + 1, min(h1_pos + 60, len(idx.elements))):
        el = idx.elements[pos]
        if el.tag in _HARD_LIST_TAGS or idx.is_excluded(el):
            continue
        own = normalize_text(el.text) or ""
        match = _MONEY_TEXT.search(own)
        if match and not any(a.tag in _HARD_LIST_TAGS for a in el.iterancestors()) and (
            not _in_card(el, h1)
        ):
            amount = parse_price(match.group(0))
            if amount is not None:
                if found and pos - found[0][0] > _MAX_LIST_TO_SALE:
                    break
                found.append(
                    (pos, match.group(0), amount, bool(_SALE_LABEL.match(own[: match.start()])))
                )
                if len(found) == 1 and found[0][3]:
                    break
    if found:
        # "$64.95 … Now $52.00": the amount labelled as the current one wins
        _, text, amount, _ = next((f for f in found if f[3]), found[0])
        return amount, text, True
    return None, None, False


def _text_without(box: HtmlElement, dropped: list[HtmlElement]) -> str:
    """The visible text of ``box`` without the ``dropped`` elements (their tails kept)."""
    skip = set(dropped)
    out: list[str] = []

    def walk(el: HtmlElement) -> None:
        if el not in skip:
            if el.tag == "sup" and re.fullmatch(r"\s*\d{2}\s*", el.text or "") and len(el) == 0:
                whole = "".join(out)
                out.append(("," if re.search(r"\d\.\d{3}\D*$", whole) else ".") + el.text.strip())
            elif el.text:
                out.append(el.text)
            for child in el:
                if isinstance(child.tag, str) and child.tag not in _SKIPPED_TAGS:
                    walk(child)
                if child.tail:
                    out.append(child.tail)

    walk(box)
    return normalize_text("".join(out)) or ""


def _in_card(price: HtmlElement, h1: HtmlElement) -> bool:
    """The price sits in a block of its own that links to another page by a name or an
    image (a product card, a table row of a listing, a search result), not under the
    page heading: the blocks from the price up to the one holding the heading."""
    h1_ancestors = set(h1.iterancestors())
    for depth, block in enumerate((price, *price.iterancestors())):
        if block in h1_ancestors or block.tag in ("body", "html") or depth > 4:
            return False
        if len(_text(block)) > 300:  # a card is small: a name, a price, a stock word, a button
            return False
        for link in block.iter("a"):
            href = link.get("href") or ""
            if not href or _NOT_CARD_LINK.search(href):
                continue
            label = _text(link)
            if link.find(".//img") is not None or (
                len(label.split()) >= 3 and not _ACTION_LABEL.search(label)
            ):
                return True
    return False


def _in_titled_block(price: HtmlElement, h1: HtmlElement) -> bool:
    """The price sits in a block with a heading of its own (a featured product,
    a bundle offer...), not under the page heading."""
    h1_ancestors = set(h1.iterancestors())
    block = price
    for ancestor in price.iterancestors():
        if ancestor in h1_ancestors:
            break
        block = ancestor
    else:
        return False
    for el in block.iter():  # a titled block starts with its title: a heading before the price
        if el is price:
            return False
        if el.tag in ("h2", "h3", "h4") and _text(el):
            return True
    return False


def _price_value(el: HtmlElement) -> str:
    content = el.get("content") or el.get("data-price-amount") or el.get("data-price")
    if content and el.get("itemprop") == "price":
        return content
    return _price_text(el)


def _price_text(el: HtmlElement) -> str:
    """The price as shown: a screen-reader copy of the full amount when there is
    one (``<span class=a-offscreen>$1,099.99</span>``), else a split price put
    back together (whole + fraction), else the text."""
    whole = fraction = symbol = None
    for child in el.iterdescendants():
        if not isinstance(child.tag, str):
            continue
        cls = child.get("class") or ""
        if not cls:
            continue
        if _SCREEN_READER.search(cls):
            text = _text(child)
            if any(ch.isdigit() for ch in text) and len(text) <= 40:
                return text
        elif not whole and _PRICE_WHOLE.search(cls):
            whole = re.sub(r"\D", "", child.text or "")
        elif fraction is None and _PRICE_FRACTION.search(cls):
            fraction = re.sub(r"\D", "", _text(child))
        elif symbol is None and re.search(r"symbol|currency", cls, re.I):
            symbol = _text(child)
    if whole and not fraction:
        sup = el.find(".//sup")  # "<span class=entero>150</span><sup>,99</sup>"
        digits = re.sub(r"\D", "", _text(sup)) if sup is not None else ""
        fraction = digits if len(digits) == 2 else None
    if whole:
        return f"{symbol or ''}{whole}.{fraction}" if fraction else f"{symbol or ''}{whole}"
    if el.find(".//sup") is not None:
        return _text_without(el, [])  # "115<sup>,99</sup> €": the parts glued back
    return _text(el)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def _select_h1(idx: _Index, title: str = "") -> HtmlElement | None:
    h1s = [h for h in idx.h1s if _text(h) and not idx.is_excluded(h)]
    h1s = [h for h in h1s if not _WIDGET.search(_classes(h))] or h1s
    if len({_text(h).casefold() for h in h1s}) == 1:  # the same heading twice (mobile copy)
        return h1s[0]
    if len(h1s) > 1:  # drop logo headings, then prefer the main content's
        h1s = [h for h in h1s if not _LOGO.search(_classes(h))] or h1s
    if len(h1s) > 1 and title:  # the heading the page's <title> repeats
        wanted = _words(title)
        scored = sorted(
            ((len(_words(_text(h)) & wanted) / max(len(_words(_text(h))), 1), i)
             for i, h in enumerate(h1s)),
            reverse=True,
        )
        if scored[0][0] >= 0.6 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
            return h1s[scored[0][1]]
    if len(h1s) > 1:
        h1s = [
            h for h in h1s if any(a.tag in ("main", "article") for a in h.iterancestors())
        ] or h1s
    if len(h1s) == 1:
        return h1s[0]
    preferred = [
        h for h in h1s
        if h.get("itemprop") == "name" or re.search(r"product|title|name", _classes(h), re.I)
    ]
    return preferred[0] if len(preferred) == 1 else None


def _availability(idx: _Index, h1_pos: int) -> tuple[str | None, bool]:
    # 1. a dedicated stock element
    for el in idx.elements:
        cls = _classes(el)
        if el.get("itemprop") == "availability" or _STOCK_CLASS.search(cls):
            if idx.is_excluded(el) or el.tag in ("link", "meta", "input", "body", "html"):
                continue
            text = _PICKUP.sub(" ", _text(el))  # "Store pickup: not available" is no stock state
            said = availability_states(text) if len(text) <= 120 else []
            marked = _stock_class_state(cls)
            if not said:
                if marked and not _MESSAGE_BOX.search(cls) and (
                    not text.strip() or any(c.isalpha() for c in text)
                ):
                    return marked, True
                continue
            found = said[0]
            # Clear only when the wording names one state and the element's own
            # state class (WooCommerce's "available-on-backorder", "out-of-stock")
            # does not contradict it; otherwise structured data decides.
            ambiguous = len(set(said) - {"LimitedAvailability"} or said) > 1 or bool(
                marked and not _compatible(marked, found)
            )
            if marked and not _compatible(marked, found):
                found = marked
            return found, not ambiguous
    # 2. stock wording in short texts after the heading
    if h1_pos >= 0:
        for el in idx.elements[h1_pos + 1 : h1_pos + 200]:
            if idx.is_excluded(el):
                continue
            if el.tag in ("button", "input") and (
                el.get("disabled") is not None or _ADD_TO_CART_ATTR.search(_classes(el))
            ):
                said_by_button = availability_from_text(_text(el) or el.get("value"))
                if said_by_button in ("OutOfStock", "PreOrder", "BackOrder", "Discontinued"):
                    return said_by_button, True  # the buy button itself says so
            own = normalize_text(_PICKUP.sub(" ", el.text or ""))
            if own and len(own) <= 60:
                said_nearby = availability_from_text(own)
                if said_nearby:
                    return said_nearby, False
    return None, False


# Delivery options other than this shop shipping it: their wording says nothing of stock.
_PICKUP = re.compile(
    r"(?:store )?pick-?\s?up[^.|]*|in[- ]store[^.|]*|(?:find|check) (?:it )?in (?:a )?store[^.|]*",
    re.I,
)
# Message boxes and alerts are templates filled in by scripts: their class is no state.
_MESSAGE_BOX = re.compile(r"alert|message|msg|notice|notification|modal|popup|toast", re.I)


def _stock_class_state(cls: str) -> str | None:
    lowered = cls.lower()
    if re.search(r"out-?of-?stock|outofstock|sold-?out|unavailable", lowered):
        return "OutOfStock"
    if re.search(r"back-?order", lowered):
        return "BackOrder"
    if re.search(r"pre-?order", lowered):
        return "PreOrder"
    if re.search(r"\bin-?stock\b|\binstock\b", lowered):
        return "InStock"
    return None


def _compatible(marked: str, said: str) -> bool:
    return marked == said or {marked, said} == {"InStock", "LimitedAvailability"}


def _codes(idx: _Index) -> dict[str, str]:
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
                add(_text(cells[0]), _text(cells[1]))
        elif tag == "dt":
            dd = el.getnext()
            if dd is not None and dd.tag == "dd" and not idx.is_excluded(el):
                add(_text(el), _text(dd))
        elif tag in ("li", "p", "span", "div", "strong", "b", "small", "em") and len(el) <= 3:
            cls = (el.get("class") or "").lower().split()
            if "sku" in cls and not idx.is_excluded(el):
                own = el.find(".//*[@itemprop='sku']")
                shown = _text(own if own is not None else el)
                ident = _code_value(shown)
                if ident:
                    codes.setdefault("sku", ident)
                continue
            if len(el) == 2 and el[0].tag in _LABEL_TAGS and not (el.text or "").strip():
                # <div class=product-reference><label>Reference</label><span>demo_12</span>
                label = _text(el[0])
                if 0 < len(label) <= 30 and not idx.is_excluded(el):
                    add(label, _text(el[1]))
            raw = el.text_content()
            if len(raw) > 400 or (":" not in raw and "#" not in raw):
                continue
            text = _text(el)
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


def _breadcrumbs(idx: _Index) -> list[str]:
    for el in idx.elements:
        marker = " ".join(
            [el.get("class") or "", el.get("id") or "", el.get("aria-label") or ""]
        ).lower()
        if not _BREADCRUMB_MARKER.search(marker) or el.tag in ("li", "a", "span", "meta"):
            continue
        items = el.findall(".//li")
        if items:
            chunks = [_text(li) for li in items]
        else:
            chunks = []
            for piece in _visible_strings(el):
                chunks.extend(_BREADCRUMB_SEPARATORS.split(piece.strip()))
        crumbs = []
        for raw_chunk in chunks:
            chunk = normalize_text(_BREADCRUMB_SEPARATORS.sub("", raw_chunk or ""))
            if chunk and not re.fullmatch(r"[/>|›»→·]+", chunk) and not re.match(
                r"(?i)you are here", chunk
            ):
                crumbs.append(chunk)
        if crumbs:
            return crumbs
    return []


def _image_src(img: HtmlElement) -> str | None:
    for attr in ("data-zoom-image", "data-large_image", "data-src", "src"):
        value = img.get(attr)
        if value and not value.startswith("data:"):
            return value
    return None


def _images(idx: _Index, h1: HtmlElement | None) -> list[str]:
    found: list[str] = []

    def take(imgs: list[HtmlElement]) -> None:
        for img in imgs:
            src = _image_src(img)
            if not src or _BAD_IMAGE.search(src + " " + _classes(img) + (img.get("alt") or "")):
                continue
            if re.search(r"\.(?:svg|gif)(?:\?|$)", src, re.I) or idx.is_excluded(img):
                continue
            if src not in found:
                found.append(src)

    for el in idx.elements:
        if _GALLERY.search(_classes(el)) and not idx.is_excluded(el):
            take(el.findall(".//img") if el.tag != "img" else [el])
            if found:
                return found
    if h1 is not None:
        node = h1
        for _ in range(4):
            node = node.getparent()
            if node is None or node.tag in ("body", "html"):
                break
            imgs = node.findall(".//img")
            if imgs:
                take(imgs)
                if found:
                    return found
    return found


def _description(idx: _Index) -> str | None:
    """The description block; a short-description block (a summary next to the
    price) only when the page has no full one."""
    short: str | None = None
    for el in idx.elements:
        tokens = _classes(el).split()
        full = el.get("itemprop") == "description" or any(
            _DESCRIPTION.search(token) and not _NOT_DESCRIPTION.search(token) for token in tokens
        )
        summary = not full and short is None and any(
            _DESCRIPTION.search(token)
            and _SHORT.search(token)
            and not _NOT_DESCRIPTION.search(_SHORT.sub("", token))
            for token in tokens
        )
        if not (full or summary):
            continue
        if idx.is_excluded(el) or el.tag in ("meta", "body", "html"):
            continue
        text = normalize_text(" ".join(_block_texts(el)))
        if text:
            text = re.sub(r"^(?:product )?description:?(?:\s+|$)", "", text, flags=re.I)
            if len(text) >= 10:
                if full:
                    return text
                short = text
    return short


def _block_texts(el: HtmlElement) -> list[str]:
    """Text of a block, dropping a leading "Description" heading."""
    out = []
    first = True
    if el.text and el.text.strip():
        first = False
        out.append(el.text)
    for child in el:
        if not isinstance(child.tag, str) or child.tag in _SKIPPED_TAGS:
            if child.tail:
                out.append(child.tail)
            continue
        if first and child.tag in ("h2", "h3", "h4") and len(_text(child)) < 40:
            first = False
        else:
            first = False
            out.append(" ".join(_visible_strings(child)))
        if child.tail:
            out.append(child.tail)
    return out


def _rating(idx: _Index) -> dict[str, float | int] | None:
    """"4.5 out of 5 (12 reviews)" in rating/review blocks; both parts are required."""
    value: float | None = None
    count: int | None = None
    for el in idx.elements:
        if not _RATING_CLASS.search(_classes(el)) and not _rating_row(el):
            continue
        if idx.is_excluded(el):
            continue
        text = " ".join(
            t for t in (_text(el), el.get("title"), el.get("aria-label")) if t
        )
        if len(text) > 200:
            continue
        if value is None:
            match = _RATING_VALUE.search(text)
            if match:
                value = float((match.group(1) or match.group(3)).replace(",", "."))
        if count is None:
            match = _RATING_COUNT.search(text)
            if match:
                count = int(re.sub(r"\D", "", match.group(1)))
        if value is not None and count is not None:
            return {"value": value, "count": count}
    return None


def _rating_row(el: HtmlElement) -> bool:
    """The value cell of a "Customer Reviews | 4.4 out of 5 stars 2,311 ratings" row."""
    if el.tag not in ("td", "dd"):
        return False
    label = el.getprevious()
    return (
        label is not None
        and label.tag in ("th", "td", "dt")
        and len(_text(label)) <= 40
        and bool(_RATING_CLASS.search(_text(label)))
    )


def _brand_block(idx: _Index, h1_pos: int) -> str | None:
    """The maker named by a brand/manufacturer block after the heading: its short
    text, else the ``alt`` of its logo."""
    if h1_pos < 0:
        return None
    for el in idx.elements[h1_pos + 1 : h1_pos + 300]:
        tokens = (el.get("class") or "").split() + (el.get("id") or "").split()
        if not any(_BRAND_BLOCK.match(t) for t in tokens) or idx.is_excluded(el):
            continue
        imgs = [el] if el.tag == "img" else el.findall(".//img")
        text = _text(el) if el.tag != "img" else ""
        if text:
            if len(text) <= 40 and ":" not in text:
                return text
            continue
        for img in imgs:
            alt = normalize_text(img.get("alt"))
            if alt and len(alt) <= 40:
                return alt
    return None


# The shop says this product is sold in its stores only: no online stock state applies.
_NOT_SOLD_ONLINE = re.compile(
    r"\b(?:can ?not|can't|may not) be (?:purchased|bought|ordered) online|"
    r"\bcan only be (?:purchased|bought) (?:at|in) (?:one of )?our (?:retail )?"
    r"(?:stores?|shops?|locations?)",
    re.I,
)


def _not_sold_online(idx: _Index, h1_pos: int) -> bool:
    """Wording after the heading, outside other products' blocks, saying the product
    cannot be bought online."""
    if h1_pos < 0:
        return False
    for el in idx.elements[h1_pos + 1 :]:
        own = " ".join(
            [el.text or ""] + [c.tail for c in el if c.tail]
        )
        if _NOT_SOLD_ONLINE.search(own) and not idx.is_excluded(el):
            return True
    return False


def _add_to_cart(idx: _Index) -> bool:
    for el in idx.elements:
        tag = el.tag
        if tag == "form":
            if _CART_FORM_ACTION.search(el.get("action") or "") and not idx.is_excluded(el):
                return True
        elif tag in ("button", "input", "a"):
            if tag == "input" and (el.get("type") or "").lower() not in ("submit", "button"):
                continue
            label = (_text(el) if tag != "input" else el.get("value") or "")[:60]
            attrs = " ".join(
                [el.get("class") or "", el.get("id") or "", el.get("name") or ""]
            )
            if (_ADD_TO_CART_TEXT.search(label) or _ADD_TO_CART_ATTR.search(attrs)) and (
                not idx.is_excluded(el)
            ):
                return True
    return False


def read_visible_page(root: HtmlElement, url_path: str = "/") -> VisiblePage:
    """Read the visible product fields of a parsed page."""
    page = VisiblePage()
    body = root.find(".//body")
    idx = _Index(body if body is not None else root)
    title_el = root.find(".//title")
    h1 = _select_h1(idx, title_el.text_content() if title_el is not None else "")
    page.grid_cards = idx.find_grids(h1)
    if h1 is not None:
        page.name = _text(h1)
        h1_pos = idx.order[h1]
        page.price, page.price_text, page.price_clear = _select_price(idx, h1, h1_pos)
    else:
        h1_pos = -1
    page.availability, page.availability_clear = _availability(idx, h1_pos)
    page.codes = _codes(idx)
    if "brand" not in page.codes:
        brand = _brand_block(idx, h1_pos)
        if brand:
            page.codes["brand"] = brand
    page.breadcrumbs = _breadcrumbs(idx)
    page.images = _images(idx, h1)
    page.description = _description(idx)
    page.rating = _rating(idx)
    page.add_to_cart = _add_to_cart(idx)
    page.not_sold_online = _not_sold_online(idx, h1_pos)
    page.negative = bool(
        (page.name and _NEGATIVE_HEADING.search(page.name))
        or re.search(
            r"/(?:cart|checkout|basket|search|catalogsearch|wishlist|account|login|my-account)"
            r"(?:/|$|\.)",
            url_path,
            re.I,
        )
    )
    return page
