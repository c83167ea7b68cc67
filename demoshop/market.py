"""The demo shop's market section: instruments whose prices move, for the ``finance`` spider.

Off unless asked for (``python -m demoshop --market N``, ``ShopProcess(market=N)``),
and then linked from no page of the shop and listed in none of its sitemaps, so a
product crawl of the shop is the same with or without it. Under ``/market/``:

=============================  =========================================================
``/market/``                   the index: every instrument, its last price and currency,
                               linked to its quote page (a market table)
``/market/watchlist.html``     a watch list: every instrument in a table (last, change,
                               % change, volume), its rows linked nowhere; no page
                               links to it
``/market/q/<SYMBOL>.html``    one quote page (:mod:`demoshop.market_pages`: six layouts
                               in six locales and five currencies)
``/market/quotes.csv``         every quote, ``Symbol,Date,Time,Open,High,Low,Close,Volume``
                               (symbols with their exchange's suffix: ``ACME.US``)
``/market/quotes.json``        every quote, ``{"quotes": [{"symbol": ..., "price": ...}]}``
=============================  =========================================================

Prices move: the market's clock has ticks of ``tick`` seconds (``--market-tick``,
60 by default); each tick is a new session of every instrument, with its time
(``as_of``, the start of the tick), price, change, range and volume. With
``tick`` 0 the clock stands still and moves one tick each time the shop is told
to (:meth:`Market.advance`, SIGUSR1 to the shop's process): the tests' way to
make prices move between two crawls. Everything is a pure function of the seed
and the tick: :meth:`Market.quote` is what a page shows, and what a test expects.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

MARKET_PREFIX = "/market/"
EPOCH = 1_741_600_800  # 2025-03-10T10:00:00Z: tick 0 of a standing clock


@dataclass(frozen=True)
class Locale:
    """One kind of quote page: its language, currency, exchange, zone and layout."""

    tag: str
    currency: str
    exchange: str
    zone: str
    suffix: str  # the exchange's suffix of the CSV endpoint's symbols
    layout: str
    decimals: int = 2


LOCALES = (
    Locale("en-US", "USD", "NASDAQ", "America/New_York", "US", "table"),
    Locale("de-DE", "EUR", "Xetra", "Europe/Berlin", "DE", "definitions"),
    Locale("fr-FR", "EUR", "Euronext Paris", "Europe/Paris", "PA", "rows"),
    Locale("ja-JP", "JPY", "東証", "Asia/Tokyo", "T", "state", decimals=1),
    Locale("de-CH", "CHF", "SIX", "Europe/Zurich", "SW", "swiss"),
    Locale("en-GB", "GBP", "LSE", "Europe/London", "L", "meta"),
)

_SYLLABLES = ("ac", "bel", "cor", "dan", "el", "fi", "gor", "hal", "ir", "jon", "kel", "lum",
              "mar", "nor", "or", "pel", "quin", "ros", "sal", "tor", "ul", "ver", "wen", "zan")
_KINDS = ("Holdings", "Industries", "Systems", "Energy", "Pharma", "Motors", "Bank",
          "Technologies", "Foods", "Logistics")


@dataclass(frozen=True)
class Instrument:
    index: int
    symbol: str
    name: str
    locale: Locale
    base: float  # the price level around which it moves
    shares: int  # shares outstanding: market cap = price * shares

    @property
    def path(self) -> str:
        return f"{MARKET_PREFIX}q/{self.symbol}.html"

    @property
    def endpoint_symbol(self) -> str:
        return f"{self.symbol}.{self.locale.suffix}"


@dataclass(frozen=True)
class Quote:
    """One session of one instrument: what its page shows (exact decimals)."""

    instrument: Instrument
    tick: int
    as_of: dt.datetime  # aware, UTC
    price: Decimal
    previous_close: Decimal
    open: Decimal
    day_low: Decimal
    day_high: Decimal
    volume: int
    market_cap: Decimal

    @property
    def change(self) -> Decimal:
        return self.price - self.previous_close

    @property
    def change_percent(self) -> Decimal:
        percent = self.change / self.previous_close * 100
        return percent.quantize(Decimal("0.01"), ROUND_HALF_UP)

    @property
    def local_time(self) -> dt.datetime:
        from zoneinfo import ZoneInfo

        return self.as_of.astimezone(ZoneInfo(self.instrument.locale.zone))


def _unit(*parts: object) -> float:
    """A number in [0, 1) from its parts, the same on every machine."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _symbol(index: int, seed: int, locale: Locale, taken: set[str]) -> str:
    if locale.tag == "ja-JP":
        return str(1300 + index * 7 % 8600)
    for attempt in range(100):
        letters = "".join(
            chr(65 + int(_unit(seed, index, attempt, n) * 26)) for n in range(3 + index % 3)
        )
        if letters not in taken:
            return letters
    raise RuntimeError("no free symbol")  # pragma: no cover - 26**3 is plenty


