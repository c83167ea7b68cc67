"""Quote pages whose current price sits beside other prices: the current price, or none.

Generated pages, written from a description of each class of page (no real page): the
same value shown twice, a header price beside range markers, snapshot blocks, tables
and ticker strips, portal headers "Name (EXCHANGE: SYMBOL) price change %change" with a
quick-stats or details table, a fund's NAV per share and its date, numbers written
with several units, and labels that name the current price among labels of other
prices (previous close, open, high, low, a past date's close), in English, Japanese,
Korean, Indian English, German, French and Brazilian Portuguese.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from crawler.extraction.quotes import extract_quotes_from_text
from crawler.extraction.quotes.numbers import COMMA, DOT, parse_number
from crawler.schema import validation_errors

FETCHED = dt.datetime(2025, 3, 12, 22, 0, tzinfo=dt.UTC)


def cases(group: list[tuple]) -> list:
    """A group's pages as pytest parameters (html, url, expected), named by their layout."""
    return [pytest.param(*case[1:], id=case[0]) for case in group]


def quote_of(html: str, url: str) -> dict:
    quote, reason = read(html, url)
    assert reason is None and quote is not None
    return quote


def read(html: str, url: str) -> tuple[dict | None, str | None]:
    result = extract_quotes_from_text(html, url, fetched=FETCHED)
    assert result.errors == []
    if result.quotes:
        (quote,) = result.quotes
        assert validation_errors(quote, "quote") == [], validation_errors(quote, "quote")
        return quote, None
    return None, result.rejected


# --- the same value twice, rounded or written differently: one price, the more precise
SAME_VALUE = [
    (
        "en-table-rounds",
        """<html lang="en-US"><head><title>Acme Corp (ACME)</title></head><body>
<h1>Acme Corp (ACME)</h1><div class="price">$187.44</div><div>+1.23 (+0.66%)</div>
<table><tr><th>Last</th><td>187.4</td></tr><tr><th>Previous Close</th><td>186.21</td></tr>
<tr><th>Open</th><td>186.50</td></tr></table></body></html>""",
        "https://quotes.example/quote/ACME",
        Decimal("187.44"),
    ),
    (
        "ja-two-labels",
        """<html lang="ja"><body><h1>トヨタ自動車 (7203)</h1>
<p>現在値 2,890.5円</p><p>前日終値 2,850円</p>
<table><tr><th>株価</th><td>2,891</td></tr><tr><th>始値</th><td>2,860</td></tr></table>
</body></html>""",
        "https://kabu.example/stocks/7203",
        Decimal("2890.5"),
    ),
    (
        "fr-two-elements",
        """<html lang="fr-FR"><body><h1>Lumière SA (LUM)</h1>
<div><span class="cours">45,125 €</span></div><div><span class="cours-abrege">45,13</span></div>
<dl><dt>Clôture veille</dt><dd>44,90 €</dd><dt>Ouverture</dt><dd>45,00 €</dd></dl>
</body></html>""",
        "https://bourse.example/cours/LUM",
        Decimal("45.125"),
    ),
]


