"""Quote pages read with no configuration, a site profile, the label vocabulary, bad pages."""

from __future__ import annotations

import datetime as dt
import gzip
from decimal import Decimal
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse

from crawler.extraction.profiles import ProfileError, SiteProfile
from crawler.extraction.quotes import REJECTED_REASONS, extract_quotes, extract_quotes_from_text
from crawler.extraction.quotes.times import parse_as_of, zone_named
from crawler.extraction.quotes.vocabulary import field_of_label, field_of_tokens, tokens
from crawler.schema import validation_errors

FETCHED = dt.datetime(2025, 3, 12, 22, 0, tzinfo=dt.UTC)


def quote_of(html: str, url: str = "https://quotes.example/quote/ACME", **kwargs) -> dict:
    result = extract_quotes_from_text(html, url, fetched=FETCHED, **kwargs)
    assert result.errors == []
    assert result.rejected is None, result.rejected
    (quote,) = result.quotes
    assert validation_errors(quote, "quote") == []
    return quote


def rejected(html: str, url: str = "https://quotes.example/quote/ACME") -> str | None:
    result = extract_quotes_from_text(html, url, fetched=FETCHED)
    assert result.quotes == []
    return result.rejected


@pytest.mark.parametrize(
    ("label", "field"),
    [
        ("Previous Close", "previous_close"),
        ("Prev. Close", "previous_close"),
        ("Vorheriger Schluss", "previous_close"),
        ("Schluss Vortag", "previous_close"),
        ("Clôture veille", "previous_close"),
        ("Cierre anterior", "previous_close"),
        ("Chiusura precedente", "previous_close"),
        ("Fechamento anterior", "previous_close"),
        ("前日終値", "previous_close"),
        ("昨收", "previous_close"),
        ("Volume", "volume"),
        ("Volume:", "volume"),
        ("Volumen", "volume"),
        ("Volumen (títulos)", "volume"),
        ("出来高", "volume"),
        ("成交量", "volume"),
        ("Market Cap", "market_cap"),
        ("Marktkapitalisierung", "market_cap"),
        ("Capitalisation boursière", "market_cap"),
        ("時価総額", "market_cap"),
        ("Cours", "price"),
        ("Kurs", "price"),
        ("Last Price", "price"),
        ("Último", "price"),
        ("Prezzo", "price"),
        ("現在値", "price"),
        ("Eröffnung", "open"),
        ("Ouverture", "open"),
        ("Day's Range", "day_range"),
        ("Tagesspanne", "day_range"),
        ("Change", "change"),
        ("% Change", "change_percent"),
        ("Change (%)", "change_percent"),
        ("Var. %", "change_percent"),
        ("Symbol", "symbol"),
        ("Kürzel", "symbol"),
        ("Mnémo", "symbol"),
        ("Código", "symbol"),
        ("Währung", "currency"),
        ("Devise", "currency"),
        ("Börse", "exchange"),
        ("As of", "as_of"),
        ("Stand", "as_of"),
        ("Mis à jour le", "as_of"),
        ("52 Week Range", None),
        ("Bid", None),
        ("Ask", None),
        ("Dividend", None),
    ],
)
def test_the_label_vocabulary_in_several_languages(label, field):
    assert field_of_label(label)[0] == field


def test_a_label_names_its_currency_and_elements_their_field():
    assert field_of_label("Marktkap. (EUR)") == ("market_cap", "EUR")
    assert field_of_tokens(tokens(["current-price"])) == "price"
    assert field_of_tokens(tokens(["regularMarketVolume"])) == "volume"
    assert field_of_tokens(tokens(["price-change-percent"])) == "change_percent"
    assert field_of_tokens(tokens(["instrument-price-last"])) == "price"
    assert field_of_tokens(tokens(["fifty-two-week-high"])) is None
    assert field_of_tokens(tokens(["markets-nav"])) is None


