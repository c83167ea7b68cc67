"""Generated product pages of the classes of issue 42 (written from its description,
not from any real page): marketplace-style product pages, buy areas whose wording is
about a channel or an image, and codes under a shop's own label.

A marketplace-style product page: hundreds of KB of HTML, no JSON-LD, no microdata, no
``og:type``; a promotion banner as the first ``<h1>`` and the product's title a later
one; a buy control that is an ``<input type="submit">`` (or a ``<button>``) without a
value, labelled by another element (``aria-labelledby``) or by ``aria-label``; a price
split into its parts (symbol, whole, fraction) beside an off-screen copy of the whole
price; dozens of other products' cards (sponsored strips, "frequently bought together",
"customers also viewed"), each with a price, a rating and stock wording of its own; the
product's code under a label of the page's language in a details table or list. Out of
stock, the page has no price and no buy control: its title, images, a line saying it
is currently unavailable, and its details.

Each builder returns ``(url, html, expected)``: ``expected`` holds the fields a person
reads on the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

HOST = "https://market.example"


@dataclass(frozen=True)
class Language:
    code: str
    promo: str
    name: str
    category: str
    price: str  # the whole price as written, e.g. "$89.99"
    amount: Decimal
    currency: str
    symbol: str
    symbol_first: bool
    decimal: str  # "" for a currency without a fraction
    buy: str
    buy_now: str
    in_stock: str
    unavailable: str
    item_label: str
    details: str
    sponsored: str
    together: str
    also_viewed: str
    stars: str  # "{v} out of 5 stars"
    left: str  # "Only 1 left in stock"
    card_out: str
    add_to_list: str
    brand_label: str
    weight_label: str


LANGUAGES: dict[str, Language] = {
    "en": Language(
        "en", "Deals of the day: up to 40% off power tools",
        "Halvorsen Cordless Drill Driver 18V with 2 Batteries", "Tools & Home Improvement",
        "$89.99", Decimal("89.99"), "USD", "$", True, ".", "Add to Cart", "Buy Now",
        "In Stock",
        "Currently unavailable. We don't know when or if this item will be back in stock.",
        "Item number", "Product details", "Sponsored products related to this item",
        "Frequently bought together", "Customers who viewed this item also viewed",
        "{v} out of 5 stars", "Only 1 left in stock - order soon.", "Currently unavailable.",
        "Add to List", "Brand", "Item weight",
    ),
    "de": Language(
        "de", "Angebote des Tages: bis zu 40 % auf Elektrowerkzeuge",
        "Halvorsen Akku-Bohrschrauber 18V mit 2 Akkus", "Baumarkt",
        "89,99 €", Decimal("89.99"), "EUR", "€", False, ",", "In den Einkaufswagen",
        "Jetzt kaufen", "Auf Lager",
        "Derzeit nicht verfügbar. Ob und wann dieser Artikel wieder vorrätig sein wird, "
        "ist unbekannt.",
        "Artikelnummer", "Produktinformation", "Gesponserte Produkte zu diesem Artikel",
        "Wird oft zusammen gekauft", "Kunden, die diesen Artikel angesehen haben, sahen auch",
        "{v} von 5 Sternen", "Nur noch 1 auf Lager", "Derzeit nicht verfügbar.",
        "Auf die Liste", "Marke", "Artikelgewicht",
    ),
    "fr": Language(
        "fr", "Offres du jour : jusqu'à -40 % sur l'outillage",
        "Perceuse-visseuse sans fil Halvorsen 18V avec 2 batteries", "Bricolage",
        "89,99 €", Decimal("89.99"), "EUR", "€", False, ",", "Ajouter au panier",
        "Acheter maintenant", "En stock",
        "Actuellement indisponible. Nous ne savons pas quand cet article sera de nouveau "
        "approvisionné ni s'il le sera.",
        "Numéro d'article", "Détails sur le produit", "Produits sponsorisés liés à cet article",
        "Fréquemment achetés ensemble",
        "Les clients ayant consulté cet article ont également regardé",
        "{v} sur 5 étoiles", "Il ne reste plus que 1 exemplaire(s) en stock.",
        "Actuellement indisponible.", "Ajouter à la liste", "Marque", "Poids de l'article",
    ),
    "es": Language(
        "es", "Ofertas del día: hasta un 40 % en herramientas",
        "Taladro atornillador inalámbrico Halvorsen 18V con 2 baterías", "Bricolaje",
        "89,99 €", Decimal("89.99"), "EUR", "€", False, ",", "Añadir a la cesta",
        "Comprar ya", "En stock",
        "No disponible por el momento. No sabemos si este producto volverá a estar "
        "disponible, ni cuándo.",
        "Número de artículo", "Detalles del producto",
        "Productos patrocinados relacionados con este artículo", "Comprados juntos habitualmente",
        "Los clientes que vieron este producto también vieron",
        "{v} de 5 estrellas", "Solo queda(n) 1 en stock.", "No disponible por el momento.",
        "Añadir a la lista", "Marca", "Peso del producto",
    ),
    "ja": Language(
        "ja", "本日のタイムセール：電動工具が最大40%オフ",
        "ハルヴォルセン 充電式ドライバドリル 18V バッテリー2個付き", "DIY・工具",
        "￥8,999", Decimal("8999"), "JPY", "￥", True, "", "カートに入れる", "今すぐ買う",
        "在庫あり。", "現在在庫切れです。この商品の再入荷予定は立っておりません。",
        "商品番号", "商品の情報", "この商品に関連するスポンサー商品",
        "よく一緒に購入されている商品", "この商品を見た後に買っているのは？",
        "5つ星のうち{v}", "残り1点 ご注文はお早めに", "現在在庫切れです。",
        "リストに追加", "ブランド", "商品の重量",
    ),
}

CODE = "HV18D2K0Q7"
OTHER_WORDS = (
    "Torvik", "Impact", "Wrench", "Bit", "Set", "Aster", "Angle", "Grinder", "Lumio",
    "Work", "Light", "Tessel", "Saw", "Blade", "Kit", "Case", "Glove", "Level", "Laser",
)


def _money(lang: Language, amount: Decimal) -> tuple[str, str, str]:
    """(whole, fraction, the whole price as written) of ``amount`` in the language."""
    if not lang.decimal:
        whole = f"{int(amount):,}"
        return whole, "", f"{lang.symbol}{whole}"
    whole_n, frac = f"{amount:.2f}".split(".")
    whole = f"{int(whole_n):,}" if lang.symbol_first else whole_n
    text = (
        f"{lang.symbol}{whole}.{frac}"
        if lang.symbol_first
        else f"{whole}{lang.decimal}{frac} {lang.symbol}"
    )
    return whole, frac, text


def split_price(lang: Language, amount: Decimal, layout: str) -> str:
    """A price split into its parts beside an off-screen copy of the whole price."""
    whole, frac, text = _money(lang, amount)
    sym = f'<span class="price-symbol">{lang.symbol}</span>'
    parts = f'<span class="price-whole">{whole}'
    if frac:
        parts += f'<span class="price-decimal">{lang.decimal}</span></span>'
        parts += f'<span class="price-fraction">{frac}</span>'
    else:
        parts += "</span>"
    shown = sym + parts if lang.symbol_first else parts + sym
    if layout == "b":  # the copy placed off-screen by an inline style
        copy = (
            f'<span style="position:absolute;left:-10000px;top:auto;width:1px;height:1px;'
            f'overflow:hidden">{text}</span>'
        )
    else:
        copy = f'<span class="offscreen">{text}</span>'
    return f'<span class="price">{copy}<span aria-hidden="true">{shown}</span></span>'


def _other_name(i: int) -> str:
    words = [OTHER_WORDS[(i * 7 + k * 3) % len(OTHER_WORDS)] for k in range(4)]
    return f"{' '.join(words)} {100 + i}"


def other_card(lang: Language, i: int, layout: str, buy: bool = False) -> str:
    """Another product's card: a link with its image and name, a rating, a split price,
    stock wording of its own (and in some strips its own buy button)."""
    name = _other_name(i)
    code = f"OT{i:04d}X{i % 7}Z"
    amount = (
        Decimal(f"{12 + i * 3}.{(i * 17) % 100:02d}") if lang.decimal else Decimal(1200 + i * 350)
    )
    stars = lang.stars.format(v="4,3" if lang.decimal == "," else "4.3")
    stock = lang.left if i % 3 == 0 else (lang.card_out if i % 5 == 0 else lang.in_stock)
    button = (
        f'<form method="post" action="/buybox/submit"><input type="hidden" name="offer" '
        f'value="{code}"><input type="submit" aria-label="{lang.buy}" '
        f'class="card-button"></form>'
        if buy
        else ""
    )
    tag = "li" if layout != "b" else "div"
    return (
        f'<{tag} class="carousel-card" data-index="{i}"><div class="card-inner">'
        f'<a class="card-image" href="/{name.lower().replace(" ", "-")}/item/{code}">'
        f'<img src="{HOST}/images/{code}.jpg" alt="{name}" width="160" height="160"></a>'
        f'<a class="card-title" href="/{name.lower().replace(" ", "-")}/item/{code}">'
        f'<span class="truncate">{name}</span></a>'
        f'<div class="card-rating"><i class="stars" title="{stars}">'
        f'<span class="offscreen">{stars}</span></i>'
        f'<a href="/{code}/reviews">{1000 + i * 37:,}</a></div>'
        f'<div class="card-price">{split_price(lang, amount, layout)}</div>'
        f'<div class="card-stock"><span>{stock}</span></div>{button}</div></{tag}>\n'
    )


def _strip(lang: Language, heading: str, start: int, count: int, layout: str, buy: bool) -> str:
    cards = "".join(other_card(lang, start + i, layout, buy) for i in range(count))
    wrap = "ol" if layout != "b" else "div"
    return (
        f'<div class="strip"><h2 class="strip-heading">{heading}</h2>'
        f'<div class="strip-body"><{wrap} class="carousel">{cards}</{wrap}></div></div>\n'
    )


def _menu() -> str:
    departments = [f"Department {i}" for i in range(240)]
    links = "".join(
        f'<li><a href="/department/{i}/">{name}</a></li>' for i, name in enumerate(departments)
    )
    return (
        '<header id="site-header"><a href="/" class="logo">market.example</a>'
        '<form action="/s" role="search"><input type="text" name="q"></form>'
        '<a href="/account">Account</a> <a href="/basket">Basket</a></header>'
        f'<nav id="departments"><ul>{links}</ul></nav>\n'
    )


def _padding_script(kb: int) -> str:
    """A page's own scripts: widget settings and metrics (no product shape in them)."""
    rows = ",".join(
        f'{{"w":"widget-{i}","t":{i * 13 % 997},"s":"{"x" * 40}"}}' for i in range(kb * 12)
    )
    return f"<script>window.widgetMetrics = [{rows}];</script>\n"


