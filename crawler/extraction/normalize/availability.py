"""Availability: the contract's stock states from markup values and stock wording."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from crawler.core.items import AVAILABILITIES

from ..ascii_case import for_lowered_ascii
from .text import normalize_text

#: The contract's stock states (one definition: :data:`crawler.core.items.AVAILABILITIES`).
AVAILABILITY_VALUES = AVAILABILITIES

_AVAILABILITY_TOKENS = {
    "instock": "InStock",
    "available": "InStock",
    "instoreonly": "InStock",
    "onlineonly": "InStock",
    "yes": "InStock",
    "true": "InStock",
    "outofstock": "OutOfStock",
    "soldout": "OutOfStock",
    "unavailable": "OutOfStock",
    "notavailable": "OutOfStock",
    # Open Graph's product:availability ("oos", "available for order": Facebook's
    # catalog vocabulary, still written by shop platforms' meta tags)
    "oos": "OutOfStock",
    "availablefororder": "InStock",
    "no": "OutOfStock",
    "false": "OutOfStock",
    "preorder": "PreOrder",
    "presale": "PreOrder",
    "backorder": "BackOrder",
    "backordered": "BackOrder",
    "onbackorder": "BackOrder",
    "discontinued": "Discontinued",
    "limitedavailability": "LimitedAvailability",
    "limitedstock": "LimitedAvailability",
    "lowstock": "LimitedAvailability",
}


def normalize_availability(value: Any) -> str | None:
    """Map a structured availability value to the contract's vocabulary.

    Accepts ``http://schema.org/InStock``, ``https://schema.org/OutOfStock``,
    ``schema:PreOrder``, ``InStock``, ``in_stock``, ``instock``, ``in stock``,
    ``Sold out`` ... Anything unknown gives None.
    """
    if isinstance(value, (list, tuple)):
        for item in value:
            found = normalize_availability(item)
            if found:
                return found
        return None
    if isinstance(value, dict):
        return normalize_availability(value.get("@id") or value.get("name"))
    text = normalize_text(value)
    if not text:
        return None
    token = re.split(r"[/#:]", text)[-1]
    token = re.sub(r"[^a-z]", "", token.lower())
    return _AVAILABILITY_TOKENS.get(token) or availability_from_text(text)


# The phrases that say in stock and open at the start of a word, under one \b (a
# position inside a word fails it once, not once per phrase: most positions of a text
# are inside one), then a guard of the characters they open with (a word that opens
# with none fails at once; tests/unit/test_extraction_phrase_starts.py checks it):
# searches 8x faster than with a \b before each phrase.
_IN_STOCK_STARTS = "acdefiklnoprstuvwyîδвенזم"
_IN_STOCK_WORDS = (
    r"\b(?=[" + _IN_STOCK_STARTS + r"])"
    r"(?:in[\s-]+stock\b|available now\b|"
    r"ships (?:today|in \d)|en stock\b|disponible\b|"
    r"en existencia\b|auf lager\b|lieferbar\b|verfügbar\b|vorrätig\b|"
    r"em estoque\b|disponível\b|disponibile\b|in magazzino\b|"
    r"op voorraad\b|leverbaar\b|dostępny\b|w magazynie\b|"
    r"na (?:skladě|sklade)\b|skladem\b|na zalogi\b|na voljo\b|"
    r"[îi]n stoc\b|disponibil\b|laos\b|saadaval\b|varastossa\b|"
    r"toimitusvalmis\b|i lager\b|finns i lager\b|i butik\b|"
    # a classified ad's status: "Not sold" is still on offer
    r"not (?:yet )?sold\b|unsold\b|still available\b|"
    r"(?:есть )?в наличии\b|на складе\b|в наявності\b|stokta(?: var)?\b|"
    r"διαθέσιμο\b|raktáron\b|készleten\b|na (?:zalihi|stanju)\b|"
    r"dostupno\b|pieejams\b|ir noliktavā\b|yra sandėlyje\b|"
    r"זמין\b|متوفر\b|متاح\b|"
    r"còn hàng\b|sẵn hàng\b|(?:stok )?tersedia\b|ada stok\b|موجود\b|"
    r"в наличност\b|dostupné\b|på lager\b|tilg(?:æ|je)ngelig\b|"
    r"ready to ship\b)"
)
# The phrases that say in stock (the last rule below, and denied in the out-of-stock
# rule): those above, then the others: no phrase of either group can start where one of
# the other can, so the order changes no match nor its span.
_IN_STOCK = (
    r"(?:" + _IN_STOCK_WORDS + r"|"
    r"\(\s*\d+\s+available\s*\)|^\s*available\s*$|במלאי|"
    r"在庫あり|有現貨|現貨|现货|有货|有貨|재고 ?있음|มีสินค้า|स्टॉक में)"
)
# What follows an offer to notify when it is about the price, not the stock (a price
# alert: "Notify me of price drops", "Avvisami se il prezzo scende").
_PRICE_ALERT = (
    r"[^.|]{0,30}\b(?:prices?|prezzo|preço|prix|precio|preis|prijs|cena|цен|fiyat|pris|hinta|"
    r"τιμή|السعر|سعر)"
)

# The characters the phrases of the out-of-stock rule below open with, after its \b
# (tests/unit/test_extraction_phrase_starts.py checks it): its search tests them once
# at the start of a word that opens none, instead of each of its ~200 phrases (a search
# 2x faster; the stock wording of a page seen first is searched text by text).
_OUT_OF_STOCK_STARTS = "(0abcefghijklmnoprstuvwéšδεμзинопрстуאלأغلن"

# Ordered: the first matching rule wins, negatives before positives.
_STOCK_RULES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"\b(?:pre-?\s?orders?|pre-?sale|reserve now|pre-?venta|en preventa|reserva(?:r)? ya|"
            r"vorbestell(?:ung|bar|en)|précommande|pré-?venda|pre-?ordine|preordina|"
            r"pré-?encomenda|voorbestel(?:len|ling)?|przedsprzedaż|předobjednávka|"
            r"predobjednávka|prednaročilo|precomandă|eeltellimus|ennakkotilaus|"
            r"förhandsboka|förbeställ|förhandsbeställning)\b",
            re.I,
        ),
        "PreOrder",
    ),
    (
        re.compile(
            r"\b(?:back-?\s?order(?:ed|s)?|on back order|nachbestell(?:ung|t|bar)|"
            r"back in stock soon|available (?:for|on) back-?order|"
            r"(?:we'?ll|we will) ship (?:it |them )?when (?:it'?s|it is|they'?re) "
            r"(?:available|in stock)|"
            r"bajo pedido|por encargo|sobre pedido|sur commande|sob encomenda|"
            r"su ordinazione|in arrivo|nabestelling|na zamówienie|na objednávku|под заказ|"
            r"po naročilu|la comandă|tellimisel|tilaustuote|beställningsvara)\b",
            re.I,
        ),
        "BackOrder",
    ),
    (
        re.compile(
            r"\b(?:discontinued|no longer (?:available|sold|made)|descontinuado|"
            r"nicht mehr (?:erhältlich|lieferbar|verfügbar)|ausgelaufen|"
            r"plus disponible|fuori produzione|uit (?:het )?assortiment|wycofany|"
            r"ukončen[ýá] prodej|utgått|снят с производства)\b",
            re.I,
        ),
        "Discontinued",
    ),
    (
        re.compile(
            # (a word's first character outside _OUT_OF_STOCK_STARTS fails at once)
            r"\b(?=[" + _OUT_OF_STOCK_STARTS + r"])"
            r"(?:out[\s-]+of[\s-]+stock|sold[\s-]*out|(?:not|no longer) (?:in stock|available)|"
            r"currently unavailable|unavailable|no stock|agotado|sin stock|sin existencias|"
            r"no disponible|ausverkauft|vergriffen|nicht vorrätig|"
            r"rupture de stock|épuisé|indisponible|esgotado|indisponível|"
            r"nicht (?:verfügbar|lieferbar|auf lager)|non disponibile|esaurito|"
            r"uitverkocht|niet (?:op voorraad|leverbaar|beschikbaar)|"
            r"niedostępny|brak w magazynie|wyprzedany|"
            r"není skladem|nie je na sklade|vypredané|vyprodáno|"
            r"ni na zalogi|ni na voljo|razprodano|"
            r"stoc epuizat|indisponibil|nu este în stoc|"
            r"otsas|laost otsas|pole saadaval|"
            r"loppu(?:unmyyty)?|ei varastossa|tilapäisesti loppu|"
            r"slut(?:såld)?(?: i lager)?|ej i lager|finns ej i lager|tillfälligt slut|"
            r"\(?0 (?:in stock|available|left)\)?|^\s*sold\s*$|"
            # an ended listing or auction, a sold item (the word alone: "Vendido por"
            # is "sold by")
            r"(?:listing|auction|bidding|sale) (?:has |was )?ended|ended by the seller|"
            r"angebot (?:wurde )?beendet|annonce expirée|anuncio finalizado|"
            r"^\s*(?:verkauft|vendu|vendido|venduto|sprzedany|sprzedane|продано|satıldı)\s*!?\s*$|"
            # "notify me" / "email me when available": offered only when it cannot be bought
            r"notify me(?: when (?:it'?s |it is )?(?:back in stock|back|available|in stock)|"
            r" if (?:it'?s |it is )?(?:back in stock|back|available))?(?!" + _PRICE_ALERT + r")|"
            r"e-?mail me when (?:it'?s )?(?:back in stock|available)|"
            # an offer to tell the shopper when it can be bought, or to queue for it
            r"(?:notify(?: me)?|alert me|let me know|(?:get|be) notified|tell me) when "
            r"(?:it'?s |it is |this (?:item|product) is |the (?:item|product) is )?"
            r"(?:back in stock|back|available|in stock|restocked)|"
            r"join (?:the )?(?:wait-?list|waiting list)|"
            r"nous consulter|m'alerter|me prévenir|prévenez-moi|avísame|avisarme|"
            r"benachrichtigen|benachrichtige mich|powiadom mnie|"
            # the same offer in more languages (class: restock forms that replace the buy
            # button: "Avvisami quando disponibile", "Avise-me quando chegar", "Сообщить
            # о поступлении", "Gelince haber ver"), not a price alert ("Avvisami se il
            # prezzo scende")
            r"(?:avvisami|avvertimi|avise-me|me avise|m'avertir|alertez-moi|notificarme|"
            r"powiadom o dostępności|сообщить о поступлении|уведомить о поступлении|"
            r"повідомити про наявність|gelince haber ver|értesítést kérek|ειδοποίησέ με|"
            r"أعلمني عند التوفر|أبلغني عند التوفر)(?!" + _PRICE_ALERT + r")"
            # and the rest of its sentence ("... quando disponibile", "... quando chegar")
            r"(?:\s+[^\W\d_]+){0,4}|"
            # Russian, Ukrainian, Turkish, Greek, Hungarian, Croatian/Serbian, Latvian,
            # Lithuanian, Hebrew, Arabic (their words take \b: letters are word characters)
            r"нет в наличии|нет на складе|распродан[оа]?|товар закончился|"
            r"немає в наявності|немає на складі|"
            r"stokta yok|tükendi|mevcut değil|satışta değil|"
            r"εξαντλήθηκε|μη διαθέσιμο|"
            r"elfogyott|nincs raktáron|nem elérhető|"
            r"nije dostupno|nema na (?:zalihi|stanju|skladištu)|rasprodano|"
            r"nav pieejams|izpārdots|nėra sandėlyje|išparduota|"
            r"אזל(?: מהמלאי)?|לא במלאי|לא זמין|"
            r"غير متوفر|غير متاح|نفذت الكمية|نفد من المخزون|نفذ من المخزون|غير موجود|"
            # Vietnamese, Indonesian/Malay, Persian, Catalan, Bulgarian, Latvian, Slovak,
            # Danish/Norwegian (class: shops in those languages)
            r"(?:tạm )?hết hàng|stok habis|barang habis|sudah habis|^\s*habis\s*$|"
            r"ناموجود|esgotat|изчерпан[оа]?|няма наличност|nav noliktavā|nedostupné|"
            r"ikke på lager|ikke tilg(?:æ|je)ngelig|udsolgt|utsolgt|"
            # more of the same languages' sold-out wording (class: shops that say it in
            # their own idiom: "En rupture", "Victime de son succès", "Fora de estoque",
            # "Нет в продаже", "Εξαντλημένο", "Stokta bulunmamaktadır", "Brak towaru")
            r"en rupture|victime de son succès|bientôt de retour|hors stock|plus en stock|"
            r"fuera de stock|no hay stock|fora de (?:estoque|stock)|sem (?:estoque|stock)|"
            r"kein bestand|ei saatavilla|(?:ej|inte) tillgänglig|exhaurit|"
            r"нет в продаже|ожидается поступление|закончил(?:ся|ась|ось)|"
            r"немає в продажу|закінчи(?:вся|лася|лося)|"
            r"εξαντλημένο|εκτός αποθέματος|نفد(?:ت)? (?:الكمية|المخزون|من المخزون)|"
            r"stokta bulunmamaktadır|stokta bulunmuyor|nem rendelhető|"
            r"brak towaru|brak na stanie|chwilowo brak|stok kosong|nedostupn[oaý]|"
            r"nėra prekyboje|šiuo metu nėra|δεν υπάρχει απόθεμα|لا يوجد في المخزون|"
            # a stock phrase denied: "Non disponible", "Pas en stock", "Finns inte i lager",
            # "Tidak tersedia", "Não disponível", "Nu mai este în stoc", "המוצר אינו במלאי",
            # "ليس متوفر" (class: every language that writes its "not" before the in-stock
            # words; at most two words between, in the same clause)
            r"(?:not|no|non|nicht|pas|niet|inte|ej|ikke|tidak|não|nao|не|δεν|μη|nem|nu|"
            r"אינו|אינה|אין|ليس|ليست|لا)"
            r"(?:\s+[^\W\d_]+){0,2}?\s+(?:" + _IN_STOCK + r"))\b",
            re.I,
        ),
        "OutOfStock",
    ),
    (
        # Chinese, Japanese, Korean: no word boundaries between their characters
        re.compile(
            r"缺貨|缺货|售完|已售完|售罄|已售罄|在庫切れ|在庫なし|売り切れ|品切れ|品切|"
            r"完売|일시품절|품절|无货|無貨|無現貨|无现货|"
            # awaiting stock, restock notices, sale ended ("入荷待ち", "到货通知", "재입고 알림")
            r"入荷待ち|入荷お知らせ|再入荷(?:お知らせ|通知|待ち|のお知らせ)|販売終了|"
            r"到货通知|到貨通知|貨到通知|暂无库存|暫無庫存|补货中|補貨中|已下架|"
            r"재입고 ?(?:알림|예정|신청)|판매 ?종료|"
            # Thai and Hindi: no word boundaries either (Thai), or combining vowel signs
            r"สินค้าหมด|หมดสต็อก|स्टॉक में नहीं|आउट ऑफ स्टॉक|स्टॉक खत्म"
        ),
        "OutOfStock",
    ),
    (
        re.compile(
            r"\b(?:only \d+ (?:left|remaining|in stock)|few (?:left|remaining)|"
            r"low (?:in )?stock|limited (?:stock|availability|quantit(?:y|ies))|"
            r"últimas unidades|quedan \d+|nur noch \d+|wenige (?:auf lager|verfügbar))\b",
            re.I,
        ),
        "LimitedAvailability",
    ),
    (
        re.compile(
            _IN_STOCK,
            re.I,
        ),
        "InStock",
    ),
]


def _state_patterns() -> dict[str, re.Pattern[str]]:
    """One pattern per state: all its rules' phrases (the words that name it)."""
    by_state: dict[str, list[str]] = {}
    for pattern, value in _STOCK_RULES:
        by_state.setdefault(value, []).append(f"(?:{pattern.pattern})")
    return {state: re.compile("|".join(parts), re.I) for state, parts in by_state.items()}