# --- a price beside the name and symbol, and different numbers elsewhere
HEADER_PRICE = [
    (
        "ko-range-marker",
        """<html lang="ko-KR"><body><h1>삼성전자 (005930)</h1>
<div class="price">71,500원</div><div>▲ 1,200 (+1.71%)</div>
<div class="day-range"><span>저가 70,100</span><div class="bar">
<span class="price-marker">71,200</span></div><span>고가 72,000</span></div>
<dl><dt>전일종가</dt><dd>70,300</dd><dt>시가</dt><dd>70,500</dd>
</dl></body></html>""",
        "https://stock.example/item/005930",
        ("005930", Decimal("71500"), "KRW"),
    ),
    (
        "fr-snapshot-values-before-labels",
        """<html lang="fr-FR"><body><h1>Lumière SA (LUM)</h1>
<div class="last">45,12 €</div><div>+0,22 (+0,49 %)</div>
<div class="snapshot"><span>44,90</span><span>Clôture veille</span><span>45,00</span>
<span>Ouverture</span><span>45,40</span><span>Dernier</span><span>44,80</span>
<span>+ Bas</span></div>
</body></html>""",
        "https://bourse.example/cours/LUM",
        ("LUM", Decimal("45.12"), "EUR"),
    ),
    (
        "en-ticker-strip-of-indices",
        """<html lang="en-US"><body><div class="ticker"><span class="last">38,512.10</span>
<span class="last">5,123.40</span></div>
<h1>Acme Corp (NASDAQ: ACME)</h1><div class="last">$187.44</div><div>+1.23 (+0.66%)</div>
<table><tr><th>Previous Close</th><td>186.21</td></tr><tr><th>Day's Range</th>
<td>185.00 - 189.20</td></tr></table></body></html>""",
        "https://quotes.example/quote/ACME",
        ("ACME", Decimal("187.44"), "USD"),
    ),
    (
        "pt-table-of-the-day",
        """<html lang="pt-BR"><body><h1>Petro Norte ON (PTNO3)</h1>
<div class="cotacao">R$ 38,45</div><div>+0,35 (+0,92%)</div>
<table><tr><th>Último</th><td>38,40</td></tr><tr><th>Abertura</th><td>38,10</td></tr>
<tr><th>Máxima</th><td>38,90</td></tr><tr><th>Mínima</th><td>37,95</td></tr></table>
</body></html>""",
        "https://acoes.example/acao/PTNO3",
        ("PTNO3", Decimal("38.45"), "BRL"),
    ),
]


@pytest.mark.parametrize(("html", "url", "expected"), cases(HEADER_PRICE))
def test_the_price_beside_the_name_and_symbol_wins(html, url, expected):
    quote = quote_of(html, url)
    assert (quote["symbol"], quote["price"], quote["currency"]) == expected


# --- portal headers "Name (EXCHANGE: SYMBOL) price change %change" and their tables
PORTAL = [
    (
        "en-quick-stats",
        """<html lang="en"><body><div id="hdr"><h1>Acme Corp (NYSE: ACM)</h1>
<span>45.67</span> <span>+0.12</span> <span>+0.26%</span></div>
<h3>Quick stats</h3><table><tr><td>Latest price</td><td>45.67</td></tr>
<tr><td>Change</td><td>+0.12</td></tr><tr><td>% Change</td><td>+0.26%</td></tr>
<tr><td>Volume</td><td>1,234,567</td></tr>
<tr><td>Last price update</td><td>Mar 12, 2025 4:00 PM EDT</td></tr></table></body></html>""",
        "https://portal.example/finance/q?id=123",
        {"symbol": "ACM", "exchange": "NYSE", "price": Decimal("45.67"),
         "change": Decimal("0.12"), "change_percent": Decimal("0.26"), "volume": 1234567,
         "currency": "USD", "as_of": "2025-03-12T16:00:00-04:00"},
    ),
    (
        "en-one-line-header-and-value-column",
        """<html lang="en"><body><div class="title">Borealis Mining (TSX: BMC) 12.34 -0.56 -4.34%
</div><table><tr><th>Details</th><th>Value ($)</th></tr><tr><td>Last</td><td>12.34</td></tr>
<tr><td>Open</td><td>12.80</td></tr><tr><td>Previous close</td><td>12.90</td></tr>
<tr><td>Volume</td><td>98,765</td></tr></table></body></html>""",
        "https://portal.example/stocks/detail?n=9",
        {"symbol": "BMC", "exchange": "TSX", "price": Decimal("12.34"),
         "change": Decimal("-0.56"), "change_percent": Decimal("-4.34"), "volume": 98765,
         "currency": "CAD"},
    ),
    (
        "en-in-header-and-quick-stats",
        """<html lang="en-IN"><body><h2>Ganga Textiles Ltd (NSE: GANGATEX) 1,245.60 +12.40 +1.01%
</h2><div>Quick stats</div><dl><dt>Latest price</dt><dd>1,245.60</dd><dt>Change</dt>
<dd>+12.40</dd><dt>% Change</dt><dd>+1.01%</dd><dt>Prev. Close</dt><dd>1,233.20</dd></dl>
</body></html>""",
        "https://portal.example/in/q?c=77",
        {"symbol": "GANGATEX", "exchange": "NSE", "price": Decimal("1245.60"),
         "change": Decimal("12.40"), "change_percent": Decimal("1.01"), "currency": "INR",
         "previous_close": Decimal("1233.20")},
    ),
    (
        "de-header-and-table",
        """<html lang="de-DE"><body><h1>Nordwind AG (XETRA: NWD) 23,45 +0,15 +0,64 %</h1>
<table><tr><th>Kennzahl</th><th>Wert (EUR)</th></tr><tr><td>Letzter Kurs</td><td>23,45</td></tr>
<tr><td>Vortag</td><td>23,30</td></tr><tr><td>Volumen</td><td>45.678</td></tr></table>
</body></html>""",
        "https://portal.example/de/q?i=5",
        {"symbol": "NWD", "exchange": "XETRA", "price": Decimal("23.45"),
         "change": Decimal("0.15"), "currency": "EUR", "volume": 45678},
    ),
]


