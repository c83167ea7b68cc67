"""The buy control: a button, link, form or scripted block that puts the product in
the cart, whether it is enabled, and whether the page has a cart anywhere."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from itertools import product

from lxml.etree import _Element

from ..ascii_case import CaseFolded
from .dom import CachedSearch, text_of, visible_text
from .index import PageIndex, register_class_test

# The letters the phrases of _ADD_TO_CART_TEXT open with (tests/unit/
# test_extraction_phrase_starts.py checks it): its search tests them once at a position
# of a label that opens none, instead of each of its ~90 phrases (a search 1.8x faster;
# a shop's link labels are each searched once on a page seen first).
_CART_PHRASE_STARTS = "abcdghiklmopstuvzįπвдкуהקأإاअकซลใカ今加放直立買馬구바장"
_ADD_TO_CART_TEXT = re.compile(
    rf"(?=[{_CART_PHRASE_STARTS}])(?:"
    r"add (?:(?:this|it|item|items|product|selected|all|one|\d+) )?to "
    r"(?:my |your |the |shopping )?(?:cart|bag|basket|trolley|order)|buy (?:it )?now|"
    r"pre-?order now|"
    r"añadir al carrito|agregar al carrito|comprar|in den warenkorb|ajouter au panier|"
    r"agregar al carro|añadir al carro|añadir a la cesta|(?:agregar|añadir) a (?:la|mi) bolsa|"
    r"in den einkaufswagen|zum warenkorb|in den korb|"
    r"adicionar ao carrinho|aggiungi al carrello|aggiungi alla borsa|"
    r"(?:in|toevoegen aan) (?:de |mijn )?(?:winkelwagen|winkelmand)|"
    r"lägg i (?:varukorg|kundvagn)|"
    # the buy control in more languages (class: shops of every language; one phrase each)
    r"adicionar à sacola|adicionar ao cesto|ajouter au sac|do koszyka|kup teraz|"
    r"в корзину|добавить в корзину|купить сейчас|[ув] кошик|sepete ekle|hemen al|satın al|"
    r"u košaricu|v košarico|do košíka|do košíku|grozā|grozam|į krepšelį|ostukorvi|"
    r"kosárba|adaugă în coș|adauga in cos|προσθήκη στο καλάθι|læg i kurv|"
    r"legg i handlekurv|lisää (?:ostos)?koriin|"
    r"afegir a la cistella|afegeix a la cistella|добави в количката|u korpu|"
    r"thêm vào giỏ|mua ngay|chọn mua|"
    r"(?:tambah|masukkan) ke (?:keranjang|troli)|beli sekarang|"
    r"ใส่ตะกร้า|ลงตะกร้า|ซื้อเลย|ซื้อทันที|कार्ट में (?:जोड़ें|डालें)|अभी खरीदें|"
    r"افزودن به سبد|"
    r"הוסף לסל|הוספה לסל|הוסף לעגלה|הוספה לעגלה|קנה עכשיו|"
    r"أضف إلى السلة|أضف إلى الحقيبة|أضف الى السلة|أضف للسلة|إضافة إلى السلة|اشتر الآن|"
    r"(?:أضف|إضافة) (?:إلى|الى|ل)\s?العربة|"
    r"カートに入れる|カートに追加|今すぐ購入|買い物かごに入れる|加入購物車|加入购物车|"
    r"放入購物車|放入购物车|加入購物袋|加入购物袋|立即購買|立即购买|直接購買|馬上購買|"
    r"장바구니(?:에)? 담기|바로 ?구매|구매하기)",
    re.I,
)
# A control whose whole label is a verb of buying ("Buy", "Kaufen", "Купить", "Comprar"):
# a verb alone in a menu or a text is no buy control, so the label must be only that.
_BUY_VERB = re.compile(
    r"^\s*(?:buy|purchase|order now|jetzt kaufen|kaufen|acheter|comprar|compra(?: ya| ahora)?|"
    r"acquista(?: ora)?|koop nu|kopen|kup|kupi|kúpiť|koupit|köp|kjøp|køb|osta|vásárlás|"
    r"cumpără|купить|купити|αγορά|購入|購買|구매|장바구니|köp nu|купи|beli|osta nyt|"
    r"bestellen|comprar agora|comprar ahora|خرید|mua)\s*[!›»]?\s*$",
    re.I,
)
ADD_TO_CART_ATTR = CachedSearch(
    re.compile(
        r"add-?to-?(?:cart|basket|bag|trolley)|addto(?:cart|basket|bag)|add_to_(?:cart|basket|bag)|"
        r"btn-cart|tocart|product-form__submit|single_add_to_cart_button|buy-?now|btn-?buy|"
        r"buy-?button|buy-?btn",
        re.I,
    )
)
# A block scripted as the buy button: "aa_buy", "buy-button", "btn-buy", "add-to-cart".
_BUY_CLASS = CachedSearch(
    re.compile(
        r"(?:^|[\s_-])buy(?:$|[\s_-])|add-?to-?(?:cart|basket|bag)|(?:^|\s)btn(?:$|[\s_-])", re.I
    )
)
register_class_test(_BUY_CLASS.search, need=re.compile(r"buy|add-?to-?(?:cart|basket|bag)|btn"))
# A quantity to order beside the price: offered only where the product can be bought.
_QUANTITY = re.compile(r"^(?:qty|quantity|cantidad|quantité|menge|anzahl|quantita|ilosc)$", re.I)
_CART_FORM_ACTION = re.compile(r"cart/add|checkout/cart/add|add-?to-?cart|basket/add", re.I)


def has_add_to_cart(idx: PageIndex) -> bool:
    """The page shows a buy control (enabled or not: see :func:`read_buy_control`)."""
    return read_buy_control(idx)[0]


def read_buy_control(idx: PageIndex) -> tuple[bool, bool]:
    """(the page shows a buy control, one of them is enabled). A disabled control
    (``disabled``, ``aria-disabled="true"``, a ``disabled`` class) still says the page
    sells products, but not that this one can be bought now."""
    found, pos = find_buy_control(idx)
    return found, pos >= 0


def find_buy_control(idx: PageIndex) -> tuple[bool, int]:
    """(the page shows a buy control, the position of the first enabled one: -1 for
    none), outside other products' cards and the site's header, footer and navs."""
    found = False
    # the candidates: the control tags, and blocks with role=button or a buy class (a
    # buy class in the class attribute is also one in the class-and-id string)
    blocks = [p for p in idx.with_class(_BUY_CLASS.search) if idx.elements[p].tag in _BLOCKS]
    controls = [idx.by_tag.get(tag, []) for tag in _CONTROL_TAGS]
    elements, section, in_card = idx.elements, idx.section, idx.in_card
    for pos in idx.positions(blocks, idx.role_buttons, *controls):
        # the exclusion first (idx.is_excluded of a walked element): it spares reading
        # the label of every menu link (both are pure tests: the order changes no answer)
        if section[pos] or in_card(pos):
            continue
        el = elements[pos]
        tag = el.tag
        if tag in ("div", "span"):  # most elements: a cheap test of class and role first
            if el.get("role") != "button" and not _BUY_CLASS.search(el.get("class") or ""):
                continue
        elif tag not in _CONTROL_TAGS:
            continue
        if not is_buy_control(el, tag):
            continue
        found = True
        if not _is_disabled(el):
            return True, pos
    return found, -1


# A link or button that calls the shop's buy script ("javascript:buy_process(...)",
# onclick="addToCart(123)"; class: buy controls built as script links).
_BUY_SCRIPT = re.compile(
    r"\b(?:buy|add_?to_?(?:cart|basket|bag)|addto(?:cart|basket|bag)|cart_?add|basket_?add)\w*\s*\(",
    re.I,
)
_CONTROL_TAGS = frozenset({"form", "button", "input", "a", "img"})
_BLOCKS = frozenset({"div", "span"})
_DISABLED_CLASS = re.compile(r"(?:^|[\s_-])(?:disabled|inactive|unavailable)(?:$|[\s_-])", re.I)


def _is_disabled(el: _Element) -> bool:
    if el.tag == "form":
        # a cart form is as enabled as its submit controls: all disabled, it is too
        # (class: sold-out pages that keep the form and grey out its button)
        submits = [
            c for c in el.iter("button", "input")
            if c.tag == "button" or (c.get("type") or "").lower() in ("submit", "image")
        ]
        return bool(submits) and all(_is_disabled(c) for c in submits)
    return (
        el.get("disabled") is not None
        or (el.get("aria-disabled") or "").lower() == "true"
        or bool(_DISABLED_CLASS.search(el.get("class") or ""))
    )


def is_buy_control(el: _Element, tag: str | None = None) -> bool:
    """``el`` is a buy control (``tag``: its tag, when read already)."""
    tag = el.tag if tag is None else tag
    if tag == "form":
        return bool(_CART_FORM_ACTION.search(el.get("action") or ""))
    if tag in ("div", "span"):
        if not (el.get("role") == "button" or _BUY_CLASS.search(el.get("class") or "")):
            return False
        # a control built from a block (class: themes scripting a div as the button):
        # both its class (or role) and its whole label must say "buy"
        label = visible_text(el)[:60]
        return len(label) <= 40 and _says_buy(label)
    if tag not in ("button", "input", "a", "img"):
        return False
    get = el.get
    if tag == "input":
        kind = (get("type") or "").lower()
        if kind == "number":
            # <input type=number name=quantity>: an order form
            return bool(_QUANTITY.match(get("name") or ""))
        if kind not in ("submit", "button", "image"):
            return False
    if tag in ("input", "img"):
        label = get("value") or get("alt") or accessible_label(el) or get("title") or ""
    else:
        # an icon-only button is labelled for screen readers ("aria-label", "title")
        label = visible_text(el) or accessible_label(el) or get("title") or ""
    # the label first, then the attributes, then the script (each read only when the
    # one before says nothing)
    if _says_buy(label[:60]):
        return True
    attrs = f"{get('class') or ''} {get('id') or ''} {get('name') or ''} {get('data-action') or ''}"
    if ADD_TO_CART_ATTR.search(attrs):
        return True
    onclick, href = get("onclick"), get("href") or ""
    if onclick is None and not href.startswith("javascript:"):
        return False  # the script searched would be " ": no call in it
    script = (onclick or "") + " " + (href if href.startswith("javascript:") else "")
    return bool(_BUY_SCRIPT.search(script))


def accessible_label(el: _Element) -> str:
    """A control's label for assistive technology: its ``aria-label``, else the text of
    the elements its ``aria-labelledby`` names (class: buy controls that are a submit
    input without a value or an icon button, their words in another element:
    ``<input type=submit aria-labelledby=b-label><span id=b-label>Add to Cart</span>``)."""
    label = el.get("aria-label")
    if label and label.strip():
        return label.strip()
    ids = (el.get("aria-labelledby") or "").split()
    if not ids:
        return ""
    texts = []
    parent = el.getparent()
    scopes = [p for p in (parent, None if parent is None else parent.getparent()) if p is not None]
    for ident in ids[:3]:
        # the labelling element is mostly the control's neighbour: looked for in the
        # control's wrapper first, then in the whole page
        found = next((c for s in scopes for c in s.iter() if c.get("id") == ident), None)
        if found is None:
            found = next(iter(el.getroottree().getroot().xpath("//*[@id=$i]", i=ident)), None)
        if found is not None:
            texts.append(text_of(found))
    return " ".join(" ".join(texts).split())


# ASCII labels searched lowered (..ascii_case: most labels, searched 3-4x as fast);
# _BUY_VERB opens with "^": a search of it is its match
_SAYS_ADD_TO_CART = CaseFolded(_ADD_TO_CART_TEXT)
_IS_BUY_VERB = CaseFolded(_BUY_VERB)


@lru_cache(maxsize=4096)
def _says_buy(label: str) -> bool:
    """A control's label (at most 60 characters) says "add to cart" or is a verb of
    buying alone; remembered per label (a shop's link and button labels repeat across
    its pages; a pure function of the string)."""
    return _SAYS_ADD_TO_CART.found(label) or _IS_BUY_VERB.found(label)


# A shopping cart anywhere in the page's HTML, shown or hidden, in markup or scripts
# (literal words: a substring search of the lowered HTML is fast on large pages).
_CART_WORDS = (
    "addtocart",
    "add-to-cart",
    "add_to_cart",
    "add to cart",
    "addtobasket",
    "add-to-basket",
    "add_to_basket",
    "add to basket",
    "add to bag",
    "add-to-bag",
    "cart/add",
    "basket/add",
    "warenkorb",
    "panier",
    "carrito",
    "carrinho",
    "carrello",
    "winkelwagen",
    "varukorg",
    "koszyk",
    "košík",
    "košar",
    "корзин",
    "sepet",
    "カート",
    "購物車",
    "购物车",
    "장바구니",
    "السلة",
    "הוסף לסל",
    # more languages' carts (not words that also name a vehicle, a stroller or a
    # basket sold as a product: "عربة", "עגלה", "ตะกร้า" alone)
    "winkelmand",
    "kundvagn",
    "cistella",
    "количка",
    "giỏ hàng",
    "keranjang belanja",
    "ใส่ตะกร้า",
    "سبد خرید",
    "购物袋",
    "購物袋",
)


def _word_tree(words: Iterable[str]) -> str:
    """A pattern that finds any of ``words`` (literal, case kept), written as the tree
    of their common beginnings ("add(?:-to-(?:bag|basket|cart)|..."): a search tries
    each next character once at a position, not each word (a word found is enough, so
    a word that begins another ends the branch)."""
    tree: dict[str, dict] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def written(node: dict[str, dict]) -> str:
        if "" in node:
            return ""
        branches = [re.escape(char) + written(below) for char, below in sorted(node.items())]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return written(tree)


#: The one character that ``str.lower()`` turns into the ASCII letter of a cart word
#: but is neither that letter nor its upper case: the Kelvin sign (its lower case is
#: "k"). The unit test checks every code point for others.
_OTHER_UPPER = "\u212a"


def _lowered_forms(char: str) -> list[str]:
    """The characters whose ``str.lower()`` is ``char`` (a cart word's character), as
    they stand in the ASCII-lowered UTF-8 of a page: an ASCII letter's upper case is
    lowered there already."""
    forms = {char, char.upper(), char.title(), _OTHER_UPPER}
    return sorted(f for f in forms if len(f) == 1 and f.lower() == char and not "A" <= f <= "Z")


def _utf8_forms(word: str) -> list[bytes]:
    """The UTF-8 of every text whose ``str.lower()`` is ``word``, ASCII-lowered."""
    return ["".join(chars).encode() for chars in product(*map(_lowered_forms, word))]


_CART_WORD = re.compile(_word_tree(_CART_WORDS))
# the same words in the ASCII-lowered UTF-8 of a page, in every case that str.lower()
# makes them of (each byte written as the latin-1 character of its value: a pattern
# of bytes, the same tree of their beginnings); a match starts at a character, UTF-8
# being self-synchronizing
_CART_BYTES = re.compile(
    _word_tree(
        form.decode("latin-1") for word in _CART_WORDS for form in _utf8_forms(word)
    ).encode("latin-1")
)
# the words most shops' pages hold (looked for first: found at once on those pages)
_COMMON_CART_WORDS = ("addtocart", "add-to-cart")
_COMMON_CART_BYTES = tuple(word.encode() for word in _COMMON_CART_WORDS)


def mentions_a_cart(html: str, utf8: bytes | None = None) -> bool:
    """The page has a shopping cart somewhere (shown or hidden): a shop, whose stock
    state its buy control and wording tell; pages without one (classified ads, auction
    lots, tickets) offer what they show at a price with no stock concept. The words
    most shops write are looked for first (a substring search each), then all of them
    in one pass of the page (twice as fast as a search of each on a page with none).

    ``utf8``, when given, is ``html`` encoded in UTF-8 (:func:`..tree.utf8_body`): its
    ASCII-lowered copy is searched for the words' forms (a tenth of the cost of
    ``html.lower()``; the same answer: ``str.lower()`` lowers character by character,
    but for "\u0130", whose "i" and combining dot end no cart word)."""
    if utf8 is not None:
        low = utf8.lower()
        return (
            any(word in low for word in _COMMON_CART_BYTES)
            or _CART_BYTES.search(low) is not None
        )
    lowered = html.lower()
    return (
        any(word in lowered for word in _COMMON_CART_WORDS)
        or _CART_WORD.search(lowered) is not None
    )