def _reviews(lang: Language) -> str:
    body = "".join(
        f'<div class="review"><span class="review-stars">{lang.stars.format(v=5 - i % 3)}</span>'
        f"<p>Review {i}: solid tool, good grip, the batteries last a long day of work. "
        "Would buy again.</p></div>"
        for i in range(12)
    )
    return f'<div id="reviews"><h2>Reviews</h2>{body}</div>\n'


def _details(lang: Language, layout: str, code: str) -> str:
    rows = [
        (lang.brand_label, "Halvorsen"),
        (lang.weight_label, "1,6 kg" if lang.decimal == "," else "1.6 kg"),
        (lang.item_label, code),
        ("Voltage", "18 V"),
    ]
    if layout == "a":  # a details table
        body = "".join(
            f'<tr><th class="label">{k}</th><td class="value">{v}</td></tr>' for k, v in rows
        )
        return (
            f'<div id="details"><h2>{lang.details}</h2><table class="details">{body}</table>'
            "</div>"
        )
    if layout == "b":  # a details list: label, separator, value in three elements
        body = "".join(
            f'<li><span class="bold">{k}</span><span class="sep"> : </span><span>{v}</span></li>'
            for k, v in rows
        )
        return (
            f'<div id="details"><h2>{lang.details}</h2><ul class="detail-bullets">{body}</ul>'
            "</div>"
        )
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)  # a definition list
    return f'<section id="details"><h3>{lang.details}</h3><dl>{body}</dl></section>'