@pytest.mark.parametrize(("html", "url", "expected"), cases(PORTAL))
def test_a_portal_header_and_its_table(html, url, expected):
    quote = quote_of(html, url)
    assert {field: quote.get(field) for field in expected} == expected


# --- a fund: its NAV per share is its price, the date chosen in a list its as_of
FUNDS = [
    (
        "en-nav-table-date-select",
        """<html lang="en-US"><body><h1>Evergreen Growth Fund (EVGFX)</h1>
<form><label>Date</label><select name="d"><option>03/10/2025</option>
<option selected>03/11/2025</option><option>03/07/2025</option></select></form>
<table><tr><th>NAV per share</th><td>$24.18</td></tr><tr><th>Previous NAV</th><td>$24.02</td></tr>
<tr><th>Total net assets</th><td>$1.2B</td></tr></table></body></html>""",
        "https://funds.example/fund/EVGFX",
        (Decimal("24.18"), "USD", "2025-03-11"),
    ),
    (
        "en-in-nav-as-on",
        """<html lang="en-IN"><body><h1>Himalaya Bluechip Fund - Direct Growth (HBFDG)</h1>
<div class="nav-box"><div>NAV as on <select id="navDate"><option>11-Mar-2025</option>
<option selected="selected">10-Mar-2025</option></select></div>
<dl><dt>NAV (₹)</dt><dd>58.4321</dd><dt>1D change</dt><dd>+0.21%</dd></dl></div>
</body></html>""",
        "https://mf.example/scheme/HBFDG",
        (Decimal("58.4321"), "INR", "2025-03-10"),
    ),
    (
        "ja-kijun-kagaku",
        """<html lang="ja"><body><h1>さくら日本株ファンド (0331A12B)</h1>
<ul class="dates"><li>2025/03/12</li><li class="selected">2025/03/11</li><li>2025/03/10</li></ul>
<table><tr><th>基準価額</th><td>12,345円</td></tr><tr><th>前日比</th><td>+45円</td></tr>
<tr><th>純資産総額</th><td>123.4億円</td></tr></table></body></html>""",
        "https://fund.example/jp/0331A12B",
        (Decimal("12345"), "JPY", "2025-03-11"),
    ),
]


@pytest.mark.parametrize(("html", "url", "expected"), cases(FUNDS))
def test_a_funds_nav_per_share_is_its_price(html, url, expected):
    quote = quote_of(html, url)
    price, currency, day = expected
    assert (quote["price"], quote["currency"]) == (price, currency)
    assert quote["as_of"][:10] == day and quote["provenance"]["as_of"] != "fetch"