#: State -> the pattern of the phrases that name it (see :func:`availability_states`).
STATE_PATTERNS = _state_patterns()
# The rules for ASCII text: a case-insensitive one made case-sensitive, to search the
# text lowered (3-4x as fast: ..ascii_case), the others as they are (no case of theirs).
_STOCK_RULES_ASCII = [
    (for_lowered_ascii(pattern), value, True) if pattern.flags & re.I else (pattern, value, False)
    for pattern, value in _STOCK_RULES
]


def availability_from_text(text: str | None) -> str | None:
    """Availability from visible stock wording ("In stock", "Out of stock",
    "Only 3 left" → LimitedAvailability, "(22 available)" → InStock,
    "Pre-order", "Available on backorder"...)."""
    if not text:
        return None
    if isinstance(text, str) and len(text) <= 400:  # short strings only are remembered
        return _stock_wording(text)
    return _stock_wording.__wrapped__(text)


@lru_cache(maxsize=4096)
def _stock_wording(text: str) -> str | None:
    """:func:`availability_from_text` of a string: a pure function of it, remembered
    (the same labels and stock lines repeat across a page and a shop's pages)."""
    text = normalize_text(text) or ""
    if len(text) > 200:
        return None
    if text.isascii():  # most of a page's texts: searched lowered (..ascii_case)
        lowered = text.lower()
        for pattern, value, of_lowered in _STOCK_RULES_ASCII:
            if pattern.search(lowered if of_lowered else text):
                return value
        return None
    for pattern, value in _STOCK_RULES:
        if pattern.search(text):
            return value
    return None


def availability_states(text: str | None) -> list[str]:
    """Every state the wording names, in rule order (the first is what
    :func:`availability_from_text` returns). More than one means the wording is
    ambiguous ("Lieferbar auf Nachbestellung": available, on backorder)."""
    if not text:
        return []
    text = normalize_text(text) or ""
    if len(text) > 200:
        return []
    states = []
    for pattern, value in _STOCK_RULES:
        text, found = pattern.subn(" ", text)  # "not in stock" does not also say "in stock"
        if found and value not in states:
            states.append(value)
    return states
