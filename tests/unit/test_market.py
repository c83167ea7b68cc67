"""The demo shop's market section and the tests' Spanish quote site, read with no profile.

Every quote page of both (six layouts and locales in the demo, a seventh markup in
Spanish here) must give its instrument's symbol, price, currency, volume and time;
the endpoints and the demo's market tables one quote per instrument; the Spanish
index (rows with no column headers) none. Offline (in-process
pages) but for one real shop process, which moves its prices on SIGUSR1.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.request
from collections import Counter
from decimal import Decimal

from crawler.extraction.quotes import extract_quotes_from_text
from demoshop import Catalog, ShopProcess
from demoshop.market import LOCALES, Market
from demoshop.market_pages import (
    index_page,
    quote_page,
    quotes_csv,
    quotes_json,
    watchlist_page,
)
from demoshop.site import ShopSite
from tests.support.quote_site import QuoteSite

FETCHED = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)
BASE = "http://127.0.0.1:9"


def test_every_demo_quote_page_is_read_right_in_six_locales() -> None:
    market = Market(120, seed=1, tick=0)
    wrong: Counter[tuple[str, str]] = Counter()
    for instrument in market.instruments:
        expected = market.quote(instrument, 5)
        result = extract_quotes_from_text(
            quote_page(market, instrument, 5), BASE + instrument.path, fetched=FETCHED
        )
        assert result.errors == [] and len(result.quotes) == 1, (instrument, result.rejected)
        (got,) = result.quotes
        want = {
            "symbol": instrument.symbol,
            "price": expected.price,
            "currency": instrument.locale.currency,
            "volume": expected.volume,
            "as_of": expected.as_of,
        }
        got_as_of = dt.datetime.fromisoformat(got["as_of"])
        for field, value in want.items():
            if (got_as_of if field == "as_of" else got.get(field)) != value:
                wrong[(instrument.locale.tag, field)] += 1
        cap = got.get("market_cap")
        if cap is not None and abs(cap - expected.market_cap) > expected.market_cap / 100:
            wrong[(instrument.locale.tag, "market_cap")] += 1
    assert wrong == Counter()
    assert {i.locale.currency for i in market.instruments} == {"USD", "EUR", "JPY", "CHF", "GBP"}


def test_the_demo_endpoints_and_market_tables_give_one_quote_per_instrument() -> None:
    market = Market(60, seed=1, tick=0)
    csv_result = extract_quotes_from_text(
        quotes_csv(market, 2), f"{BASE}/market/quotes.csv", "text/csv", fetched=FETCHED
    )
    json_result = extract_quotes_from_text(
        quotes_json(market, 2), f"{BASE}/market/quotes.json", "application/json", fetched=FETCHED
    )
    for result in (csv_result, json_result):
        assert len(result.quotes) == 60 and not result.skipped
        for got, instrument in zip(result.quotes, market.instruments, strict=True):
            assert got["symbol"] == instrument.endpoint_symbol
            assert got["price"] == market.quote(instrument, 2).price
            assert got["currency"] == instrument.locale.currency
            assert dt.datetime.fromisoformat(got["as_of"]) == market.quote(instrument, 2).as_of
    # the index and the watch list are market tables: one quote a row, at the session's
    # time; the index's rows under their quote pages' URLs (they join those pages' quotes)
    index = extract_quotes_from_text(index_page(market, 2), f"{BASE}/market/", fetched=FETCHED)
    watch = extract_quotes_from_text(
        watchlist_page(market, 2), f"{BASE}/market/watchlist.html", fetched=FETCHED
    )
    for result, url in ((index, "{}{}"), (watch, BASE + "/market/watchlist.html#{2}")):
        assert result.market_tables == 1 and not result.skipped and len(result.quotes) == 60
        for got, instrument in zip(result.quotes, market.instruments, strict=True):
            expected = market.quote(instrument, 2)
            assert got["url"] == url.format(BASE, instrument.path, instrument.symbol)
            assert (got["symbol"], got["price"], got["currency"]) == (
                instrument.symbol, expected.price, instrument.locale.currency)
            assert dt.datetime.fromisoformat(got["as_of"]) == expected.as_of
    assert all(q["volume"] == market.quote(i, 2).volume
               for q, i in zip(watch.quotes, market.instruments, strict=True))


def test_prices_move_with_the_clock() -> None:
    standing = Market(6, tick=0)
    before = [standing.quote(i, standing.tick_now()).price for i in standing.instruments]
    standing.advance()
    after = [standing.quote(i, standing.tick_now()).price for i in standing.instruments]
    assert before != after and standing.tick_now() == 1
    ticking = Market(6, tick=60)
    assert (
        ticking.tick_now(1_800_000_000)
        == ticking.tick_now(1_800_000_059)
        != ticking.tick_now(1_800_000_060)
    )
    assert len(LOCALES) == 6


def test_the_market_is_linked_from_no_page_of_the_shop() -> None:
    catalog = Catalog.build(products=40, seed=1)
    plain, with_market = ShopSite(catalog), ShopSite(catalog, market=Market(30))
    for path in catalog.crawlable_paths():
        body = with_market.resolve("GET", path).body
        assert body == plain.resolve("GET", path).body
        assert b"/market/" not in body
    assert plain.resolve("GET", "/market/").status == 404
    assert with_market.resolve("GET", "/market/").status == 200


def test_the_shop_process_serves_the_market_and_moves_it_on_sigusr1() -> None:
    with ShopProcess(products=5, market=12, market_tick=0) as shop:
        market = shop.market_model()
        instrument = market.instruments[3]

        def fetch(path: str) -> str:
            with urllib.request.urlopen(shop.url.rstrip("/") + path, timeout=30) as answer:
                return str(answer.read().decode("utf-8"))

        assert instrument.symbol in fetch(instrument.path)
        rows = json.loads(fetch("/market/quotes.json"))["quotes"]
        assert Decimal(rows[3]["price"]) == market.quote(instrument, 0).price
        shop.advance_market()
        deadline = time.monotonic() + 120  # the shop's reactor handles the signal: wait for it
        moved = rows
        while Decimal(moved[3]["price"]) == market.quote(instrument, 0).price:
            assert time.monotonic() < deadline, "the shop did not move its prices"
            time.sleep(0.05)
            moved = json.loads(fetch("/market/quotes.json"))["quotes"]
        assert Decimal(moved[3]["price"]) == market.quote(instrument, 1).price


def test_the_spanish_quote_site_is_read_right_with_no_profile() -> None:
    site = QuoteSite(60)
    site.url = BASE + "/"
    for session in (0, 1):
        site.session = session
        for instrument in site.instruments:
            expected = site.quote(instrument, session)
            result = extract_quotes_from_text(
                site.quote_page(instrument), site.url_of(instrument), fetched=FETCHED
            )
            (got,) = result.quotes
            assert (got["symbol"], got["price"], got["currency"], got["volume"]) == (
                instrument.symbol,
                expected.price,
                instrument.currency,
                expected.volume,
            )
            assert dt.datetime.fromisoformat(got["as_of"]) == expected.as_of
    page = site.index_page(1)
    assert page is not None
    assert extract_quotes_from_text(page, site.url + "cotizaciones/").quotes == []