def _buy_control(lang: Language, layout: str) -> str:
    if layout == "a":  # submit inputs without a value, labelled by another element
        return (
            '<form method="post" action="/buybox/submit" id="buy-form">'
            '<input type="hidden" name="offer" value="main">'
            '<span class="button-primary"><input type="submit" name="submit.main" '
            'id="main-button" aria-labelledby="main-button-label">'
            f'<span id="main-button-label" aria-hidden="true">{lang.buy}</span></span>'
            '<span class="button-secondary"><input type="submit" name="submit.now" '
            'id="now-button" aria-labelledby="now-button-label">'
            f'<span id="now-button-label" aria-hidden="true">{lang.buy_now}</span></span>'
            "</form>"
        )
    if layout == "b":  # an icon button labelled by another element
        return (
            '<form method="post" action="/buybox/submit">'
            '<button type="submit" class="primary" aria-labelledby="buy-label">'
            '<svg width="16" height="16"></svg></button>'
            f'<span id="buy-label" class="button-text">{lang.buy}</span></form>'
        )
    return (  # a submit input labelled by aria-label
        '<form method="post" action="/buybox/submit">'
        f'<input type="submit" class="primary" aria-label="{lang.buy}">'
        "</form>"
    )


def marketplace_page(
    lang_code: str, layout: str, in_stock: bool = True, cards: int = 60, script_kb: int = 240
) -> tuple[str, str, dict[str, Any]]:
    """A marketplace-style product page (see the module doc); ``layout`` "a", "b" or
    "c" (details table / details list / definition list; buy control by
    ``aria-labelledby`` input, ``aria-labelledby`` icon button, ``aria-label`` input);
    ``cards`` other products' cards, about ``script_kb`` KB of the page's own scripts."""
    lang = LANGUAGES[lang_code]
    slug = "halvorsen-drill-driver-18v"
    url = f"{HOST}/{slug}/item/{CODE}" if layout != "c" else f"{HOST}/p/{slug}?ref=nav_7"
    title = (
        f"{lang.name} : {lang.category} : market.example"
        if layout != "b"
        else f"market.example: {lang.name}: {lang.category}"
    )
    promo = (
        f'<div class="promo-banner"><a href="/deals"><h1 class="promo">{lang.promo}</h1></a></div>'
        if layout == "c"
        else f'<div class="promo-banner"><h1 class="promo">{lang.promo}</h1></div>'
    )
    rating = lang.stars.format(v="4,6" if lang.decimal == "," else "4.6")
    if in_stock:
        price = f'<div id="price-block">{split_price(lang, lang.amount, layout)}</div>'
        buy_area = (
            f'<div id="buy-area"><div>{split_price(lang, lang.amount, layout)}</div>'
            f'<div class="buy-stock"><span class="color-green">{lang.in_stock}</span></div>'
            f"{_buy_control(lang, layout)}"
            f'<a href="/wishlist/add" class="list-link">{lang.add_to_list}</a></div>'
        )
    else:
        price = ""
        buy_area = (
            '<div id="buy-area"><div class="buy-message">'
            f'<span class="big-text">{lang.unavailable}</span></div>'
            f'<a href="/wishlist/add" class="list-link">{lang.add_to_list}</a></div>'
        )
    together = (
        _strip(lang, lang.together, 0, 3, layout, buy=False) if in_stock else ""
    )
    html = (
        f'<!DOCTYPE html><html lang="{lang.code}"><head><meta charset="utf-8">'
        f"<title>{title}</title>"
        '<meta name="viewport" content="width=device-width">'
        "<style>.offscreen{position:absolute;left:-10000px;width:1px;height:1px;"
        "overflow:hidden}.promo{font-size:2em}</style>"
        f"</head><body>{_menu()}{promo}"
        f"{_strip(lang, lang.sponsored, 100, cards // 3, layout, buy=layout == 'a')}"
        '<div id="main-product"><div id="left-col">'
        f'<div id="image-block"><img src="{HOST}/images/{CODE}-main.jpg" alt="{lang.name}">'
        f'<img src="{HOST}/images/{CODE}-2.jpg" alt=""></div></div>'
        '<div id="center-col">'
        f'<div id="title-block"><h1 id="title"><span id="product-title">{lang.name}</span></h1>'
        f'<a href="/brand/halvorsen" class="byline">Halvorsen</a>'
        f'<div class="rating-line"><span class="stars">{rating}</span>'
        '<a href="#reviews">2,311</a></div></div>'
        f"{price}"
        '<ul class="feature-bullets"><li>Two speeds, 0-450 and 0-1,800 rpm</li>'
        "<li>20 torque settings and a drill mode</li><li>Two 2.0 Ah batteries and a charger"
        "</li></ul></div>"
        f'<div id="right-col">{buy_area}</div></div>'
        f"{together}"
        f"{_details(lang, layout, CODE)}"
        f"{_strip(lang, lang.also_viewed, 200, cards - cards // 3, layout, buy=False)}"
        f"{_reviews(lang)}"
        f"{_padding_script(script_kb)}"
        '<footer><a href="/help">Help</a> <a href="/conditions">Conditions</a></footer>'
        "</body></html>"
    )
    expected = {
        "name": lang.name,
        "price": lang.amount if in_stock else None,
        "currency": lang.currency if in_stock else None,
        "availability": "InStock" if in_stock else "OutOfStock",
        "sku": CODE,
    }
    return url, html, expected