TABLE_PAGE = """<html lang="en-US"><head><title>Acme Corp (ACME) Stock Price</title></head><body>
<h1>Acme Corp (ACME)</h1><div>NASDAQ · Currency in USD</div>
<div><span class="last">$187.44</span> <span>+1.23 (+0.66%)</span></div>
<p>As of Mar 12, 2025 4:00:00 PM EDT</p>
<table><tr><th>Previous Close</th><td>186.21</td><th>Open</th><td>186.50</td></tr>
<tr><th>Day's Range</th><td>185.00 - 189.20</td><th>Volume</th><td>52,345,678</td></tr>
<tr><th>Market Cap</th><td>2.95T</td><th>52 Week Range</th><td>120.00 - 199.00</td></tr></table>
<ul><li><a href="/quote/XYZ">XYZ</a> <span class="last">$12.00</span></li>
<li><a href="/quote/ABC">ABC</a> <span class="last">$13.00</span></li>
<li><a href="/quote/DEF">DEF</a> <span class="last">$14.00</span></li></ul></body></html>"""


def test_a_table_page_in_us_english():
    quote = quote_of(TABLE_PAGE)
    assert quote["symbol"] == "ACME" and quote["name"] == "Acme Corp"
    assert (quote["price"], quote["currency"]) == (Decimal("187.44"), "USD")
    assert (quote["change"], quote["change_percent"]) == (Decimal("1.23"), Decimal("0.66"))
    assert (quote["previous_close"], quote["open"]) == (Decimal("186.21"), Decimal("186.50"))
    assert (quote["day_low"], quote["day_high"]) == (Decimal("185.00"), Decimal("189.20"))
    assert (quote["volume"], quote["market_cap"]) == (52345678, Decimal("2950000000000"))
    assert quote["exchange"] == "NASDAQ"
    assert quote["as_of"] == "2025-03-12T16:00:00-04:00"
    assert quote["provenance"]["previous_close"] == "label"


def test_a_german_definition_list():
    quote = quote_of(
        """<html lang="de-DE"><body><h1>Baum AG Aktie</h1><span>Kürzel: BAUM</span>
<div class="kurs">1.234,56 €</div><div>-12,34 € (-0,99 %)</div><dl>
<dt>Vorheriger Schluss</dt><dd>1.246,90 €</dd><dt>Tagesspanne</dt><dd>1.230,00 – 1.250,10</dd>
<dt>Volumen</dt><dd>1.234.567</dd><dt>Marktkapitalisierung</dt><dd>2,95 Bio. €</dd></dl>
<p>Stand: 12.03.2025 17:35:00 Uhr MEZ</p></body></html>""",
        "https://boerse.example/aktie/baum",
    )
    assert (quote["symbol"], quote["price"], quote["currency"]) == (
        "BAUM",
        Decimal("1234.56"),
        "EUR",
    )
    assert (quote["change"], quote["change_percent"]) == (Decimal("-12.34"), Decimal("-0.99"))
    assert quote["volume"] == 1234567 and quote["market_cap"] == Decimal("2950000000000")
    assert quote["as_of"] == "2025-03-12T17:35:00+01:00"


def test_embedded_state_wins_over_what_the_page_shows():
    quote = quote_of(
        """<html lang="ja"><head><script>window.__STATE__ = {"quote": {"symbol":
"7203", "name": "トヨタ自動車", "lastPrice": {"raw": 2890.5, "fmt": "2,890.5"}, "currency": "JPY",
"volume": 12345600, "updatedAt": 1741762800}, "related": [{"symbol": "7267", "lastPrice": 1800}]};
</script></head><body><h1>トヨタ自動車 (7203)</h1><p>現在値 2,891円</p></body></html>""",
        "https://kabu.example/stocks/7203",
    )
    assert (quote["symbol"], quote["price"], quote["currency"]) == (
        "7203",
        Decimal("2890.5"),
        "JPY",
    )
    assert quote["provenance"]["price"] == "embedded"
    assert quote["as_of"] == "2025-03-12T07:00:00+00:00"


def test_elements_named_for_their_field_and_no_time_shown():
    quote = quote_of("""<html><body><div class="quote"><span class="symbol">ACME</span>
<span class="current-price">$187.44</span><span class="volume">52,345,678</span></div>
</body></html>""")
    assert (quote["symbol"], quote["price"], quote["currency"]) == (
        "ACME",
        Decimal("187.44"),
        "USD",
    )
    assert quote["volume"] == 52345678
    assert (quote["as_of"], quote["provenance"]["as_of"]) == (FETCHED.isoformat(), "fetch")


