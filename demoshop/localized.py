"""Product pages with no structured data in other languages and layouts (pure).

Plain product pages (``product.markup == "plain"``) come in the languages of
:data:`demoshop.catalog.PLAIN_LANGUAGES`; English keeps the shop's own layout
(``PageRenderer._product_plain``), every other language gets its own layout
here: a buy box beside a gallery (de), a definition list of codes (fr), a
price split into a whole and a superscript fraction (es), a price in a list of
facts (pl), a buy box with a unit price and a struck list price (sv). Each
shows the price in the language's format and currency, the stock wording, a
buy button and the shop's product code under the language's own label.
"""

from __future__ import annotations

from decimal import Decimal
from html import escape

from demoshop.catalog import Product

TEXTS: dict[str, dict[str, str]] = {
    "de": {"buy": "In den Warenkorb", "sku": "Art.-Nr.", "brand": "Marke",
           "InStock": "Auf Lager", "OutOfStock": "Nicht auf Lager", "PreOrder": "Vorbestellbar",
           "was": "Statt", "desc": "Beschreibung"},
    "fr": {"buy": "Ajouter au panier", "sku": "Référence", "brand": "Marque",
           "InStock": "En stock", "OutOfStock": "Rupture de stock", "PreOrder": "Précommande",
           "was": "Prix barré", "desc": "Description"},
    "es": {"buy": "Añadir al carrito", "sku": "Referencia", "brand": "Marca",
           "InStock": "En stock", "OutOfStock": "Agotado", "PreOrder": "Preventa",
           "was": "Antes", "desc": "Descripción"},
    "pl": {"buy": "Dodaj do koszyka", "sku": "Kod produktu", "brand": "Marka",
           "InStock": "Dostępny", "OutOfStock": "Niedostępny", "PreOrder": "Przedsprzedaż",
           "was": "Cena regularna", "desc": "Opis"},
    "sv": {"buy": "Lägg i varukorgen", "sku": "Artikelnummer", "brand": "Märke",
           "InStock": "I lager", "OutOfStock": "Slut i lager", "PreOrder": "Förhandsboka",
           "was": "Ord. pris", "desc": "Beskrivning"},
}
_SYMBOL = {"EUR": "€", "PLN": "zł", "SEK": "kr"}


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def local_price(amount: Decimal, language: str, currency: str) -> str:
    """``1.299,99 €`` (de, es), ``1 299,99 €`` (fr), ``1 299,99 zł`` (pl), ``1 299,99 kr``."""
    whole, cents = f"{amount:.2f}".split(".")
    group = "." if language in ("de", "es") else "\u00a0"
    grouped = f"{int(whole):,}".replace(",", group)
    return f"{grouped},{cents}\u00a0{_SYMBOL[currency]}"


def render(product: Product, breadcrumb_nav: str, gallery: str, reviews: str) -> str:
    """The ``<main>`` content of a plain product page in ``product.language``."""
    lang = product.language
    t = TEXTS[lang]
    price = local_price(product.price, lang, product.currency)
    was = ""
    if product.list_price is not None:
        was = f'<s class="old">{local_price(product.list_price, lang, product.currency)}</s> '
    stock = f'<p class="lager">{_e(t[product.availability])}</p>'
    button = (
        '<form action="/cart/add" method="post">'
        f'<input type="hidden" name="id" value="{product.id}">'
        f'<button type="submit">{_e(t["buy"])}</button></form>'
    )
    desc = f'<section><h2>{_e(t["desc"])}</h2><p>{_e(product.description)}</p></section>'
    name = f"<h1>{_e(product.name)}</h1>"
    if lang == "de":
        box = (
            f'<div class="kaufbox"><div class="preis">{was}<b>{price}</b></div>{stock}{button}'
            f'<p>{_e(t["sku"])}: {_e(product.sku)}</p>'
            f'<p>{_e(t["brand"])}: {_e(product.brand)}</p></div>'
        )
        main = f'<div class="row">{gallery}<div class="col">{name}{box}</div></div>'
    elif lang == "fr":
        main = (
            f'{name}<div class="prix">{was}<strong>{price}</strong></div>{stock}{button}'
            f'<dl class="fiche"><dt>{_e(t["sku"])}</dt><dd>{_e(product.sku)}</dd>'
            f'<dt>{_e(t["brand"])}</dt><dd>{_e(product.brand)}</dd></dl>{gallery}'
        )
    elif lang == "es":
        whole, cents = local_price(product.price, lang, product.currency).split(",")
        split = (
            f'<div class="precio">{was}<span class="entero">{whole}</span>'
            f"<sup>,{cents.split(chr(0xA0))[0]}</sup>\u00a0€</div>"
        )
        main = (
            f"{gallery}{name}{split}{stock}{button}"
            f'<p><span class="label">{_e(t["sku"])}:</span> {_e(product.sku)}</p>'
            f'<p>{_e(t["brand"])}: {_e(product.brand)}</p>'
        )
    elif lang == "pl":
        main = (
            f'{name}<ul class="fakty"><li>Cena: <span class="cena">{price}</span> {was}</li>'
            f"<li>{_e(t['sku'])}: {_e(product.sku)}</li><li>{_e(t['brand'])}: "
            f"{_e(product.brand)}</li></ul>{stock}{button}{gallery}"
        )
    else:  # sv
        unit = local_price((product.price / 4).quantize(Decimal("0.01")), lang, product.currency)
        main = (
            f'{name}<div class="kop">{was}<span class="pris">{price}</span>'
            f'<small class="jmf">Jämförpris {unit}/st</small></div>{stock}{button}'
            f'<p>{_e(t["sku"])}: {_e(product.sku)}</p><p>{_e(t["brand"])}: '
            f"{_e(product.brand)}</p>{gallery}"
        )
    return (
        breadcrumb_nav + f'<article class="produkt">\n{main}\n{desc}\n{reviews}</article>\n'
    )