# --- buy areas whose wording is about a channel or an image, and labelled codes ---

@dataclass(frozen=True)
class ShopWords:
    name: str
    price: str
    amount: Decimal
    currency: str
    buy: str
    ship: str  # a channel that sells it
    pickup_out: str  # a channel that does not
    delivery_out: str
    image_out: str
    also: str
    left: str


SHOP_WORDS: dict[str, ShopWords] = {
    "en": ShopWords(
        "Brisa 12-Cup Programmable Coffee Maker", "$129.99", Decimal("129.99"), "USD",
        "Add to Cart", "Available to ship", "Unavailable for store pickup",
        "Delivery not available to 90210", "Image not available", "Customers also viewed",
        "Only 1 left in stock",
    ),
    "de": ShopWords(
        "Brisa Filterkaffeemaschine mit Timer, 12 Tassen", "129,99 €", Decimal("129.99"),
        "EUR", "In den Warenkorb", "Versand verfügbar",
        "Nicht verfügbar für Abholung im Markt", "Lieferung nach 10115 nicht verfügbar",
        "Bild nicht verfügbar", "Kunden sahen sich auch an", "Nur noch 1 auf Lager",
    ),
    "fr": ShopWords(
        "Cafetière programmable Brisa 12 tasses", "129,99 €", Decimal("129.99"), "EUR",
        "Ajouter au panier", "Disponible en expédition",
        "Indisponible pour le retrait en magasin", "Livraison non disponible vers 75001",
        "Image non disponible", "Les clients ont aussi consulté",
        "Plus que 1 en stock",
    ),
    "es": ShopWords(
        "Cafetera programable Brisa de 12 tazas", "129,99 €", Decimal("129.99"), "EUR",
        "Añadir al carrito", "Disponible para envío",
        "No disponible para recogida en tienda", "Envío no disponible a 28001",
        "Imagen no disponible", "Los clientes también vieron", "Solo queda 1 en stock",
    ),
    "ja": ShopWords(
        "ブリサ 12杯用 プログラム式コーヒーメーカー", "￥12,980", Decimal("12980"), "JPY",
        "カートに入れる", "配送可能", "店舗受け取り：在庫なし",
        "お届け：在庫切れ", "画像はありません",
        "この商品を見た人はこんな商品も見ています", "残り1点",
    ),
}


