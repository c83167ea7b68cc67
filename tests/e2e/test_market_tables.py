"""Real ``finance`` workers read a market page: one quote per row of its table, observed
again after the prices moved, the market refreshed from its table by ``recrawl --spider
finance --listings`` (the watch list again, no quote's own page).

The market page is the demo shop's watch list (``/market/watchlist.html``, 30
instruments in six locales' price formats, its rows linked nowhere: each row's quote is
``<page>#<symbol>``); the shop is a real process whose prices move on SIGUSR1. Redis,
PostgreSQL and the workers are real.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.request
from decimal import Decimal

import pytest

from .conftest import CRAWL_TIMEOUT, START_TIMEOUT, page_fetches, wait_until
from .finance import FINANCE, pg_rows, seed, start, wait_open
from .test_finance_crawl import recrawl, settled

pytestmark = pytest.mark.workers

COUNT = 30
WATCHLIST = "/market/watchlist.html"
QUOTES = "select url, symbol, price, currency, volume, as_of from quotes order by url"


def _served_tick(shop) -> int:  # type: ignore[no-untyped-def]
    """The tick the shop's market shows now (its JSON endpoint's first time)."""
    with urllib.request.urlopen(shop.url + "market/quotes.json", timeout=30) as answer:
        first = json.loads(answer.read().decode("utf-8"))["quotes"][0]
    return shop.market_model().tick_of(dt.datetime.fromisoformat(first["time"]))


@pytest.mark.timeout(600)
def test_a_market_page_of_30_instruments_gives_30_quotes_observed_again_after_prices_moved(
    crawl, shop_factory, postgres_dsn
):
    shop = shop_factory(products=5, market=COUNT, market_tick=0, latency_ms=5)
    market = shop.market_model()
    page = shop.url.rstrip("/") + WATCHLIST
    crawl.env.update(POSTGRES_DSN=postgres_dsn, MAX_IDLE_TIME_BEFORE_CLOSE="0")
    assert crawl.master("--spider", "finance", "pause").returncode == 0
    for worker_id in ("m1", "m2"):
        start(crawl, worker_id, CONCURRENT_REQUESTS=4)
    wait_open(crawl, FINANCE, 2, START_TIMEOUT)
    seed(crawl, "finance", json.dumps({"url": page, "meta": {"strategy": "direct"}}))
    assert crawl.master("--spider", "finance", "resume").returncode == 0

    def stored(table: str, n: int) -> bool:
        return pg_rows(postgres_dsn, f"select count(*) from {table}")[0][0] >= n and settled(
            crawl
        )

    def check(tick: int) -> None:
        rows = pg_rows(postgres_dsn, QUOTES)
        assert len(rows) == COUNT
        got = {row[1]: row for row in rows}
        for instrument in market.instruments:
            expected = market.quote(instrument, tick)
            url, symbol, price, currency, volume, as_of = got[instrument.symbol]
            assert url == f"{page}#{instrument.symbol}"
            assert Decimal(str(price)) == expected.price, (symbol, price, expected.price)
            assert currency == instrument.locale.currency
            assert volume == expected.volume
            assert as_of == expected.as_of

    wait_until(lambda: stored("quotes", COUNT), CRAWL_TIMEOUT, f"{COUNT} quotes stored")
    check(0)
    assert pg_rows(postgres_dsn, "select count(*) from quote_history") == [(COUNT,)]
    fetched = page_fetches(shop)
    assert fetched[WATCHLIST] == 1 and not any(p.startswith("/market/q/") for p in fetched)

    shop.advance_market()  # every price moves
    wait_until(lambda: _served_tick(shop) == 1, CRAWL_TIMEOUT, "the shop's prices to move")
    out = recrawl(crawl, "--listings")
    # the 30 rows are one listing page, and each row's quote is shown by it: no quote page
    assert "queued 1 of 1 pages: 1 listing pages and 0 quote pages" in out, out
    wait_until(lambda: stored("quote_history", 2 * COUNT), CRAWL_TIMEOUT,
               "a second observation of each instrument")
    check(1)
    per_url = pg_rows(postgres_dsn, "select url, array_agg(price order by as_of) "
                                    "from quote_history group by url")
    assert len(per_url) == COUNT
    for url, prices in per_url:
        instrument = market.by_symbol[url.rsplit("#", 1)[1]]
        assert [Decimal(str(p)) for p in prices] == [
            market.quote(instrument, 0).price, market.quote(instrument, 1).price
        ]
    assert page_fetches(shop)[WATCHLIST] == 2  # one request observed all 30 again
    for worker in crawl.workers:
        assert worker.stop() == 0
    # each worker's closing stats count the market pages it read: two fetches in all
    counted = [re.search(r"'extraction/market_pages': (\d+)", w.log()) for w in crawl.workers]
    assert sum(int(m.group(1)) for m in counted if m) == 2
    crawl.assert_clean_logs()
