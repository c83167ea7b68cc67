"""What a stock statement is about: this product, or something else on its page.

A shopper reads "Next-day delivery: unavailable", "Click & Collect: out of stock at
Leeds", "Sold by Kettle World: currently unavailable" or "Size XL: sold out" as
something else than whether this product can be bought: a delivery or collection
option, another seller's offer, one variant that is not the one shown. The stock
readers (:mod:`.availability`) drop such clauses before they look for a state
(:func:`about_this_product`) and skip a text that states one variant's stock
(:func:`states_a_variant`).

Class of pages: product pages in stock that also show delivery options, other
sellers' offers or a size list with one size sold out, read ``OutOfStock`` (issue
29: 7 pages of 4 shops on a public benchmark).
"""

from __future__ import annotations

import re

from ..normalize.availability import availability_states
from .price_text import MONEY_TEXT

# A delivery or collection option, to the end of its clause: its state is the option's
# ("Next-day delivery: unavailable", "Retrait en magasin : indisponible"), not the
# product's. The store pick-up wording of earlier rounds is one of them.
_OPTION = (
    r"(?:store )?pick-?\s?up|in[- ]store|(?:find|check) (?:it )?in (?:a )?store|"
    r"(?:home |next[- ]day |same[- ]day |express |standard |free |local |international )?"
    r"deliver(?:y|ies)|shipping to|click\s*(?:&|and|\+)\s*collect|collection in|"
    r"collect (?:in|from|at)|lieferung|zustellung|abholung|versand(?:kostenfrei)?|"
    r"livraison|retrait|envío|envio|entrega|recogida|consegna|ritiro|spedizione|"
    r"dostawa|odbiór|доставка|самовывоз|levering|afhalen|leverans|hämta|afhentning|"
    r"toimitus|nouto|kargo|teslimat|配送|배송|配達|お届け|受け?取り?|店頭"
)
# Another seller's offer, to the end of its clause ("Sold by Acme: unavailable", "Other
# sellers: out of stock").
_SELLER = (
    r"sold by|other sellers?|from other sellers|more (?:buying choices|offers)|other offers|"
    r"andere (?:verkäufer|angebote)|verkauft von|autres? vendeurs?|vendu par|"
    r"otros vendedores|vendido por|altri venditori|venduto da|outros vendedores|"
    r"inni sprzedawcy|sprzedawca|другие продавцы|продавец|andere verkopers|verkocht door"
)
# An image's own wording at the start of its clause ("Image not available", "Bild nicht
# verfügbar", "Imagen no disponible", "画像は在庫切れ"...): a gallery's placeholder, not
# the product's stock (issue 42).
_IMAGE_WORD = (
    r"(?:images?|photos?|pictures?|bild(?:er)?|fotos?|imagen(?:es)?|immagin[ei]|"
    r"afbeelding(?:en)?|zdjęci[ae]|obraz(?:ek)?|изображени[ея]|фото|kuva|bilde|billede|"
    r"resim|görsel|画像|写真|이미지|图片|圖片)(?!\w)"
)
_IMAGE_SOMEWHERE = re.compile(_IMAGE_WORD, re.I)
_IMAGE_CLAUSE = re.compile(
    rf"\W*(?:(?:no|kein\w*|sin|sans|pas d'|nessuna|geen|brak)\s+)?{_IMAGE_WORD}", re.I
)
_ELSEWHERE = re.compile(rf"{_OPTION}|{_SELLER}", re.I)
# A clause ends at ".", "!", "?", "|", ";", ",", a line break, a dash between spaces, or
# the Japanese and Chinese marks of a sentence's and a clause's end.
_CLAUSE_END = re.compile(r"(?<=[.!?|;,\n。、，；])|(?=\s[-–—]\s)")


_NOT_THIS_PRODUCT = re.compile(rf"(?:{_OPTION}|{_SELLER})[^.|;\n]*", re.I)


def about_this_product(text: str, sold: bool = False) -> str:
    """``text`` without its wording about something else than this product's stock:

    * an image's clause, whole ("Image not available", "Bild nicht verfügbar");
    * a delivery or collection option (a channel) or another seller, from its word to
      the end of its clause ("Next-day delivery: unavailable", "Sold by Acme:
      unavailable");
    * when the product is ``sold`` (its buy control is enabled: a channel sells it),
      each clause that names a channel or a seller, whole: "Unavailable for store
      pickup", "Delivery not available to 90210". A channel's wording never makes the
      product out of stock while another channel sells it; without a buy control,
      "Currently unavailable for delivery" is the product's own state."""
    elsewhere = _ELSEWHERE.search(text) is not None
    if _IMAGE_SOMEWHERE.search(text) is None:
        if not elsewhere:
            return text
        if not sold:
            return _NOT_THIS_PRODUCT.sub(" ", text)
    kept = [
        clause
        for clause in _CLAUSE_END.split(text)
        if _IMAGE_CLAUSE.match(clause) is None
        and not (sold and _ELSEWHERE.search(clause) is not None)
    ]
    left = " ".join(kept)
    return (_NOT_THIS_PRODUCT.sub(" ", left) if elsewhere and not sold else left) or " "


# A variant's own label before its state: "M - Out of stock", "Size XL: sold out",
# "Colour Blue is out of stock" (a size, colour or other option word, or a label of at
# most 20 characters before a colon or a dash between spaces: "Pre-order" is one word).
_VARIANT_WORD = (
    r"size|colou?r|width|length|style|taille|couleur|pointure|größe|grösse|farbe|talla|"
    r"tamaño|tamanho|cor|taglia|colore|rozmiar|kolor|размер|цвет|maat|kleur|storlek|färg|"
    r"koko|väri|beden|renk"
)
_VARIANT_LABEL = re.compile(
    rf"^\s*(?:(?:{_VARIANT_WORD})\b[^:|]{{0,24}}?(?:\s*:|\s[-–—|]\s|\s+(?:is|are)\b)|"
    rf"(?P<label>[^:|]{{1,20}}?)(?:\s*:|\s[-–—|]\s))\s*",
    re.I,
)
# Labels before a colon that introduce the product's own stock ("Availability: Out of
# stock", "Stock: 0", "Status: sold out"): not a variant.
_STOCK_LABEL = re.compile(
    r"^\s*(?:availability|available|in stock|stock|status|state|inventory|"
    r"verfügbarkeit|lieferstatus|lagerbestand|disponibilité|disponibilidad|disponibilità|"
    r"disponibilidade|dostępność|beschikbaarheid|voorraad|tillgänglighet|наличие|"
    r"статус|stok durumu|durum|saatavuus|item|product|this item|artikel|produit|producto|"
    r"currently|now|online|note|web ?shop|online ?shop)"
    r"\s*$",
    re.I,
)


def states_a_variant(text: str, name: str | None = None) -> bool:
    """``text`` states the stock of one variant, not of the product shown: its state
    follows a variant's label ("M - Out of stock", "Size XL: sold out"); a stock label
    ("Availability: Out of stock") or the product's own name is no variant's."""
    match = _VARIANT_LABEL.match(text)
    if match is None or not availability_states(text[match.end() :]):
        return False  # no state after a label
    label = match.group("label")
    if label is None:
        return True  # opens with a size, colour... word
    label = label.strip()
    if not label or _STOCK_LABEL.match(label) or availability_states(label):
        return False  # "Availability: ...", "Out of stock - notify me"
    if MONEY_TEXT.search(label):
        return False  # "36,99€ - En stock": the price of the variant shown, and its stock
    # "Norvik Kettle: out of stock" names the product itself
    return not (name and len(label) >= 4 and name.casefold().startswith(label.casefold()))