def _shop_cards(words: ShopWords, count: int = 6) -> str:
    cards = "".join(
        f'<li><a href="/p/other-{i}"><img src="{HOST}/img/o{i}.jpg" alt=""></a>'
        f'<a href="/p/other-{i}">{_other_name(i)}</a><span class="price">{words.price}</span>'
        f"<span>{words.left}</span></li>"
        for i in range(count)
    )
    return (
        f'<section class="recs"><h2>{words.also}</h2><ul class="recs-list">{cards}</ul>'
        "</section>"
    )


def shop_page(
    lang_code: str,
    layout: str,
    buy_area: str,
    *,
    gallery: str = "",
    ld_sku: str | None = None,
    ld_availability: str | None = None,
    code_block: str = "",
) -> tuple[str, str]:
    """A shop's product page: heading, a gallery, a price, ``buy_area`` (the channel and
    stock lines and the buy control), ``code_block``, a strip of other products' cards
    whose stock lines say "only 1 left"; with JSON-LD when ``ld_sku`` or
    ``ld_availability`` is given. ``layout`` "a", "b" or "c" varies the markup."""
    words = SHOP_WORDS[lang_code]
    url = f"{HOST}/p/brisa-coffee-maker-{layout}"
    ld = ""
    if ld_sku is not None or ld_availability is not None:
        offer = f'"price": "{words.amount}", "priceCurrency": "{words.currency}"'
        if ld_availability:
            offer += f', "availability": "https://schema.org/{ld_availability}"'
        sku = f', "sku": "{ld_sku}"' if ld_sku else ""
        ld = (
            '<script type="application/ld+json">{"@context": "https://schema.org", '
            f'"@type": "Product", "name": "{words.name}"{sku}, '
            f'"offers": {{"@type": "Offer", {offer}}}}}</script>'
        )
    price = {
        "a": f'<div class="price-now">{words.price}</div>',
        "b": f'<p class="product-price"><span class="value">{words.price}</span></p>',
        "c": f'<div><strong class="amount">{words.price}</strong></div>',
    }[layout]
    head = {
        "a": f'<div class="product-header"><h1>{words.name}</h1></div>',
        "b": f'<h1 class="product-name">{words.name}</h1>',
        "c": f'<header class="entry-header"><h1>{words.name}</h1></header>',
    }[layout]
    html = (
        f'<!DOCTYPE html><html lang="{lang_code}"><head><meta charset="utf-8">'
        f"<title>{words.name} | Brisa Home</title>{ld}</head><body>"
        '<header><a href="/">Brisa Home</a><nav><a href="/c/kitchen">Kitchen</a>'
        '<a href="/c/coffee">Coffee</a></nav></header>'
        f'<main><div class="product">{head}{gallery}{price}{buy_area}{code_block}'
        "<div class=\"description\"><p>Brews up to twelve cups; a timer starts it before "
        "you wake.</p></div></div>"
        f"{_shop_cards(words)}</main><footer><a href=\"/help\">Help</a></footer></body></html>"
    )
    return url, html


