"""Quotes from market tables: one per row, read only under headers that say what each
column is; tables that are not market tables give none (``crawler/extraction/quotes/tables.py``).

The pages are written from a description (``tests/support/market_tables.py``): five
layouts (a table with a head, a table whose first row is its headers, a grid of
``<div>``, an ARIA grid with a head and a body, a Japanese table) in five languages.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from crawler.extraction.quotes import extract_quotes_from_text
from crawler.schema import validation_errors
from tests.support.market_tables import AS_OF, LAYOUTS, rows

FETCHED = dt.datetime(2025, 3, 12, 22, 0, tzinfo=dt.UTC)
PAGE = "https://markets.example/overview/members"


def read(html: str, url: str = PAGE):  # type: ignore[no-untyped-def]
    result = extract_quotes_from_text(html, url, fetched=FETCHED)
    assert result.errors == []
    for quote in result.quotes:
        assert validation_errors(quote, "quote") == [], quote
    return result


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_row_of_a_market_table_is_one_quote_read_right(layout: str) -> None:
    build, currency, decimals = LAYOUTS[layout]
    shown = rows(30, decimals=decimals)
    result = read(build(shown))
    assert result.rejected is None and result.market_tables == 1
    assert not result.skipped
    by_symbol = {q["symbol"]: q for q in result.quotes}
    assert sorted(by_symbol) == sorted(r.symbol for r in shown)
    for row in shown:
        quote = by_symbol[row.symbol]
        assert quote["price"] == row.price, (row, quote)
        assert quote["currency"] == currency
        assert quote["name"] == row.name
        assert quote["provenance"]["price"] == "table"
        assert dt.datetime.fromisoformat(quote["as_of"]) == AS_OF, quote["as_of"]
        if "change_percent" in quote:
            assert quote["change_percent"] == row.percent
        if "change" in quote:
            assert quote["change"] == row.change
        if "volume" in quote:
            assert quote["volume"] == row.volume
    fields = set().union(*(q.keys() for q in result.quotes))
    assert {"change", "change_percent", "volume"} & fields


def test_a_row_is_stored_under_the_quote_page_it_links_to_else_under_the_table_page() -> None:
    shown = rows(5)
    linked = read(LAYOUTS["english_thead"][0](shown)).quotes
    assert [q["url"] for q in linked] == [f"https://markets.example/quote/{r.symbol}"
                                         for r in shown]  # the symbol's cell's link
    by_name = read(LAYOUTS["spanish_aria_grid"][0](shown)).quotes
    assert [q["url"] for q in by_name] == [f"https://markets.example/valor/{r.symbol.lower()}"
                                          for r in shown]  # the name's cell's link
    plain = read(LAYOUTS["german_first_row"][0](shown)).quotes
    assert [q["url"] for q in plain] == [f"{PAGE}#{r.symbol}" for r in shown]


def test_a_tables_foot_of_totals_gives_no_quote() -> None:
    shown = rows(4)
    html = LAYOUTS["english_thead"][0](shown).replace(
        "</tbody>", "</tbody><tfoot><tr><td>Total</td><td>All members</td><td>$9,999.00</td>"
        "<td>+1.00</td><td>+0.01%</td><td>99,999,999</td><td></td></tr></tfoot>"
    )
    assert [q["symbol"] for q in read(html).quotes] == [r.symbol for r in shown]


def test_a_page_that_states_no_time_gives_its_rows_the_fetch_time() -> None:
    html = LAYOUTS["english_thead"][0](rows(4)).replace("As of Mar 12, 2025 4:00 PM EDT", "")
    quotes = read(html).quotes
    assert {q["as_of"] for q in quotes} == {FETCHED.isoformat()}
    assert {q["provenance"]["as_of"] for q in quotes} == {"fetch"}


def test_a_row_whose_price_is_ambiguous_or_missing_gives_no_quote() -> None:
    shown = rows(4)
    html = LAYOUTS["english_thead"][0](shown)
    html = html.replace(f"${shown[1].price:,.2f}", f"${shown[1].price:,.2f} / $12.00", 1)
    html = html.replace(f"${shown[2].price:,.2f}", "—", 1)
    result = read(html)
    assert [q["symbol"] for q in result.quotes] == [shown[0].symbol, shown[3].symbol]
    assert result.skipped == {"no_price": 2}


def test_one_symbol_shown_twice_with_two_prices_gives_no_quote_for_it() -> None:
    shown = rows(4)
    twice = [*shown, shown[0].__class__(shown[0].symbol, shown[0].name, Decimal("9.99"),
                                        shown[0].change, shown[0].percent, 5)]
    result = read(LAYOUTS["german_first_row"][0](twice))
    assert sorted(q["symbol"] for q in result.quotes) == sorted(r.symbol for r in shown[1:])


def test_headers_that_do_not_say_a_column_leave_its_values_out() -> None:
    html = LAYOUTS["english_thead"][0](rows(4)).replace("<th>Volume</th>", "<th>Col 6</th>")
    assert all("volume" not in q for q in read(html).quotes)
    html = html.replace("<th>Last</th>", "<th>Col 3</th>")
    result = read(html)
    assert result.quotes == [] and result.market_tables == 0


HISTORICAL = """<html lang="en-US"><body><h1>ACME Corp. (ACME) historical prices</h1>
<table><thead><tr><th>Date</th><th>Open</th><th>High</th><th>Low</th><th>Close</th>
<th>Volume</th></tr></thead><tbody>{rows}</tbody></table></body></html>"""
ONE_SYMBOL = """<html lang="en-US"><body><h1>ACME prices</h1><table>
<tr><th>Symbol</th><th>Date</th><th>Close</th><th>Volume</th></tr>{rows}</table></body></html>"""
STATEMENT = """<html lang="en-US"><body><h1>ACME Corp. income statement</h1><table>
<tr><th>Breakdown</th><th>2022</th><th>2023</th><th>2024</th></tr>
<tr><td>Total revenue</td><td>1,234.5</td><td>1,345.6</td><td>1,456.7</td></tr>
<tr><td>Net income</td><td>123.4</td><td>134.5</td><td>145.6</td></tr>
<tr><td>Diluted EPS</td><td>1.23</td><td>1.34</td><td>1.45</td></tr></table></body></html>"""
UNLABELLED = """<html lang="en-US"><body><h1>Most active</h1><table>{rows}</table></body></html>"""


@pytest.mark.parametrize("kind", ["historical", "one_symbol", "statement", "unlabelled"])
def test_tables_that_are_not_market_tables_give_no_table_quotes(kind: str) -> None:
    days = [f"2025-03-{d:02d}" for d in range(3, 13)]
    html = {
        "historical": HISTORICAL.format(rows="".join(
            f"<tr><td>{d}</td><td>18{n}.10</td><td>18{n}.90</td><td>17{n}.50</td>"
            f"<td>18{n}.44</td><td>5{n},345,678</td></tr>" for n, d in enumerate(days))),
        "one_symbol": ONE_SYMBOL.format(rows="".join(
            f"<tr><td>ACME</td><td>{d}</td><td>18{n}.44</td><td>5{n},345,678</td></tr>"
            for n, d in enumerate(days))),
        "statement": STATEMENT,
        "unlabelled": UNLABELLED.format(rows="".join(
            f"<tr><td>{r.symbol}</td><td>{r.name}</td><td>{r.price}</td><td>{r.volume}</td></tr>"
            for r in rows(10))),
    }[kind]
    result = extract_quotes_from_text(html, "https://markets.example/quote/ACME/history",
                                      fetched=FETCHED)
    assert result.market_tables == 0
    assert all(q["url"] == "https://markets.example/quote/ACME/history" for q in result.quotes)


QUOTE_PAGE = """<html lang="en-US"><head><title>Acme Corp. (ACME) Stock Price</title></head>
<body><h1>Acme Corp. (ACME)</h1><div class="sub">NASDAQ · Currency in USD</div>
<div class="quote-header"><span class="last">$187.44</span> <span>+1.23 (+0.66%)</span></div>
<p>As of Mar 12, 2025 4:00 PM EDT</p><table class="stats">
<tr><th>Previous Close</th><td>$186.21</td></tr><tr><th>Volume</th><td>52,345,678</td></tr>
</table><section><h2>Peers</h2><table><thead><tr><th>Symbol</th><th>Name</th><th>Price</th>
<th>Change %</th></tr></thead><tbody>
<tr><td><a href="/quote/ACME">ACME</a></td><td>Acme Corp.</td><td>$187.44</td><td>+0.66%</td></tr>
<tr><td><a href="/quote/BOLT">BOLT</a></td><td>Bolt Inc.</td><td>$42.10</td><td>-1.10%</td></tr>
<tr><td><a href="/quote/CRNK">CRNK</a></td><td>Crank Co.</td><td>$1,210.00</td><td>+0.20%</td></tr>
</tbody></table></section></body></html>"""


def test_a_quote_page_with_a_table_of_its_peers_keeps_its_own_quote() -> None:
    result = read(QUOTE_PAGE, "https://markets.example/quote/ACME")
    own, *peers = result.quotes
    assert own["url"] == "https://markets.example/quote/ACME"
    assert (own["symbol"], own["price"], own["volume"]) == ("ACME", Decimal("187.44"), 52345678)
    assert own["provenance"]["price"] != "table"
    assert [(q["symbol"], q["price"], q["url"]) for q in peers] == [
        ("BOLT", Decimal("42.10"), "https://markets.example/quote/BOLT"),
        ("CRNK", Decimal("1210.00"), "https://markets.example/quote/CRNK"),
    ]
    assert result.market_tables == 1


def test_a_close_column_is_the_price_and_a_headers_currency_code_its_currency() -> None:
    html = """<html lang="en-GB"><body><h1>Closing prices</h1>