class Market:
    """``count`` instruments (``seed``: the same market every time) and their clock."""

    def __init__(self, count: int, seed: int = 1, tick: float = 60.0) -> None:
        if count < 0:
            raise ValueError("the market's instrument count must be >= 0")
        self.seed = seed
        self.tick_seconds = max(0.0, tick)
        self.ticks_advanced = 0
        taken: set[str] = set()
        instruments = []
        for index in range(count):
            locale = LOCALES[index % len(LOCALES)]
            symbol = _symbol(index, seed, locale, taken)
            taken.add(symbol)
            a = _SYLLABLES[int(_unit(seed, "a", index) * len(_SYLLABLES))]
            b = _SYLLABLES[int(_unit(seed, "b", index) * len(_SYLLABLES))]
            name = f"{(a + b).capitalize()} {_KINDS[index % len(_KINDS)]}"
            scale = 100 if locale.currency == "JPY" else 1
            base = round((5 + 900 * _unit(seed, "base", index) ** 2) * scale, 2)
            shares = int(10_000_000 + 5_000_000_000 * _unit(seed, "shares", index))
            instruments.append(Instrument(index, symbol, name, locale, base, shares))
        self.instruments = instruments
        self.by_symbol = {instrument.symbol: instrument for instrument in instruments}

    # --- the clock ----------------------------------------------------------------------
    def advance(self) -> None:
        """Move a standing clock (``tick`` 0) on by one tick: every price moves."""
        self.ticks_advanced += 1

    def tick_now(self, now: float | None = None) -> int:
        if self.tick_seconds <= 0:
            return self.ticks_advanced
        now = time.time() if now is None else now
        return math.floor((now - EPOCH) / self.tick_seconds) + self.ticks_advanced

    def time_of(self, tick: int) -> dt.datetime:
        seconds = self.tick_seconds if self.tick_seconds > 0 else 3600
        return dt.datetime.fromtimestamp(EPOCH + tick * seconds, dt.UTC)

    def tick_of(self, as_of: dt.datetime) -> int:
        seconds = self.tick_seconds if self.tick_seconds > 0 else 3600
        return round((as_of.timestamp() - EPOCH) / seconds)

    # --- prices -------------------------------------------------------------------------
    def _price(self, instrument: Instrument, tick: int) -> Decimal:
        wave = math.sin(tick / 5 + instrument.index)
        noise = _unit(self.seed, "price", instrument.index, tick) - 0.5
        value = instrument.base * (1 + 0.04 * wave + 0.02 * noise)
        step = Decimal(1).scaleb(-instrument.locale.decimals)
        return Decimal(repr(value)).quantize(step, ROUND_HALF_UP)

    def quote(self, instrument: Instrument, tick: int) -> Quote:
        step = Decimal(1).scaleb(-instrument.locale.decimals)
        price = self._price(instrument, tick)
        previous = self._price(instrument, tick - 1)
        opened = (previous * Decimal(repr(1 + 0.01 * (_unit(self.seed, "o", instrument.index,
                                                            tick) - 0.5)))).quantize(step)
        low = (min(price, opened, previous) * Decimal("0.99")).quantize(step)
        high = (max(price, opened, previous) * Decimal("1.01")).quantize(step)
        volume = int(50_000 + 60_000_000 * _unit(self.seed, "v", instrument.index, tick) ** 3)
        cap = (price * instrument.shares).quantize(Decimal(1))
        return Quote(instrument, tick, self.time_of(tick), price, previous, opened, low, high,
                     volume, cap)

    def quote_at(self, symbol: str, as_of: dt.datetime) -> Quote:
        """The quote a page showed for ``symbol`` at ``as_of`` (what a test expects)."""
        return self.quote(self.by_symbol[symbol], self.tick_of(as_of))