def button(words: ShopWords, layout: str) -> str:
    """The enabled buy control of a layout."""
    return {
        "a": f'<form action="/cart/add" method="post"><button type="submit">{words.buy}</button>'
        "</form>",
        "b": f'<button class="btn btn-primary" type="button">{words.buy}</button>',
        "c": f'<a class="button" href="/cart?add=brisa" role="button">{words.buy}</a>',
    }[layout]


def channel_buy_area(lang_code: str, layout: str) -> str:
    """A channel that sells the product, others that do not, and the buy control."""
    w = SHOP_WORDS[lang_code]
    if layout == "a":
        return (
            '<div class="fulfillment"><div class="option"><p>' + w.ship + "</p></div>"
            '<div class="option"><p>' + w.pickup_out + "</p></div></div>" + button(w, layout)
        )
    if layout == "b":  # the channels in stock elements
        return (
            '<ul class="fulfillment-options"><li class="availability">' + w.pickup_out + "</li>"
            '<li class="availability">' + w.ship + "</li></ul>" + button(w, layout)
        )
    return (
        f"<p>{w.delivery_out}</p><p>{w.ship}</p><p>{w.pickup_out}</p>" + button(w, layout)
    )


def image_gallery(lang_code: str, layout: str) -> str:
    """A gallery whose placeholder says there is no image (in the page's language)."""
    w = SHOP_WORDS[lang_code]
    return {
        "a": f'<div class="gallery"><div class="placeholder">{w.image_out}</div></div>',
        "b": f'<figure class="media"><img src="{HOST}/static/none.png" alt="">'
        f"<figcaption>{w.image_out}</figcaption></figure>",
        "c": f'<div class="images"><p><span>{w.image_out}</span></p></div>',
    }[layout]