def test_a_site_profile_gives_what_zero_configuration_misses():
    page = """<html><body><div id="q"><b class="tk">ZZQ</b><i class="px">42,50</i>
<u class="vl">1.000</u></div><div class="rel"><i class="px">9,99</i></div></body></html>"""
    assert rejected(page, "https://odd.example/x/1") == "no_symbol"  # a price, whose?
    profile = SiteProfile.from_dict(
        {
            "domains": ["odd.example"],
            "currency": "EUR",
            "quote": {
                "is_quote": {"css": "#q"},
                "fields": {
                    "symbol": {"css": "#q .tk::text"},
                    "price": {"css": "#q .px::text"},
                    "volume": {"xpath": "//div[@id='q']/u/text()"},
                },
            },
        }
    )
    result = extract_quotes_from_text(
        page, "https://odd.example/x/1", profile=profile, fetched=FETCHED
    )
    (quote,) = result.quotes
    assert (quote["symbol"], quote["price"], quote["volume"]) == ("ZZQ", Decimal("42.50"), 1000)
    assert (quote["currency"], quote["provenance"]["price"]) == ("EUR", "profile")
    other = extract_quotes_from_text(
        "<html><body><h1>About</h1></body></html>", "https://odd.example/about", profile=profile
    )
    assert other.rejected == "not_a_quote_page"


def test_a_profile_with_an_unknown_quote_field_is_refused():
    with pytest.raises(ProfileError, match="quote.fields.bogus"):
        SiteProfile.from_dict(
            {"domains": ["a.example"], "quote": {"fields": {"bogus": {"css": "x"}}}}
        )


def test_bad_pages_give_no_quote_and_say_why():
    assert rejected("<html><body><h1>Nop Inc (NOP)</h1><p>Halted.</p></body></html>") == "no_price"
    assert (
        rejected(
            "<html lang=en><body><h1>Markets</h1><span>4,321.00</span></body></html>",
            "https://quotes.example/markets",
        )
        == "no_symbol"
    )
    two = """<html lang="en"><body><h1>Two Inc (TWO)</h1><table><tr><th>Price</th>
<td>10.00 USD</td></tr><tr><th>Last</th><td>12.00 USD</td></tr></table></body></html>"""
    assert rejected(two) == "conflicting_prices"
    product = """<html><head><script type="application/ld+json">{"@type": "Product", "name":
"Boot", "offers": {"price": "49.90", "priceCurrency": "EUR"}}</script></head><body><h1>Boot</h1>
<span class="price">49,90 €</span></body></html>"""
    assert rejected(product, "https://shop.example/p/boot-1.html") == "product_page"
    index = """<html lang="en"><body><h1>Market overview</h1><table><tr><th>Symbol</th>
<th>Last</th></tr><tr><td>A</td><td class="price">1.00</td></tr><tr><td>B</td>
<td class="price">2.00</td></tr><tr><td>C</td><td class="price">3.00</td></tr></table>
</body></html>"""
    assert rejected(index, "https://quotes.example/markets/") == "no_quote"
    assert set(REJECTED_REASONS) >= {"no_price", "no_symbol", "conflicting_prices", "product_page"}


def test_absurd_values_reach_validation_and_fail_there():
    page = """<html lang="en"><body><h1>Zero Corp (ZRO)</h1><table><tr><th>Price</th>
<td>$0.00</td></tr></table></body></html>"""
    (quote,) = extract_quotes_from_text(page, "https://quotes.example/quote/ZRO").quotes
    assert [p.field for p in validation_errors(quote, "quote")] == ["price"]
    assert validation_errors({**quote, "price": 1, "volume": -5}, "quote")[0].field == "volume"


def test_a_response_is_read_as_a_page_or_an_endpoint():
    response = HtmlResponse(
        "https://quotes.example/quote/ACME", body=TABLE_PAGE.encode(), encoding="utf-8"
    )
    assert extract_quotes(response).quotes[0]["price"] == Decimal("187.44")


