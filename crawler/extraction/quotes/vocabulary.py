"""What quote pages call each field: labels in several languages, JSON keys, element names.

:func:`field_of_label` reads a label as a page shows it (``"Previous Close"``,
``"Vorheriger Schluss"``, ``"Clôture veille"``, ``"前日終値"``, ``"Volume:"``,
``"Marktkap. (EUR)"``) and says which field its value is, or None. Labels are
compared once normalised (:func:`label_key`): case, accents, punctuation and
white space ignored, a parenthesised part dropped (a currency code in it is
returned as a hint), ``%`` kept as a word at the end. The class of pages each
entry serves: quote pages of English, German, French, Spanish, Italian,
Portuguese, Dutch, Swedish, Polish, Russian, Japanese, Chinese and Korean sites.

Two pseudo-fields: ``day_range`` (``"185.00 - 189.20"``: low and high) and
``close`` (a closing price: the price when nothing better says it).

:func:`field_of_key` does the same for the keys of JSON (structured data,
embedded state, JSON endpoints, CSV headers): ``regularMarketPrice``,
``last_price``, ``prevClose``...; :func:`field_of_tokens` for the words of an
element's ``class``, ``id``, ``itemprop`` and ``data-*`` names
(``current-price``, ``instrument-price-last``, ``data-field="regularMarketVolume"``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from crawler.extraction.normalize.currency import ISO_CURRENCIES

_LABELS: dict[str, tuple[str, ...]] = {
    "price": (
        "price", "last", "last price", "last trade", "last sale", "current price", "share price",
        "stock price", "quote", "last quote", "kurs", "aktueller kurs", "letzter kurs", "letzter",
        "letzter preis", "preis", "aktienkurs", "cours", "dernier cours", "dernier", "prix",
        "cours actuel", "dernier prix", "precio", "ultimo", "ultimo precio", "precio actual",
        "cotizacion", "ultima cotizacion", "prezzo", "ultimo prezzo", "prezzo attuale",
        "quotazione", "preco", "cotacao", "ultimo preco", "preco atual", "koers",
        "laatste koers", "huidige koers", "senaste", "senast", "senaste kurs", "kurs aktualny",
        "ostatnia cena", "cena", "ostatni kurs", "цена", "последняя цена", "текущая цена",
        "現在値", "株価", "現在の株価", "最新价", "现价", "当前价", "最新價", "現價", "현재가",
        # the current price as more pages name it: "Latest price" (portals' quick stats),
        # LTP (Indian pages, English and Hindi), "Aktuell", "Cotação atual"
        "latest price", "latest", "current", "now", "price now", "ltp", "last traded price",
        "last trade price", "एलटीपी", "अंतिम कारोबार मूल्य", "वर्तमान मूल्य", "aktuell",
        "aktueller preis", "cotacao atual", "valor atual", "preco atual", "ultima cotacao",
        "현재", "주가",
    ),
    # a fund's net asset value per share (unit): its price when the page shows no other
    # (an exchange-traded fund's page shows both, its market price is the quote's)
    "nav": (
        "nav", "nav per share", "nav per unit", "net asset value", "net asset value per share",
        "latest nav", "nav price", "基準価額", "valeur liquidative", "valor da cota",
        "valor da quota", "rucknahmepreis", "anteilspreis", "anteilwert", "nettoinventarwert",
    ),
    "close": ("close", "closing price", "schluss", "schlusskurs", "cloture", "cierre", "chiusura",
              "fechamento", "종가", "slot", "slotkoers", "終値", "收盘", "收盘价"),
    "change": (
        "change", "chg", "net change", "day change", "todays change", "change today",
        "veranderung", "verand", "anderung", "diff", "differenz", "veranderung absolut",
        "variation", "dif", "diferencia",
        "var", "variacion", "cambio", "variazione", "variacao", "verschil", "verandering",
        "forandring", "zmiana", "изменение", "前日比", "涨跌", "涨跌额", "漲跌", "전일대비", "+/-",
    ),
    "change_percent": (
        "change %", "chg %", "percent change", "change percent", "day change %",
        "veranderung %", "veranderung in %", "verand %", "verand in %", "anderung %", "diff %",
        "variation %", "var %", "dif %",
        "variacion %", "cambio %", "variazione %", "var %", "variacao %", "verschil %",
        "forandring %", "zmiana %", "изменение %", "前日比 %", "騰落率", "涨跌幅", "漲跌幅",
        "등락률", "+/- %", "performance %",
    ),
    "previous_close": (
        "previous close", "prev close", "prior close", "previous closing price",
        "close previous", "yesterdays close", "vorheriger schluss", "schluss vortag", "vortag",
        "vortagesschluss", "schlusskurs vortag", "vortageskurs", "cloture precedente",
        "cloture veille", "derniere cloture", "cours de cloture precedent", "cierre anterior",
        "cierre previo", "chiusura precedente", "fechamento anterior", "slot vorige",
        "vorige slot", "foregaende stangning", "poprzednie zamkniecie", "kurs odniesienia",
        "предыдущее закрытие", "前日終値", "昨收", "昨收盘", "前收盘", "전일종가", "전일",
        "전일가", "previous nav", "prior nav", "前日基準価額", "पिछला बंद", "पिछला बंद भाव",
    ),
    "open": (
        "open", "opening price", "open price", "eroffnung", "eroffnungskurs", "ouverture",
        "cours d ouverture", "apertura", "abertura", "opening", "openingskoers", "oppning",
        "otwarcie", "открытие", "始値", "开盘", "今开", "開盤", "시가", "खुला", "खुलने का भाव",
    ),
    "day_low": (
        "low", "day low", "days low", "intraday low", "tagestief", "tief", "plus bas",
        "+ bas", "minimo", "min", "minima", "laag", "dagens lagsta", "najnizszy", "минимум", "安値",
        "最低", "最低价", "저가", "निम्न", "न्यूनतम",
    ),
    "day_high": (
        "high", "day high", "days high", "intraday high", "tageshoch", "hoch", "plus haut",
        "+ haut", "maximo", "max", "maxima", "hoog", "dagens hogsta", "najwyzszy", "максимум",
        "高値", "最高", "最高价", "고가", "उच्च", "अधिकतम",
    ),
    "day_range": (
        "days range", "day range", "daily range", "day s range", "range", "tagesspanne",
        "spanne", "tagesbereich", "spanne tag", "fourchette", "fourchette du jour",
        "variation du jour", "rango del dia", "rango diario", "intervallo giornaliero",
        "range giornaliero", "faixa do dia", "oscilacao do dia", "dagbereik", "dagens intervall",
        "zakres dzienny", "дневной диапазон", "値幅", "日中値幅", "当日范围", "振幅区间",
    ),
    "volume": (
        "volume", "vol", "trading volume", "shares traded", "volumen", "handelsvolumen",
        "umsatz stuck", "stuck", "gehandelte stuck", "volume echange", "titres echanges",
        "volumen negociado", "volume scambiato", "volume negociado", "omzet", "volym",
        "wolumen", "объем", "объём", "出来高", "成交量", "成交量(股)", "거래량",
    ),
    "market_cap": (
        "market cap", "market capitalization", "market capitalisation", "mkt cap",
        "market value", "marktkapitalisierung", "marktkap", "borsenwert", "borsenwert",
        "capitalisation", "capitalisation boursiere", "capi", "capitalizacion",
        "capitalizacion bursatil", "capitalizacion de mercado", "capitalizzazione",
        "capitalizzazione di mercato", "capitalizacao", "valor de mercado",
        "marktkapitalisatie", "borsvarde", "kapitalizacja", "рыночная капитализация",
        "капитализация", "時価総額", "市值", "总市值", "市值(亿)", "시가총액",
    ),
    "symbol": (
        "symbol", "ticker", "ticker symbol", "stock symbol", "trading symbol", "kurzel",
        "symbole", "mnemo", "mnemonique", "simbolo", "ticker", "codigo", "codice",
        "codice alfanumerico", "tickersymbool", "kortnamn", "tiker", "тикер", "銘柄コード",
        "コード", "证券代码", "代码", "股票代码", "종목코드",
    ),
    "name": ("name", "company", "company name", "instrument", "unternehmen", "societe",
             "empresa", "societa", "銘柄名", "名称", "公司名称", "종목명"),
    "exchange": (
        "exchange", "stock exchange", "market", "listed on", "borse", "borsenplatz",
        "handelsplatz", "bourse", "marche", "place de cotation", "bolsa", "mercado", "borsa",
        "mercato", "beurs", "handelsplats", "gielda", "биржа", "市場", "取引所", "交易所", "시장",
    ),
    "currency": (
        "currency", "trading currency", "wahrung", "handelswahrung", "devise", "monnaie",
        "moneda", "divisa", "valuta", "moeda", "waluta", "валюта", "通貨", "货币", "幣別", "통화",
    ),
    "as_of": (
        "as of", "at close", "last update", "last price update", "price update", "nav date",
        "as on", "nav as on", "基準日", "last updated", "updated", "time", "date", "quote time",
        "last trade time", "stand", "zeit", "datum", "uhrzeit", "letzte aktualisierung",
        "heure", "mise a jour", "mis a jour", "mis a jour le", "derniere mise a jour",
        "hora", "fecha", "actualizado", "ultima actualizacion", "ora", "data", "aggiornato",
        "aggiornato al", "ultimo aggiornamento", "atualizado", "atualizado em", "tijd",
        "laatst bijgewerkt", "uppdaterad", "czas", "aktualizacja", "время", "обновлено",
        "時刻", "更新", "更新日時", "时间", "更新时间", "時間", "기준",
    ),
}

_LABEL_FIELD: dict[str, str] = {}


def _strip_accents(text: str) -> str:
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    # combining marks of Latin letters go; CJK and Cyrillic keep theirs (no marks anyway)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_PARENTHESES = re.compile(r"[(\[（][^)\]）]*[)\]）]")
_NOT_WORD = re.compile(r"[^\w%+/\-]+")
_CODE = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
# a date in a label ("Close (11/03/2025)", "終値(3/11)", "Close 11 Mar"): the price of that day
_DATED = re.compile(
    r"\d{1,4}\s?[./\-月]\s?\d{1,2}|\d{1,2}\s?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
    re.I,
)


def label_key(text: str) -> str:
    """A label as :data:`_LABELS` writes it: lower case, no accents, no punctuation, no
    parenthesised part, ``%`` a word at the end ("% Change" -> "change %")."""
    text = _strip_accents(text).casefold().replace("’", "'")
    percent = "%" in text
    text = _PARENTHESES.sub(" ", text)
    text = text.replace("'s ", "s ").replace("'", " ")
    text = _NOT_WORD.sub(" ", text.replace("%", " "))
    words = [word for word in text.split() if word not in ("-", "/")]
    if percent:
        words.append("%")
    return " ".join(words)


for _field, _labels in _LABELS.items():
    for _label in _labels:
        _LABEL_FIELD.setdefault(label_key(_label), _field)

MAX_LABEL_WORDS = max(len(key.split()) for key in _LABEL_FIELD)
# the first word of every label: a text whose first word is none of them holds no label
_FIRST_WORDS = frozenset(key.split()[0] for key in _LABEL_FIELD)


@functools.lru_cache(maxsize=50_000)
def field_of_label(text: str) -> tuple[str | None, str | None]:
    """The field a label names (or None) and the currency code its parentheses name."""
    if not text or len(text) > 60:
        return None, None
    code = None
    for inner in _PARENTHESES.findall(text):
        for found in _CODE.findall(inner):
            if found in ISO_CURRENCIES:
                code = found
    key = label_key(text.strip().rstrip(":：").strip())
    field = _LABEL_FIELD.get(key)
    if field in ("price", "close", "nav") and _DATED.search(text):
        return None, None  # "Fechamento (11/03/2025)", "종가(03/11)": a past date's price
    return field, code


def label_prefix(text: str) -> tuple[str | None, int]:
    """A label at the start of ``text`` ("Volume 52,345,678", "Stand: 12.03."): its field
    and how many characters of ``text`` it takes (a colon included), else (None, 0)."""
    first = label_key(text[:40].split(maxsplit=1)[0]) if text.strip() else ""
    if first.split(" ", 1)[0] not in _FIRST_WORDS:
        return None, 0
    words = list(re.finditer(r"\S+", text[:120]))
    for count in range(min(MAX_LABEL_WORDS + 1, len(words)), 0, -1):
        end = words[count - 1].end()
        field, _ = field_of_label(text[:end])
        if field is not None:
            rest = text[end:]
            skipped = len(rest) - len(rest.lstrip(" :：\u00a0"))
            return field, end + skipped
    return None, 0


# --- JSON keys and element names ------------------------------------------------------
_KEYS: dict[str, tuple[str, ...]] = {
    "symbol": ("symbol", "ticker", "tickersymbol", "tickercode", "stocksymbol", "code"),
    "name": ("name", "shortname", "longname", "companyname", "displayname", "instrumentname",
             "securityname", "issuername"),
    "exchange": ("exchange", "exchangename", "fullexchangename", "exchangecode", "market",
                 "mic", "listingexchange", "venue"),
    "price": ("price", "regularmarketprice", "lastprice", "last", "currentprice", "lasttrade",
              "lasttradeprice", "lastsaleprice", "tradeprice", "quoteprice", "marketprice",
              "latestprice", "kurs", "cours", "value"),
    "close": ("close", "closeprice", "closingprice", "adjclose"),
    "change": ("change", "regularmarketchange", "netchange", "pricechange", "chg", "diff",
               "absolutechange", "changeabsolute", "dayschange", "delta"),
    "change_percent": ("changepercent", "regularmarketchangepercent", "percentchange",
                       "pctchange", "changepct", "changeinpercent", "pricechangepercent",
                       "relativechange", "changerelative", "percent", "pct"),
    "previous_close": ("previousclose", "regularmarketpreviousclose", "prevclose",
                       "priorclose", "previouscloseprice", "lastclose", "referenceprice"),
    "open": ("open", "regularmarketopen", "openprice", "dayopen", "opening"),
    "day_low": ("daylow", "low", "regularmarketdaylow", "lowprice", "intradaylow"),
    "day_high": ("dayhigh", "high", "regularmarketdayhigh", "highprice", "intradayhigh"),
    "volume": ("volume", "regularmarketvolume", "vol", "totalvolume", "dayvolume",
               "sharestraded", "tradedvolume"),
    "market_cap": ("marketcap", "marketcapitalization", "marketcapitalisation", "mktcap",
                   "marketvalue"),
    "currency": ("currency", "pricecurrency", "currencycode", "financialcurrency", "ccy"),
    "as_of": ("asof", "time", "timestamp", "regularmarkettime", "lastupdate", "lastupdated",
              "updatedat", "updated", "datetime", "quotetime", "lasttradetime", "tradetime",
              "date", "lasttradedate"),
}
_KEY_FIELD = {key: field for field, keys in _KEYS.items() for key in keys}


def key_of(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", _strip_accents(name).casefold())


def field_of_key(name: str) -> str | None:
    """The field a JSON key or a CSV column names (``regularMarketPrice`` -> price)."""
    return _KEY_FIELD.get(key_of(name)) or _LABEL_FIELD.get(label_key(name))


# single words of element names that say the field (not "market": markets-nav, market-data)
_TOKEN_FIELDS = {
    "volume": "volume", "vol": "volume", "symbol": "symbol", "ticker": "symbol",
    "currency": "currency", "exchange": "exchange", "marketcap": "market_cap",
    "mktcap": "market_cap",
}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_FOR_QUOTE = frozenset(
    "52 week wk year yr target avg average bid ask strike old was regular_hours after pre "
    "post extended fair nav yield dividend eps ratio pe beta".split()
)


# words of an element's names that say its price is not the current one
_OTHER_PRICES = frozenset(
    "high low open opening close closing prev previous prior yesterday base reference ref "
    "limit upper lower min max".split()
)


def tokens(values: Iterable[str]) -> list[str]:
    """The words of attribute values: split at punctuation and at camelCase."""
    words: list[str] = []
    for value in values:
        for part in re.split(r"[^0-9A-Za-z]+", _CAMEL.sub(" ", value)):
            if part:
                words.append(part.lower())
    return words


@functools.lru_cache(maxsize=20_000)
def field_of_names(names: tuple[str, ...]) -> str | None:
    """:func:`field_of_tokens` of an element's names (class, id...), remembered: pages
    repeat their class names."""
    return field_of_tokens(tokens(names))


def field_of_tokens(words: list[str]) -> str | None:
    """The field an element's names say it holds, or None (``current-price`` -> price,
    ``price-change-percent`` -> change_percent, ``fifty-two-week-high`` -> None)."""
    if not words or len(words) > 12:
        return None
    found = set(words)
    if found & _NOT_FOR_QUOTE or ("fifty" in found and "two" in found):
        return None
    joined = "".join(words)
    for size in (3, 2):  # compounds first: "market cap", "prev close", "change pct"
        for start in range(len(words) - size + 1):
            field = _KEY_FIELD.get("".join(words[start : start + size]))
            if field in ("market_cap", "previous_close", "change_percent", "day_low",
                         "day_high", "as_of", "name"):
                return field
    if found & {"change", "chg", "delta", "diff", "variation", "movement"}:
        if found & {"percent", "pct", "percentage", "perc", "relative"}:
            return "change_percent"
        return "change"
    if found & {"percent", "pct"} and found & {"price", "last"}:
        return "change_percent"
    for word in words:
        if word in _TOKEN_FIELDS:
            return _TOKEN_FIELDS[word]
    other = found & _OTHER_PRICES
    if other:
        # "price-high", "open-price", "close-price", "price-prev": another price, not the
        # current one; the day's high, low and open when the name says only that
        named = {_KEY_FIELD.get(word) for word in other} - {None}
        return named.pop() if len(named) == 1 and named <= {"open", "day_low", "day_high"} \
            else None
    if found & {"price", "last", "quote", "kurs", "cours", "prix", "precio", "prezzo", "preco"}:
        return "price"
    if joined in _KEY_FIELD and _KEY_FIELD[joined] in ("open", "day_low", "day_high"):
        return _KEY_FIELD[joined]
    return None
