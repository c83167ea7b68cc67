"""Exchanges: the currency their quotes are in and the zone their clocks keep.

A quote page that names its exchange (``NASDAQ``, ``Xetra``, ``Euronext Paris``,
``東証``) but prints a bare ``$`` or a time without a zone is read with the
exchange's currency and zone; a symbol with an exchange suffix (``SAP.DE``,
``7203.T``, ``VOD.L``, ``AAPL.US``: the suffixes of data vendors and CSV quote
endpoints) says the same. Only the exchange's home currency: an instrument
quoted in another currency there says so on its page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Market:
    currency: str
    zone: str


_USA = Market("USD", "America/New_York")
_DE = Market("EUR", "Europe/Berlin")
_FR = Market("EUR", "Europe/Paris")
_NL = Market("EUR", "Europe/Amsterdam")
_ES = Market("EUR", "Europe/Madrid")
_IT = Market("EUR", "Europe/Rome")
_UK = Market("GBP", "Europe/London")
_CH = Market("CHF", "Europe/Zurich")
_JP = Market("JPY", "Asia/Tokyo")
_HK = Market("HKD", "Asia/Hong_Kong")
_CN = Market("CNY", "Asia/Shanghai")
_KR = Market("KRW", "Asia/Seoul")
_IN = Market("INR", "Asia/Kolkata")
_CA = Market("CAD", "America/Toronto")
_AU = Market("AUD", "Australia/Sydney")
_BR = Market("BRL", "America/Sao_Paulo")
_MX = Market("MXN", "America/Mexico_City")
_SE = Market("SEK", "Europe/Stockholm")
_NO = Market("NOK", "Europe/Oslo")
_DK = Market("DKK", "Europe/Copenhagen")
_PL = Market("PLN", "Europe/Warsaw")

# names as pages print them (compared without case, spaces and punctuation)
_EXCHANGES: dict[str, Market] = {
    **dict.fromkeys(
        "nasdaq nasdaqgs nasdaqgm nasdaqcm nyse nysearca nyseamerican amex arca bats cboe "
        "otc otcmarkets nms ngm ncm pcx xnas xnys".split(), _USA),
    **dict.fromkeys(
        "xetra xetr frankfurt fra boersefrankfurt borsefrankfurt tradegate stuttgart "
        "munchen muenchen hamburg dusseldorf berlin ger xfra ete etr".split(), _DE),
    **dict.fromkeys("euronextparis paris epa xpar euronext".split(), _FR),
    **dict.fromkeys("euronextamsterdam amsterdam ams xams aex".split(), _NL),
    **dict.fromkeys("bme madrid bolsademadrid mce xmad sibe".split(), _ES),
    **dict.fromkeys("borsaitaliana milano milan mil bit xmil mta".split(), _IT),
    **dict.fromkeys("lse londonstockexchange london lon xlon".split(), _UK),
    **dict.fromkeys("six sixswissexchange swx zurich xswx vtx".split(), _CH),
    **dict.fromkeys(
        "tse tokyo tyo jpx tokyostockexchange xtks 東証 東証プライム 東京証券取引所".split(), _JP
    ),
    **dict.fromkeys("hkex hkg hongkong sehk xhkg 港交所".split(), _HK),
    **dict.fromkeys("sse szse shanghai shenzhen 上交所 深交所".split(), _CN),
    **dict.fromkeys("krx kospi kosdaq xkrx".split(), _KR),
    **dict.fromkeys("nse bse nseindia xnse xbom".split(), _IN),
    **dict.fromkeys("tsx tsxv toronto xtse".split(), _CA),
    **dict.fromkeys("asx xasx".split(), _AU),
    **dict.fromkeys("b3 bovespa bvmf".split(), _BR),
    **dict.fromkeys("bmv xmex bolsamexicana".split(), _MX),
    **dict.fromkeys("nasdaqstockholm stockholm sto xsto".split(), _SE),
    **dict.fromkeys("oslo osloborse osl xosl".split(), _NO),
    **dict.fromkeys("copenhagen nasdaqcopenhagen cph xcse".split(), _DK),
    **dict.fromkeys("gpw wse warsaw xwar".split(), _PL),
}
# data vendors' symbol suffixes (SAP.DE, 7203.T, VOD.L, ACME.US)
_SUFFIXES: dict[str, Market] = {
    "US": _USA, "DE": _DE, "F": _DE, "XETRA": _DE, "PA": _FR, "FR": _FR, "AS": _NL, "NL": _NL,
    "MC": _ES, "ES": _ES, "MI": _IT, "IT": _IT, "L": _UK, "UK": _UK, "SW": _CH, "CH": _CH,
    "T": _JP, "JP": _JP, "HK": _HK, "SS": _CN, "SZ": _CN, "KS": _KR, "KQ": _KR, "NS": _IN,
    "BO": _IN, "TO": _CA, "V": _CA, "AX": _AU, "SA": _BR, "MX": _MX, "ST": _SE, "OL": _NO,
    "CO": _DK, "WA": _PL,
}
_KEY = re.compile(r"[\W_]+")
EXCHANGE_WORDS = re.compile(
    r"(?<![\w])(NASDAQ(?:GS|GM|CM)?|NYSE(?: ?Arca| American)?|AMEX|Xetra|XETRA|"
    r"Euronext(?: Paris| Amsterdam)?|Börse Frankfurt|Frankfurt|Tradegate|LSE|"
    r"London Stock Exchange|SIX(?: Swiss Exchange)?|TSE|TSX|ASX|HKEX|BME|Bolsa de Madrid|"
    r"Borsa Italiana|B3|BMV|KRX|NSE|BSE|GPW|東証(?:プライム)?|東京証券取引所)(?!\w)"
)


def market_of_exchange(name: str | None) -> Market | None:
    if not name:
        return None
    return _EXCHANGES.get(_KEY.sub("", name.casefold()))


def market_of_symbol(symbol: str | None) -> Market | None:
    """The market a symbol's exchange suffix names (``SAP.DE``), or None."""
    if not symbol or "." not in symbol:
        return None
    return _SUFFIXES.get(symbol.rsplit(".", 1)[1].upper())


def exchange_in_text(text: str) -> str | None:
    """The first exchange a text names (a page's header line), or None."""
    match = EXCHANGE_WORDS.search(text)
    return match.group(1) if match else None
