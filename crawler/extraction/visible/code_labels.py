"""What a product code's label names (SKU, MPN, GTIN, brand, a shop's own number):
the labels of every language the shops write them in."""

from __future__ import annotations

import re
from functools import lru_cache

_CODE_LABELS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"^(?:gtin(?:-?\d+)?|ean(?:-?13)?|upc(?:-?a)?(?: 14)?|barcode|isbn(?:-?13)?|jan)$"
        ),
        "gtin",
    ),
    (re.compile(r"^(?:código de barras|codigo de barras)$"), "gtin"),
    (
        re.compile(
            r"^(?:mpn|manufacturer part (?:number|no)|manufacturer (?:number|no)|"
            r"(?:mfr|mfg|mfg\.|mfr\.)(?: part)?(?: (?:number|no))?|part (?:number|no)|"
            r"(?:item )?model(?: (?:number|no))?|herstellernummer|modell|modèle|modelo|"
            r"modello|référence fabricant|型號|型号|型番|모델명|모델 ?번호|"
            # issue 42: the model number in the languages of the item-number labels
            r"modellnummer|num[ée]ro (?:du |de )?mod[èe]le|n[úu]mero (?:de |do )?modelo|"
            r"numero (?:di )?modello|modelnummer|numer modelu|modellnummer|"
            r"製品型番|メーカー型番|モデル番号)$"
        ),
        "mpn",
    ),
    (
        re.compile(
            r"^(?:sku|item|item (?:number|no|code|id)|product (?:code|number|no|id|sku)|"
            r"article (?:number|no)|art\.?-?\s?nr|artikelnummer|reference|ref|code|"
            r"style(?: number| no)?|asin|referencia|código|codigo|web id|"
            r"código de producto|artikel-?nr|bestellnummer|artikelcode|productcode|"
            r"r[ée]f[ée]rence|r[ée]f|code (?:produit|article)|codice(?: articolo| prodotto)?|"
            r"cod(?:\.|ice)?(?: produs| produto| prodotto| art\.?| articolo)?|c[óo]digo do produto|"
            r"[šs]ifra(?: proizvoda| izdelka)?|k[óo]d(?: produktu| tovaru)?|"
            r"katalogov[ée] [čc][íi]slo|numer katalogowy|kod produktu|indeks|"
            r"tootekood|kood|tuotekoodi|tuotenumero|artikelnummer|artikelnr|varenummer|"
            r"item no|style no|product sku|"
            # more languages (class: product-code labels of shops in every language)
            r"код(?: товара)?|артикул|арт|ürün kodu|stok kodu|ürün no|"
            r"商品編號|商品编号|商品番号|品番|商品コード|상품번호|상품코드|"
            r"رمز المنتج|كود المنتج|رقم المنتج|מק\"ט|מקט|"
            r"produkta kods|prekės kodas|cikkszám|termékkód|κωδικός(?: προϊόντος)?|"
            r"šifra artikla|kat\. ?č\.|numer produktu|katalognummer|katalog-?nr|"
            r"mã sản phẩm|mã sp|mã hàng|kode produk|kode barang|no\. produk|"
            r"מק[\"״]ט|"
            # issue 29: references and catalogue numbers as more shops label them
            r"ref(?:erence)?\.? ?(?:number|no|nr|code|#)|reference code|"
            r"num[ée]ro d'article|n° d'article|num[ée]ro de r[ée]f[ée]rence|"
            r"r[ée]f[ée]rence (?:produit|article)|c[óo]digo de refer[eê]ncia|"
            r"referencia del producto|refer[êe]ncia|riferimento|referentie|productnummer|"
            r"bestelnummer|kod katalogowy|symbol(?: produktu)?|art\.? ?nr|varenr|"
            r"product id|item id|no\. d'article|"
            # issue 42 (class: a marketplace's item number in a details table or list,
            # in the page's language)
            r"n[úu]mero de (?:art[íi]culo|producto|referencia)|n\.?[º°] de art[íi]culo|"
            r"n[úu]mero do (?:artigo|produto)|numero (?:di )?articolo|numer artykułu|"
            r"numéro de produit|artikelnr\.?|artikel-?nummer|"
            r"貨號|货号|アイテム番号|상품 ?번호)$"
        ),
        "sku",
    ),
    (
        re.compile(r"^(?:brand|manufacturer|marca|marke|marque|hersteller|fabricante|made by)$"),
        "brand",
    ),
]
# Labels that name the shop's own code after a word of the shop's ("eBay item number").
_OWN_CODE_LABEL = re.compile(
    r"^(?:sku|item (?:number|no|code|id)|product (?:code|number|no|id)|article (?:number|no))$"
)
_NOT_SHOP_PREFIX = frozenset(
    {
        "promo", "promotion", "coupon", "voucher", "discount", "gift", "zip", "postal", "post",
        "order", "tracking", "your", "invoice", "reference", "manufacturer", "mfr", "mfg", "vendor",
        "supplier", "model", "part",
    }
)
# "Walmart #", "B&H #": a shop's own number, unless the words name something else.
_SHOP_NUMBER = re.compile(r"^[^\W\d_][\w&'.\-]*(?: [\w&'.\-]+)?$")
_NOT_SHOP_NUMBER = frozenset(
    {
        "order", "phone", "tel", "fax", "account", "invoice", "ticket", "tracking", "case", "room",
        "page", "step", "call", "member", "customer", "card", "zip", "po", "store",
    }
)


@lru_cache(maxsize=4096)
def label_kind(label: str) -> str | None:
    """What a label names: ``sku``, ``shop`` (a shop's "<name> #"), ``mpn``, ``gtin``,
    ``brand``, or None. Remembered per label: a pure function of the string, and the
    labels of a page's rows and of a shop's pages repeat ("SKU:", "Brand")."""
    raw = re.sub(r"\s+", " ", label.strip().lower())
    hashed = bool(re.search(r"#\s*:?\s*$", raw))
    base = re.sub(r"[:#.\s]+$", "", raw)
    for pattern, key in _CODE_LABELS:
        if pattern.match(base):
            return "mpn" if key == "brand" and hashed else key  # "Manufacturer #"
    if hashed and _SHOP_NUMBER.match(base) and base.split()[-1] not in _NOT_SHOP_NUMBER:
        return "shop"
    # "eBay item number", "Our product code": the shop's own code under its name
    words = base.split(" ", 2)
    if 2 <= len(base.split()) <= 4 and words[0] not in _NOT_SHOP_PREFIX:
        if _OWN_CODE_LABEL.match(base.split(" ", 1)[1]):
            return "sku"
    return None