# --- numbers written with several units, read whole
@pytest.mark.parametrize(
    ("text", "style", "value"),
    [
        ("2兆3,456億円", DOT, Decimal("2345600000000")),
        ("2兆3456億5000万円", DOT, Decimal("2345650000000")),
        ("3조 4,567억원", DOT, Decimal("3456700000000")),
        ("1,24,087 Cr", DOT, Decimal("1240870000000")),
        ("₹1,24,087.50 Cr", DOT, Decimal("1240875000000")),
        ("12,5 Mrd.", COMMA, Decimal("12500000000")),
        ("5億", DOT, Decimal("500000000")),
    ],
)
def test_numbers_with_several_units_read_whole(text, style, value):
    assert parse_number(text, style) == value


UNITS = [
    (
        "ja-cho-oku",
        """<html lang="ja"><body><h1>トヨタ自動車 (7203)</h1><div class="price">2,890.5円</div>
<dl><dt>時価総額</dt><dd>47兆1,234億円</dd><dt>前日終値</dt><dd>2,850円</dd></dl></body></html>""",
        "https://kabu.example/stocks/7203",
        Decimal("47123400000000"),
    ),
    (
        "ko-jo-eok",
        """<html lang="ko-KR"><body><h1>삼성전자 (005930)</h1><div class="price">71,500원</div>
<table><tr><th>시가총액</th><td>426조 8,356억원</td></tr><tr><th>전일종가</th><td>70,300</td></tr>
</table></body></html>""",
        "https://stock.example/item/005930",
        Decimal("426835600000000"),
    ),
    (
        "en-in-crore",
        """<html lang="en-IN"><body><h1>Ganga Textiles Ltd (GANGATEX)</h1>
<div class="price">₹1,245.60</div><table><tr><td>Market Cap</td><td>₹1,24,087 Cr</td></tr>
<tr><td>Prev. Close</td><td>1,233.20</td></tr></table></body></html>""",
        "https://markets.example/in/GANGATEX",
        Decimal("1240870000000"),
    ),
    (
        "de-milliarden",
        """<html lang="de-DE"><body><h1>Nordwind AG (NWD)</h1><div class="kurs">23,45 €</div>
<dl><dt>Marktkapitalisierung</dt><dd>12,5 Mrd. €</dd><dt>Vortag</dt><dd>23,30 €</dd></dl>
</body></html>""",
        "https://boerse.example/aktie/NWD",
        Decimal("12500000000"),
    ),
    (
        "en-in-crore-in-the-label",
        """<html lang="en-IN"><body><h1>Ganga Textiles Ltd (GANGATEX)</h1>
<div class="price">₹1,245.60</div><table><tr><td>Market Cap (Rs. Cr.)</td><td>1,24,087</td></tr>
<tr><td>Prev. Close</td><td>1,233.20</td></tr></table></body></html>""",
        "https://markets.example/in/GANGATEX",
        Decimal("1240870000000"),
    ),
    (
        "ja-million-yen-in-the-label",
        """<html lang="ja"><body><h1>トヨタ自動車 (7203)</h1><div class="price">2,890.5円</div>
<dl><dt>時価総額(百万円)</dt><dd>47,123,400</dd><dt>前日終値</dt><dd>2,850円</dd></dl>
</body></html>""",
        "https://kabu.example/stocks/7203",
        Decimal("47123400000000"),
    ),
]


@pytest.mark.parametrize(
    ("field", "html", "url", "value"),
    [pytest.param("price", *case[1:], id=case[0]) for case in SAME_VALUE]
    + [pytest.param("market_cap", *case[1:], id=case[0]) for case in UNITS],
)
def test_a_value_read_whole(field, html, url, value):
    """The same price twice, rounded or written differently: the more precise; a market
    cap written in several units, or with its unit in the label: all of it."""
    assert quote_of(html, url)[field] == value


