"""Stock as the page shows it: a stock element or stock wording after the
heading, a buy button, and "cannot be bought online" notices."""

from __future__ import annotations

import re

from lxml.etree import _Element

from ..normalize.availability import STATE_PATTERNS as _STATE_WORDS
from ..normalize.availability import availability_from_text, availability_states
from ..normalize.text import normalize_text
from .dom import CachedSearch, classes, visible_text
from .index import PageIndex, register_class_test

_STOCK_CLASS = CachedSearch(
    re.compile(r"stock|availability|inventory|delivery-(?:information|status)", re.I)
)
_ADD_TO_CART_TEXT = re.compile(
    r"add to (?:cart|bag|basket|trolley|order)|buy (?:it )?now|pre-?order now|"
    r"añadir al carrito|agregar al carrito|comprar|in den warenkorb|ajouter au panier|"
    r"agregar al carro|añadir al carro|añadir a la cesta|agregar a la bolsa|"
    r"in den einkaufswagen|zum warenkorb|in den korb|"
    r"adicionar ao carrinho|aggiungi al carrello|in winkelwagen|lägg i varukorgen|"
    # the buy control in more languages (class: shops of every language; one phrase each)
    r"adicionar à sacola|adicionar ao cesto|ajouter au sac|do koszyka|kup teraz|"
    r"в корзину|добавить в корзину|купить сейчас|у кошик|sepete ekle|hemen al|satın al|"
    r"u košaricu|v košarico|do košíka|do košíku|grozā|į krepšelį|ostukorvi|"
    r"kosárba|adaugă în coș|adauga in cos|προσθήκη στο καλάθι|læg i kurv|"
    r"legg i handlekurv|lisää ostoskoriin|"
    r"הוסף לסל|הוספה לסל|הוסף לעגלה|קנה עכשיו|"
    r"أضف إلى السلة|أضف إلى الحقيبة|أضف الى السلة|أضف للسلة|إضافة إلى السلة|اشتر الآن|"
    r"カートに入れる|カートに追加|今すぐ購入|買い物かごに入れる|加入購物車|加入购物车|"
    r"放入購物車|立即購買|立即购买|直接購買|馬上購買|장바구니 담기|바로 ?구매|구매하기",
    re.I,
)
# The same search of a control's label (at most 60 characters), remembered per label:
# the labels of a shop's links and buttons repeat across its pages.
_BUY_LABEL = CachedSearch(_ADD_TO_CART_TEXT)
# A control whose whole label is a verb of buying ("Buy", "Kaufen", "Купить", "Comprar"):
# a verb alone in a menu or a text is no buy control, so the label must be only that.
_BUY_VERB = re.compile(
    r"^\s*(?:buy|purchase|order now|jetzt kaufen|kaufen|acheter|comprar|compra(?: ya| ahora)?|"
    r"acquista(?: ora)?|koop nu|kopen|kup|kupi|kúpiť|koupit|köp|kjøp|køb|osta|vásárlás|"
    r"cumpără|купить|купити|αγορά|購入|購買|구매)\s*[!›»]?\s*$",
    re.I,
)
_ADD_TO_CART_ATTR = CachedSearch(
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
register_class_test(_STOCK_CLASS.search)
register_class_test(_BUY_CLASS.search)
# A quantity to order beside the price: offered only where the product can be bought.
_QUANTITY = re.compile(r"^(?:qty|quantity|cantidad|quantité|menge|anzahl|quantita|ilosc)$", re.I)
_CART_FORM_ACTION = re.compile(r"cart/add|checkout/cart/add|add-?to-?cart|basket/add", re.I)


def read_availability(idx: PageIndex, h1_pos: int) -> tuple[str | None, bool]:
    # 1. a dedicated stock element
    marked_stock = idx.with_class(_STOCK_CLASS.search)
    for pos in idx.positions(idx.by_itemprop.get("availability", []), marked_stock):
        el, cls = idx.elements[pos], idx.classes[pos]
        if el.get("itemprop") == "availability" or _STOCK_CLASS.search(cls):
            if idx.is_excluded(el) or el.tag in ("link", "meta", "input", "body", "html"):
                continue
            if _in_table_row(el):
                continue  # one variant's or seller's row of several: its own stock
            # "Store pickup: not available" is no stock state
            text = _CONDITIONAL.sub(" ", _PICKUP.sub(" ", visible_text(el)))
            said = availability_states(text) if len(text) <= 120 else []
            marked = _stock_class_state(cls)
            if not said:
                if (
                    marked
                    and not _MESSAGE_BOX.search(cls)
                    and (not text.strip() or any(c.isalpha() for c in text))
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
            if el.tag in ("button", "input"):
                label = visible_text(el) or el.get("value") or ""
                said_by_button = availability_from_text(label)
                if said_by_button in ("OutOfStock", "PreOrder", "BackOrder", "Discontinued") and (
                    _ADD_TO_CART_ATTR.search(classes(el))
                    or _only_stock_words(label)
                    or (el.get("disabled") is not None and not _is_option(el))
                ):
                    # the buy button itself says so: classed as the buy button, its whole
                    # label is the state ("Sold out", "Notify me", "Agotado"), or disabled
                    # and no option of a variant picker (a size button's "M - sold out"
                    # says the stock of one size)
                    return said_by_button, True
            if not el.text:
                continue  # no text of its own: no stock wording (the button was read above)
            if _in_option(el):
                continue  # one option's stock ("M - sold out"), not the product's
            own = normalize_text(_CONDITIONAL.sub(" ", _PICKUP.sub(" ", el.text)))
            if own and len(own) <= 60 and not _in_table_row(el):
                said_nearby = availability_from_text(own)
                if said_nearby:
                    return said_nearby, False
    return None, False


_OPTION_TAGS = frozenset({"button", "input", "label", "a"})


def _in_option(el: _Element) -> bool:
    """``el`` is, or is inside, an option of a variant picker (:func:`_is_option`):
    a button, input, label or link at most two levels up."""
    for depth, node in enumerate((el, *el.iterancestors())):
        if depth > 2:
            return False
        if node.tag in _OPTION_TAGS:
            return _is_option(node)
    return False


def _is_option(control: _Element) -> bool:
    """The control is one option of a variant picker: one of several sibling controls
    of its tag, bare or each in a wrapper of its own (``<div class=sizes><button>S
    </button><button disabled>M - sold out</button>``; class: size and colour pickers
    that say each option's stock on its button)."""
    tag = control.tag
    parent = control.getparent()
    if parent is None:
        return False
    others = [c for c in parent if c.tag == tag and c is not control]
    if not others:
        grand = parent.getparent()
        if grand is None or len(parent) > 2:
            return False
        wrappers = [c for c in grand if c.tag == parent.tag and c is not parent]
        others = [found for w in wrappers if (found := w.find(tag)) is not None]
    # the other options name variants in short labels ("S", "Red", "42 EU"): none is a
    # buy control or an action (a disabled "Temporarily out of stock" button beside
    # "Add to wish list" is the buy button's state)
    return bool(others) and all(_names_an_option(o) for o in others)


# The longest label of an option of a variant picker ("Extra Large", "42 EU", "Navy Blue").
_OPTION_LABEL = 20
# A control's label that asks to do something rather than names a variant.
_ACTION = re.compile(
    r"^\W*(?:add|save|wish|notify|share|compare|remove|email|ask|find|buy|view|see)\b", re.I
)


def _names_an_option(control: _Element) -> bool:
    label = visible_text(control) or control.get("value") or ""
    return (
        len(label) <= _OPTION_LABEL and not _ACTION.match(label) and not _is_buy_control(control)
    )


def _only_stock_words(label: str) -> bool:
    """The label is a stock phrase and nothing else ("Sold out", "Notify me")."""
    rest = label
    for state in availability_states(label):
        rest = _STATE_WORDS[state].sub(" ", rest)
    return bool(label.strip()) and not re.sub(r"[\W_]+", "", rest)


def _in_table_row(el: _Element) -> bool:
    """Inside one row of a table of several (variants, sellers, offers: each row says its
    own stock; class: comparison and marketplace pages listing offers in a table)."""
    for depth, a in enumerate((el, *el.iterancestors())):
        if depth > 5:
            return False
        if a.tag == "tr":
            parent = a.getparent()
            return parent is not None and sum(1 for c in parent if c.tag == "tr") >= 2
    return False


# Delivery options other than this shop shipping it: their wording says nothing of stock.
_PICKUP = re.compile(
    r"(?:store )?pick-?\s?up[^.|]*|in[- ]store[^.|]*|(?:find|check) (?:it )?in (?:a )?store[^.|]*",
    re.I,
)
# A sentence that opens with a condition ("If sold out, select a size to join the
# waitlist"): its condition names no state of the product ("we'll ship when it's
# available" is no such opening and stays a backorder).
_CONDITIONAL = re.compile(
    r"(?:^|(?<=[.!?]))\s*(?:if|in case|should (?:it|this|the|an?)\b[\w ]{0,20}?\bbe)\b"
    r"[^.,;:|!?]*",
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


# The shop says this product is sold in its stores only: no online stock state applies.
_NOT_SOLD_ONLINE = re.compile(
    r"\b(?:can ?not|can't|may not) be (?:purchased|bought|ordered) online|"
    r"\bcan only be (?:purchased|bought) (?:at|in) (?:one of )?our (?:retail )?"
    r"(?:stores?|shops?|locations?)",
    re.I,
)


# No text shorter than this matches _NOT_SOLD_ONLINE ("can't be bought online": 22
# characters; the pattern matches character by character, case aside): not searched.
_SHORTEST_NOT_ONLINE = 22


def not_sold_online(idx: PageIndex, h1_pos: int) -> bool:
    """Wording after the heading, outside other products' blocks, saying the product
    cannot be bought online."""
    if h1_pos < 0:
        return False
    search, section, elements = _NOT_SOLD_ONLINE.search, idx.section, idx.elements
    for pos in range(h1_pos + 1, len(elements)):
        if section[pos]:
            continue  # in an excluded block (see below): never read
        el = elements[pos]
        if len(el):
            own = " ".join([el.text or ""] + [c.tail for c in el if c.tail])
        else:  # no child: its own text alone (the same string, without the list)
            own = el.text
            if not own:
                continue
        if len(own) >= _SHORTEST_NOT_ONLINE and search(own) and not idx.is_excluded(el):
            return True
    return False


def has_add_to_cart(idx: PageIndex) -> bool:
    """The page shows a buy control (enabled or not: see :func:`read_buy_control`)."""
    return read_buy_control(idx)[0]


def read_buy_control(idx: PageIndex) -> tuple[bool, bool]:
    """(the page shows a buy control, one of them is enabled). A disabled control
    (``disabled``, ``aria-disabled="true"``, a ``disabled`` class) still says the page
    sells products, but not that this one can be bought now."""
    found = False
    # the candidates: the control tags, and blocks with role=button or a buy class (a
    # buy class in the class attribute is also one in the class-and-id string)
    blocks = [p for p in idx.with_class(_BUY_CLASS.search) if idx.elements[p].tag in _BLOCKS]
    controls = [idx.by_tag.get(tag, []) for tag in _CONTROL_TAGS]
    for pos in idx.positions(blocks, idx.role_buttons, *controls):
        el = idx.elements[pos]
        tag = el.tag
        if tag in ("div", "span"):  # most elements: a cheap test of class and role first
            if el.get("role") != "button" and not _BUY_CLASS.search(el.get("class") or ""):
                continue
        elif tag not in _CONTROL_TAGS:
            continue
        # the exclusion first: remembered per element, it spares reading the label of
        # every menu link (both are pure tests, so the order changes no answer)
        if idx.is_excluded(el) or not _is_buy_control(el):
            continue
        found = True
        if not _is_disabled(el):
            return True, True
    return found, False


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
    return (
        el.get("disabled") is not None
        or (el.get("aria-disabled") or "").lower() == "true"
        or bool(_DISABLED_CLASS.search(el.get("class") or ""))
    )


def _is_buy_control(el: _Element) -> bool:
    tag = el.tag
    if tag == "form":
        return bool(_CART_FORM_ACTION.search(el.get("action") or ""))
    if tag in ("div", "span"):
        if not (el.get("role") == "button" or _BUY_CLASS.search(el.get("class") or "")):
            return False
        # a control built from a block (class: themes scripting a div as the button):
        # both its class (or role) and its whole label must say "buy"
        label = visible_text(el)[:60]
        return len(label) <= 40 and bool(_BUY_VERB.match(label) or _BUY_LABEL.search(label))
    if tag not in ("button", "input", "a", "img"):
        return False
    kind = (el.get("type") or "").lower()
    if tag == "input" and kind == "number":
        # <input type=number name=quantity>: an order form
        return bool(_QUANTITY.match(el.get("name") or ""))
    if tag == "input" and kind not in ("submit", "button", "image"):
        return False
    if tag in ("input", "img"):
        label = el.get("value") or el.get("alt") or el.get("title") or ""
    else:
        label = visible_text(el)
    label = label[:60]
    attrs = " ".join([el.get("class") or "", el.get("id") or "", el.get("name") or ""])
    script = (
        (el.get("onclick") or "")
        + " "
        + (el.get("href") or "" if (el.get("href") or "").startswith("javascript:") else "")
    )
    return bool(
        _BUY_LABEL.search(label)
        or _BUY_VERB.match(label)
        or _ADD_TO_CART_ATTR.search(attrs)
        or _BUY_SCRIPT.search(script)
    )


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
)


def mentions_a_cart(html: str) -> bool:
    """The page has a shopping cart somewhere (shown or hidden): a shop, whose stock
    state its buy control and wording tell; pages without one (classified ads, auction
    lots, tickets) offer what they show at a price with no stock concept."""
    lowered = html.lower()
    return any(word in lowered for word in _CART_WORDS)