@pytest.mark.parametrize(
    ("text", "language", "zone", "expected"),
    [
        ("As of Mar 12, 2025 4:00 PM EDT", "en-US", None, "2025-03-12T16:00:00-04:00"),
        ("Stand: 12.03.2025 17:35 Uhr MEZ", "de-DE", None, "2025-03-12T17:35:00+01:00"),
        ("Mis à jour le 12/03/2025 à 17h35 CET", "fr", None, "2025-03-12T17:35:00+01:00"),
        ("2025年3月12日 15:00 JST", "ja", None, "2025-03-12T15:00:00+09:00"),
        ("12. März 2025, 17:35", "de", "Europe/Berlin", "2025-03-12T17:35:00+01:00"),
        ("16:00:00 ET", "en", None, "2025-03-12T16:00:00-04:00"),
        ("2025-03-12T16:00:00-04:00", None, None, "2025-03-12T16:00:00-04:00"),
        ("12/03/2025 17:35", "es", None, None),  # no zone known: the fetch time instead
        ("Halted", "en", None, None),
    ],
)
def test_the_time_a_quote_is_for(text, language, zone, expected):
    when = parse_as_of(text, FETCHED, language, zone_named(zone))
    assert (when.isoformat() if when else None) == expected


ROOT = Path(__file__).resolve().parents[2]
SHARED = next(
    (p for base in (ROOT.parent, ROOT.parent.parent) if (p := base / "shared").is_dir()),
    ROOT.parent / "shared",
)
PRODUCT_PAGES = (
    sorted((SHARED / "product-pages-dev").glob("*.html"))[::3]
    + sorted((SHARED / "product-pages-intl").glob("*.html.gz"))[::3]
)


@pytest.mark.skipif(not PRODUCT_PAGES, reason="the development sets are not beside the repository")
def test_real_product_pages_give_no_quote_and_no_error():
    """The shared development sets (read in place): product pages, with comments, scripts,
    exchange-rate objects: none is taken for a quote, no source raises."""
    for path in PRODUCT_PAGES:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        result = extract_quotes_from_text(
            raw.decode("utf-8", "replace"), "https://shop.example/p/1"
        )
        assert result.errors == [] and result.quotes == [], (path.name, result.quotes[:1])


@pytest.mark.parametrize(
    ("page", "url"),
    [
        (
            """<html lang="en-US"><body><h1>Apple Inc. (AAPL)</h1><!-- header -->
<div>NasdaqGS - Nasdaq Real Time Price • USD</div>
<fin-streamer data-symbol="AAPL" data-field="regularMarketPrice" value="187.44">187.44
</fin-streamer><table><tr><td>Previous Close</td><!-- c --><td>186.21</td></tr><tr><td>Volume</td>
<td>52,345,678</td></tr></table><div><fin-streamer data-symbol="MSFT"
data-field="regularMarketPrice" value="400.1">400.10</fin-streamer><fin-streamer data-symbol="GOOG"
data-field="regularMarketPrice" value="150.2">150.20</fin-streamer><fin-streamer
data-symbol="AMZN" data-field="regularMarketPrice" value="180.3">180.30</fin-streamer></div>
</body></html>""",
            "https://quotes.example/quote/AAPL/",
        ),
        (
            """<html lang="en"><body><div class="zq"><div class="a1">Apple Inc</div>
<div class="c3">$187.44</div></div><div class="row"><div>Previous close</div><div>$186.21</div>
</div><div class="row"><div>Volume</div><div>52.35M</div></div></body></html>""",
            "https://quotes.example/finance/quote/AAPL:NASDAQ",
        ),
    ],
    ids=["live-quote-widgets", "symbol-in-the-address"],
)
def test_other_markups_of_a_quote(page, url):
    quote = quote_of(page, url)
    assert (quote["symbol"], quote["price"], quote["currency"]) == (
        "AAPL",
        Decimal("187.44"),
        "USD",
    )
    assert quote["previous_close"] == Decimal("186.21")