# --- labels: only one that names the current price gives the price
CURRENT_LABEL = [
    (
        "ja-genzaine-among-others",
        """<html lang="ja"><body><h1>ソニーグループ (6758)</h1>
<dl><dt>前日終値</dt><dd>3,120円</dd><dt>始値</dt><dd>3,130円</dd><dt>高値</dt><dd>3,180円</dd>
<dt>安値</dt><dd>3,110円</dd><dt>現在値</dt><dd>3,155円</dd></dl></body></html>""",
        "https://kabu.example/stocks/6758",
        ("6758", Decimal("3155"), "JPY"),
    ),
    (
        "ko-hyeonjaega-after-close",
        """<html lang="ko-KR"><body><h1>카카오 (035720)</h1><ul>
<li><span>전일</span><strong>41,200</strong></li><li><span>종가(03/11)</span><strong>41,200</strong></li>
<li><span>시가</span><strong>41,300</strong></li><li><span>현재가</span><strong>41,850</strong></li>
<li><span>고가</span><strong>42,000</strong></li></ul></body></html>""",
        "https://stock.example/item/035720",
        ("035720", Decimal("41850"), "KRW"),
    ),
    (
        "en-in-ltp",
        """<html lang="en-IN"><body><h1>Ganga Textiles Ltd (GANGATEX)</h1>
<div><span>Prev. Close</span> <b>1,233.20</b></div><div><span>Open</span> <b>1,236.00</b></div>
<div><span>LTP</span> <b>1,245.60</b></div><div><span>High</span> <b>1,250.00</b></div>
</body></html>""",
        "https://markets.example/in/GANGATEX",
        ("GANGATEX", Decimal("1245.60"), "INR"),
    ),
    (
        "hi-ltp",
        """<html lang="hi-IN"><body><h1>गंगा टेक्सटाइल्स (GANGATEX)</h1>
<table><tr><th>पिछला बंद</th><td>₹1,233.20</td></tr><tr><th>खुला</th><td>₹1,236.00</td></tr>
<tr><th>एलटीपी</th><td>₹1,245.60</td></tr></table></body></html>""",
        "https://markets.example/hi/GANGATEX",
        ("GANGATEX", Decimal("1245.60"), "INR"),
    ),
    (
        "de-aktuell",
        """<html lang="de-DE"><body><h1>Nordwind AG (NWD)</h1><table>
<tr><td>Schluss Vortag</td><td>23,30 €</td></tr><tr><td>Eröffnung</td><td>23,35 €</td></tr>
<tr><td>Aktuell</td><td>23,45 €</td></tr><tr><td>Tageshoch</td><td>23,60 €</td></tr>
<tr><td>Geld</td><td>23,44 €</td></tr><tr><td>Brief</td><td>23,46 €</td></tr></table>
</body></html>""",
        "https://boerse.example/aktie/NWD",
        ("NWD", Decimal("23.45"), "EUR"),
    ),
    (
        "fr-dernier",
        """<html lang="fr-FR"><body><h1>Lumière SA (LUM)</h1><ul>
<li>Clôture veille : 44,90 €</li><li>Ouverture : 45,00 €</li><li>+ Haut : 45,40 €</li>
<li>+ Bas : 44,80 €</li><li>Dernier : 45,12 €</li></ul></body></html>""",
        "https://bourse.example/cours/LUM",
        ("LUM", Decimal("45.12"), "EUR"),
    ),
    (
        "pt-cotacao",
        """<html lang="pt-BR"><body><h1>Petro Norte ON (PTNO3)</h1><table>
<tr><td>Fechamento anterior</td><td>R$ 38,10</td></tr><tr><td>Abertura</td><td>R$ 38,15</td></tr>
<tr><td>Máxima</td><td>R$ 38,90</td></tr><tr><td>Mínima</td><td>R$ 37,95</td></tr>
<tr><td>Cotação</td><td>R$ 38,45</td></tr></table></body></html>""",
        "https://acoes.example/acao/PTNO3",
        ("PTNO3", Decimal("38.45"), "BRL"),
    ),
    (
        "en-etf-market-price-and-nav",
        """<html lang="en-US"><body><h1>Acme Total Market ETF (ACMX)</h1><table>
<tr><th>Last</th><td>187.44</td></tr><tr><th>NAV</th><td>187.10</td></tr>
<tr><th>Previous Close</th><td>186.21</td></tr></table></body></html>""",
        "https://quotes.example/etf/ACMX",
        ("ACMX", Decimal("187.44"), "USD"),
    ),
    (
        "en-elements-named-for-other-prices",
        """<html lang="en-US"><body><h1>Acme Corp (ACME)</h1>
<div class="price-prev-close">186.21</div><div class="price-high">189.20</div>
<div class="price-current">187.44</div><div class="price-low">185.00</div></body></html>""",
        "https://quotes.example/quote/ACME",
        ("ACME", Decimal("187.44"), "USD"),
    ),
]


