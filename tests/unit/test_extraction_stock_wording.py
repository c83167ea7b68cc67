"""Stock wording of shops in their own idiom, denied in-stock phrases, price alerts and
modal dialogs, on small synthetic pages (each test states its class of pages)."""

from __future__ import annotations

import pytest

from crawler.extraction import extract_product_from_html
from crawler.extraction.normalize.availability import availability_from_text as said

_URL = "https://shop.example/p/kettle-pro-2000"
_IN_STOCK_HEAD = (
    '<script type="application/ld+json">{"@type": "Product", "name": "Kettle Pro 2000",'
    '"offers": {"@type": "Offer", "price": "49.90", "priceCurrency": "EUR",'
    '"availability": "https://schema.org/InStock"}}</script>'
)


def _page(body: str, head: str = "") -> str:
    return (
        f"<html><head><title>Kettle Pro 2000</title>{head}</head><body>"
        f"<header><a href='/cart'>Cart</a></header><main><h1>Kettle Pro 2000</h1>"
        f"<p class='price'>49,90 €</p>{body}</main></body></html>"
    )


def _availability(body: str, head: str = "") -> str | None:
    product = extract_product_from_html(_URL, _page(body, head))
    assert product is not None
    return product["availability"]


@pytest.mark.parametrize(
    "text",
    [
        # class: shops that say sold out in their own idiom
        "En rupture",
        "Victime de son succès",
        "Bientôt de retour",
        "Hors stock",
        "Fuera de stock",
        "No hay stock",
        "Fora de estoque",
        "Sem estoque",
        "Kein Bestand",
        "Ei saatavilla",
        "Ej tillgänglig",
        "Ikke tilgjengelig",
        "Ikke tilgængelig",
        "Exhaurit",
        "Нет в продаже",
        "Ожидается поступление",
        "Закончился",
        "Закінчився",
        "Εξαντλημένο",
        "Εκτός αποθέματος",
        "نفدت الكمية",
        "Stokta bulunmamaktadır",
        "Nem rendelhető",
        "Brak towaru",
        "Stok kosong",
        "Trenutno nedostupno",
        "Nėra prekyboje",
        "入荷待ち",
        "到货通知",
        "재입고 알림",
        # class: restock forms that replace the buy button, in more languages
        "Avvisami quando disponibile",
        "Avise-me quando chegar",
        "Сообщить о поступлении",
        "Gelince haber ver",
        "أعلمني عند التوفر",
        # class: an in-stock phrase denied by the language's "not" before it
        "Non disponible",
        "Pas en stock",
        "Plus en stock",
        "Non più disponibile",
        "Não disponível",
        "Finns inte i lager",
        "Tidak tersedia",
        "Nu mai este în stoc",
        "Товар не в наличии",
        "Δεν είναι διαθέσιμο",
        "המוצר אינו במלאי",
        "ليس متوفر",
        "Δεν υπάρχει απόθεμα",
        "لا يوجد في المخزون",
    ],
)
def test_sold_out_wording_is_out_of_stock(text: str) -> None:
    assert said(text) == "OutOfStock"


@pytest.mark.parametrize(
    "text",
    [
        "In stock",
        "In stoc",
        "זמין במלאי",
        "Tilgjengelig",
        "Not yet sold",  # a classified ad still on offer
        "No minimum order, in stock",  # the "not" of another clause
        "Kettle Plus available now",
        "Non-stop delivery, in stock",
    ],
)
def test_in_stock_wording_that_only_looks_denied_stays_in_stock(text: str) -> None:
    assert said(text) == "InStock"


def test_other_states_in_more_languages() -> None:
    assert said("Под заказ") == "BackOrder"
    assert said("Снят с производства") == "Discontinued"


@pytest.mark.parametrize(
    "text",
    ["Notify me of price drops", "Notify me when the price drops", "Avvisami se il prezzo scende"],
)
def test_a_price_alert_is_no_stock_statement(text: str) -> None:
    # class: in-stock pages that offer to tell the shopper of a lower price
    assert said(text) is None


def test_a_price_alert_beside_the_buy_button_leaves_the_page_in_stock() -> None:
    body = (
        "<button class='add-to-cart'>Add to cart</button>"
        "<a href='#alert'>Notify me of price drops</a>"
    )
    assert _availability(body) == "InStock"


def test_a_restock_button_in_the_shops_language_beats_stale_markup() -> None:
    # class: shops that replace the buy button by a "notify me" button; the disabled
    # "Avvisami quando disponibile" once read "disponibile" and said InStock
    assert _availability("<button>Avvisami quando disponibile</button>", _IN_STOCK_HEAD) == (
        "OutOfStock"
    )
    assert _availability("<p>Stokta bulunmamaktadır</p>") == "OutOfStock"


def test_a_modal_dialog_is_hidden_until_opened() -> None:
    # class: Bootstrap-style dialogs (class "modal"): a "notify me when back" form and a
    # "sold out" notice that a script opens only for a variant that cannot be bought
    modal = (
        "<div class='modal fade' id='notifyModal' role='dialog'><div class='modal-dialog'>"
        "<h2 class='modal-title'>Produto indisponível</h2>"
        "<button id='notify' type='button'>Avise-me quando chegar</button></div></div>"
    )
    body = f"<button class='add-to-cart'>Comprar</button>{modal}"
    assert _availability(body, _IN_STOCK_HEAD) == "InStock"
    # the same button shown on the page in place of the buy button is the page's state
    shown = "<div class='notify-box'><button type='button'>Avise-me quando chegar</button></div>"
    assert _availability(shown, _IN_STOCK_HEAD) == "OutOfStock"