<p>As of 12 March 2025 16:35 GMT</p><table><tr><th>Ticker</th><th>Company</th>
<th>Close (EUR)</th><th>Volume</th></tr>
<tr><td>ABC</td><td>Abc plc</td><td>12.34</td><td>1,000</td></tr>
<tr><td>DEF</td><td>Def plc</td><td>5.60</td><td>2,000</td></tr></table>
<table><tr><th>Symbol</th><th>Name</th><th>Price</th><th>Chg</th></tr>
<tr><td>GHI.L</td><td>Ghi plc</td><td>245.5p</td><td>-1.5p</td></tr>
<tr><td>JKL.L</td><td>Jkl plc</td><td>1,020.0p</td><td>+3.0p</td></tr></table></body></html>"""
    result = read(html)
    got = {q["symbol"]: (q["price"], q["currency"], q.get("change")) for q in result.quotes}
    assert got == {
        "ABC": (Decimal("12.34"), "EUR", None),
        "DEF": (Decimal("5.60"), "EUR", None),
        "GHI.L": (Decimal("2.455"), "GBP", Decimal("-0.015")),
        "JKL.L": (Decimal("10.200"), "GBP", Decimal("0.030")),
    }
    assert result.market_tables == 2
    assert {q["as_of"] for q in result.quotes} == {"2025-03-12T16:35:00+00:00"}
