"""CSV and JSON quote endpoints: one quote per row, a row without a quote counted."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from scrapy.http import TextResponse

from crawler.extraction.quotes import extract_quotes, extract_quotes_from_text
from crawler.schema import validation_errors

FETCHED = dt.datetime(2025, 3, 12, 22, 0, tzinfo=dt.UTC)
CSV = """Symbol,Date,Time,Open,High,Low,Close,Volume
AAPL.US,2025-03-12,16:00:00,186.5,189.2,185,187.44,52345678
SAP.DE,2025-03-12,17:35:00,200,201,199,200.5,1000
NODATA.US,N/D,N/D,N/D,N/D,N/D,N/D,N/D
"""


def test_a_csv_endpoint_gives_one_quote_per_row():
    result = extract_quotes_from_text(
        CSV, "https://data.example/q.csv?s=aapl.us,sap.de", "text/csv", fetched=FETCHED
    )
    assert result.rejected is None and result.errors == []
    assert result.skipped == {"no_price": 1}  # the N/D row, counted
    apple, sap = result.quotes
    assert apple["url"] == "https://data.example/q.csv?s=aapl.us,sap.de#AAPL.US"
    assert (apple["symbol"], apple["price"], apple["volume"]) == (
        "AAPL.US",
        Decimal("187.44"),
        52345678,
    )
    assert (apple["open"], apple["day_low"], apple["day_high"]) == (
        Decimal("186.5"),
        Decimal("185"),
        Decimal("189.2"),
    )
    assert apple["currency"] == "USD" and apple["provenance"]["currency"] == "exchange"
    assert apple["as_of"] == "2025-03-12T16:00:00-04:00"  # the exchange's clock
    assert (sap["currency"], sap["as_of"]) == ("EUR", "2025-03-12T17:35:00+01:00")
    for quote in result.quotes:
        assert validation_errors(quote, "quote") == []


def test_a_semicolon_csv_with_decimal_commas_and_a_currency_column():
    text = "Ticker;Datum;Letzter;Volumen;Währung\nBAUM;12.03.2025;1.234,56;1.000;EUR\n"
    (quote,) = extract_quotes_from_text(
        text, "https://data.example/kurse.csv", "text/csv", fetched=FETCHED
    ).quotes
    assert (quote["symbol"], quote["price"], quote["volume"]) == ("BAUM", Decimal("1234.56"), 1000)
    assert quote["currency"] == "EUR"
    assert quote["as_of"].startswith("2025-03-12T00:00:00")


def test_a_csv_endpoint_without_a_currency_takes_the_profile_s():
    from crawler.extraction.profiles import SiteProfile

    profile = SiteProfile.from_dict({"domains": ["data.example"], "currency": "CAD"})
    text = "Symbol,Close\nMAPLE,12.5\n"
    (quote,) = extract_quotes_from_text(
        text, "https://data.example/q.csv", "text/csv", profile=profile, fetched=FETCHED
    ).quotes
    assert (quote["currency"], quote["provenance"]["currency"]) == ("CAD", "profile")
    assert (quote["as_of"], quote["provenance"]["as_of"]) == (FETCHED.isoformat(), "fetch")


def test_a_json_endpoint_in_several_shapes():
    listed = (
        '{"quotes": [{"symbol": "AAPL", "price": 187.44, "currency": "USD", "volume": 5},'
        ' {"ticker": "SAP", "last": "200.5", "currency": "EUR"}]}'
    )
    result = extract_quotes_from_text(
        listed, "https://data.example/q.json", "application/json", fetched=FETCHED
    )
    assert [(q["symbol"], q["price"], q["currency"]) for q in result.quotes] == [
        ("AAPL", Decimal("187.44"), "USD"),
        ("SAP", Decimal("200.5"), "EUR"),
    ]
    keyed = (
        '{"data": {"AAPL": {"regularMarketPrice": {"raw": 187.44, "fmt": "187.44"},'
        ' "currency": "USD", "regularMarketTime": 1741809600}}}'
    )
    (quote,) = extract_quotes_from_text(
        keyed, "https://data.example/v7", "application/json", fetched=FETCHED
    ).quotes
    assert (quote["symbol"], quote["price"]) == ("AAPL", Decimal("187.44"))
    assert quote["as_of"] == "2025-03-12T20:00:00+00:00"


def test_empty_and_unreadable_endpoints_are_counted():
    empty = extract_quotes_from_text("Symbol,Close\n", "https://d.example/q.csv", "text/csv")
    assert (empty.quotes, empty.rejected) == ([], "empty_endpoint")
    broken = extract_quotes_from_text("{nope", "https://d.example/q.json", "application/json")
    assert (broken.quotes, broken.rejected) == ([], "bad_endpoint")
    nothing = extract_quotes_from_text("[]", "https://d.example/q.json", "application/json")
    assert nothing.rejected == "empty_endpoint"


def test_a_csv_served_as_plain_text_is_recognised_by_its_header():
    response = TextResponse(
        "https://data.example/q",
        body=CSV.encode(),
        headers={"Content-Type": "text/plain; charset=utf-8"},
    )
    assert len(extract_quotes(response, fetched=FETCHED).quotes) == 2