@pytest.mark.parametrize(("html", "url", "expected"), cases(CURRENT_LABEL))
def test_only_a_label_of_the_current_price_gives_the_price(html, url, expected):
    quote = quote_of(html, url)
    assert (quote["symbol"], quote["price"], quote["currency"]) == expected


# --- no current price told apart from the others: no quote, and the reason
NO_CURRENT = [
    (
        "ko-only-previous-and-range",
        """<html lang="ko-KR"><body><h1>카카오 (035720)</h1><ul>
<li><span>전일</span><strong>41,200</strong></li><li><span>시가</span><strong>41,300</strong></li>
<li><span>고가</span><strong>42,000</strong></li><li><span>저가</span><strong>41,100</strong></li>
</ul></body></html>""",
        "https://stock.example/item/035720",
        "no_price",
    ),
    (
        "pt-past-dates-closes",
        """<html lang="pt-BR"><body><h1>Petro Norte ON (PTNO3)</h1><table>
<tr><td>Fechamento (11/03/2025)</td><td>38,10</td></tr>
<tr><td>Abertura</td><td>38,15</td></tr></table></body></html>""",
        "https://acoes.example/acao/PTNO3",
        "no_price",
    ),
    (
        "en-snapshot-values-before-labels-only",
        """<html lang="en-US"><body><h1>Acme Corp (ACME)</h1>
<div class="snapshot"><span>186.21</span><span>Previous close</span><span>186.50</span>
<span>Open</span><span>189.20</span><span>High</span></div></body></html>""",
        "https://quotes.example/quote/ACME",
        "no_price",
    ),
    (
        "ja-bid-ask-only",
        """<html lang="ja"><body><h1>ソニーグループ (6758)</h1>
<div><span>3,150円</span> <span>3,160円</span></div>
<dl><dt>売気配</dt><dd>3,160円</dd><dt>買気配</dt><dd>3,150円</dd></dl></body></html>""",
        "https://kabu.example/stocks/6758",
        "conflicting_prices",
    ),
    (
        "ko-labels-the-vocabulary-does-not-know",
        """<html lang="ko-KR"><body><h1>카카오 (035720)</h1><ul>
<li><span>상한가</span><strong>53,500</strong></li><li><span>하한가</span><strong>28,900</strong></li>
</ul></body></html>""",
        "https://stock.example/item/035720",
        "no_price",
    ),
    (
        "de-two-bare-prices-beside-the-name",
        """<html lang="de-DE"><body><h1>Nordwind AG (NWD)</h1>
<div><span class="kurs">23,45 €</span></div><div><span class="kurs">24,10 €</span></div>
</body></html>""",
        "https://boerse.example/aktie/NWD",
        "conflicting_prices",
    ),
]


@pytest.mark.parametrize(("html", "url", "reason"), cases(NO_CURRENT))
def test_no_current_price_told_apart_gives_no_quote(html, url, reason):
    quote, rejected = read(html, url)
    assert quote is None and rejected == reason
