"""The market section's pages (:mod:`demoshop.market`), rendered per request: prices move.

Six layouts, one per locale, so that the ``finance`` spider meets what real quote
pages do: a table of labels in US English with ``2.95T`` market caps; a German
definition list with ``1.234,56 €`` and ``2,95 Bio. €``; French rows of spans
with ``1 234,56 €`` and ``12,5 Md €``; a Japanese page whose quote is in embedded
JSON state; a Swiss table with ``CHF 1'234.56`` and a time without a zone; a
British page with ``<meta>`` tags and ``£2.95bn``. Every quote page also lists
three related instruments with their prices (the page's own quote must win).
"""

from __future__ import annotations

import json
from decimal import Decimal
from html import escape

from demoshop.market import MARKET_PREFIX, Instrument, Market, Quote

MONTHS_DE = ("Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sep.", "Okt.",
             "Nov.", "Dez.")


def _group(value: Decimal, decimals: int, thousands: str, decimal: str) -> str:
    text = f"{abs(value):,.{decimals}f}"
    text = text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)
    return ("-" if value < 0 else "") + text


def _signed(text: str, value: Decimal) -> str:
    return text if value < 0 else "+" + text


def _scaled(value: Decimal, words: tuple[tuple[int, str], ...]) -> tuple[Decimal, str]:
    for power, word in words:
        if value >= Decimal(10) ** power:
            return (value / Decimal(10) ** power).quantize(Decimal("0.01")), word
    return value, ""


def money(q: Quote, value: Decimal) -> str:
    """An amount as the instrument's locale writes it."""
    locale = q.instrument.locale
    d = locale.decimals
    if locale.tag == "en-US":
        return "$" + _group(value, d, ",", ".")
    if locale.tag == "de-DE":
        return _group(value, d, ".", ",") + " €"
    if locale.tag == "fr-FR":
        return _group(value, d, "\u202f", ",") + "\u00a0€"
    if locale.tag == "ja-JP":
        return _group(value, d, ",", ".") + "円"
    if locale.tag == "de-CH":
        return "CHF " + _group(value, d, "'", ".")
    return "£" + _group(value, d, ",", ".")


def volume(q: Quote) -> str:
    separators = {"de-DE": ".", "fr-FR": "\u202f", "de-CH": "'"}
    text = _group(Decimal(q.volume), 0, separators.get(q.instrument.locale.tag, ","), ".")
    return text + ("株" if q.instrument.locale.tag == "ja-JP" else "")


def market_cap(q: Quote) -> str:
    tag, cap = q.instrument.locale.tag, q.market_cap
    if tag == "en-US":
        amount, word = _scaled(cap, ((12, "T"), (9, "B"), (6, "M")))
        return f"{amount}{word}"
    if tag == "de-DE":
        amount, word = _scaled(cap, ((12, "Bio."), (9, "Mrd."), (6, "Mio.")))
        return f"{_group(amount, 2, '.', ',')} {word} €"
    if tag == "fr-FR":
        amount, word = _scaled(cap, ((9, "Md"), (6, "M")))
        return f"{_group(amount, 2, chr(0x202F), ',')} {word} €"
    if tag == "ja-JP":
        amount, word = _scaled(cap, ((12, "兆"), (8, "億")))
        return f"{amount}{word}円"
    if tag == "de-CH":
        amount, word = _scaled(cap, ((9, "Mrd."), (6, "Mio.")))
        return f"CHF {amount} {word}"
    amount, word = _scaled(cap, ((9, "bn"), (6, "m")))
    return f"£{amount}{word}"


def _related(market: Market, q: Quote) -> str:
    others = [market.instruments[(q.instrument.index + n) % len(market.instruments)]
              for n in (1, 2, 3)]
    items = "".join(
        f'<li><a href="{o.path}">{escape(o.symbol)}</a> <span class="price">'
        f"{money(market.quote(o, q.tick), market.quote(o, q.tick).price)}</span></li>"
        for o in others if o is not q.instrument
    )
    return f'<aside><h2>Related</h2><ul class="related">{items}</ul></aside>'


def _page(q: Quote, title: str, body: str, market: Market, head: str = "") -> str:
    tag = q.instrument.locale.tag
    return (
        f'<!DOCTYPE html><html lang="{tag}"><head><meta charset="utf-8"><title>{escape(title)}'
        f"</title>{head}</head><body><header><a href=\"{MARKET_PREFIX}\">Markets</a></header>"
        f"<main>{body}</main>{_related(market, q)}<footer>Demo market, delayed data.</footer>"
        "</body></html>"
    )


def _us(q: Quote, market: Market) -> str:
    i, t = q.instrument, q.local_time
    when = t.strftime("%b %d, %Y %I:%M:%S %p ") + (t.tzname() or "")
    change = f"{_signed(f'{q.change:.2f}', q.change)} ({_signed(f'{q.change_percent}', q.change)}%)"
    rows = [("Previous Close", money(q, q.previous_close)), ("Open", money(q, q.open)),
            ("Day's Range", f"{q.day_low} - {q.day_high}"), ("Volume", volume(q)),
            ("Market Cap", market_cap(q)), ("52 Week Range", f"{i.base * 0.7:.2f} - "
                                                            f"{i.base * 1.3:.2f}")]
    table = "".join(f"<tr><th>{escape(a)}</th><td>{b}</td></tr>" for a, b in rows)
    body = (f"<h1>{escape(i.name)} ({i.symbol})</h1><div class=\"sub\">{i.locale.exchange} · "
            f"Currency in USD</div><div class=\"quote-header\"><span class=\"last\">"
            f"{money(q, q.price)}</span> <span class=\"move\">{change}</span></div>"
            f"<p class=\"stamp\">As of {when}</p><table class=\"stats\">{table}</table>")
    return _page(q, f"{i.name} ({i.symbol}) Stock Price", body, market)


def _de(q: Quote, market: Market) -> str:
    i, t = q.instrument, q.local_time
    zone = {"CET": "MEZ", "CEST": "MESZ"}.get(t.tzname() or "", t.tzname() or "")
    change = (f"{_signed(_group(q.change, 2, '.', ','), q.change)} € "
              f"({_signed(_group(q.change_percent, 2, '.', ','), q.change)} %)")
    low, high = _group(q.day_low, 2, ".", ","), _group(q.day_high, 2, ".", ",")
    pairs = [("Vorheriger Schluss", money(q, q.previous_close)), ("Eröffnung", money(q, q.open)),
             ("Tagesspanne", f"{low} – {high}"),
             ("Volumen", volume(q)), ("Marktkapitalisierung", market_cap(q)),
             ("Börse", i.locale.exchange)]
    dl = "".join(f"<dt>{a}</dt><dd>{b}</dd>" for a, b in pairs)
    body = (f'<div class="kopf"><h1>{escape(i.name)} Aktie</h1><span>Kürzel: {i.symbol}</span>'
            f'</div><div class="kurs">{money(q, q.price)}</div><div class="diff">{change}</div>'
            f"<dl>{dl}</dl><p>Stand: {t:%d.%m.%Y %H:%M:%S} Uhr {zone}</p>")
    return _page(q, f"{i.name} Aktie: Kurs", body, market)


def _fr(q: Quote, market: Market) -> str:
    i, t = q.instrument, q.local_time
    pct = _signed(_group(q.change_percent, 2, "", ","), q.change) + "\u00a0%"
    rows = [("Mnémo", i.symbol), ("Cours", money(q, q.price)), ("Variation", pct),
            ("Clôture veille", money(q, q.previous_close)), ("Ouverture", money(q, q.open)),
            ("Plus bas", money(q, q.day_low)), ("Plus haut", money(q, q.day_high)),
            ("Volume", volume(q)), ("Capitalisation", market_cap(q))]
    block = "".join(f'<div class="ligne"><span>{a}</span><span>{b}</span></div>' for a, b in rows)
    body = (f"<h1>{escape(i.name)}</h1><p>{i.locale.exchange}</p>{block}"
            f"<p>Mis à jour le {t:%d/%m/%Y} à {t:%H}h{t:%M} {t.tzname()}</p>")
    return _page(q, f"Cours {i.name}", body, market)


def _ja(q: Quote, market: Market) -> str:
    i, t = q.instrument, q.local_time
    state = {"page": "quote", "quote": {
        "code": i.symbol, "ticker": i.symbol, "displayName": i.name, "exchange": "TSE",
        "lastPrice": float(q.price), "prevClose": float(q.previous_close),
        "open": float(q.open), "low": float(q.day_low), "high": float(q.day_high),
        "volume": q.volume, "currency": "JPY", "updatedAt": int(q.as_of.timestamp()),
    }}
    body = (f"<h1>{escape(i.name)} ({i.symbol})</h1><p>市場 {i.locale.exchange}</p>"
            f"<p>現在値 {money(q, q.price)}</p><p>出来高 {volume(q)}</p>"
            f"<p>{t.year}年{t.month}月{t.day}日 {t:%H:%M} {t.tzname()}</p>")
    head = f"<script>window.__QUOTE_STATE__ = {json.dumps(state, ensure_ascii=False)};</script>"
    return _page(q, f"{i.name} 株価", body, market, head)


def _ch(q: Quote, market: Market) -> str:
    i, t = q.instrument, q.local_time
    rows = [("Symbol", i.symbol), ("Letzter Kurs", money(q, q.price)),
            ("Veränderung", f"{_signed(f'{q.change:.2f}', q.change)} / "
                            f"{_signed(f'{q.change_percent}', q.change)}%"),
            ("Vortag", f"{q.previous_close}"), ("Eröffnung", f"{q.open}"),
            ("Tief", f"{q.day_low}"), ("Hoch", f"{q.day_high}"), ("Volumen", volume(q)),
            ("Börsenwert", market_cap(q)), ("Zeit", f"{t:%d.%m.%Y %H:%M:%S}"),
            ("Börse", i.locale.exchange)]
    table = "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows)
    body = f"<h1>{escape(i.name)}</h1><table>{table}</table>"
    return _page(q, f"{i.name} | Kurs", body, market)


def _gb(q: Quote, market: Market) -> str:
    i, t = q.instrument, q.local_time
    head = (f'<meta name="tickerSymbol" content="{i.symbol}"><meta name="price" '
            f'content="{q.price}"><meta name="priceCurrency" content="GBP">'
            f'<meta name="quoteTime" content="{t.isoformat()}">')
    change = f"{_signed(f'{q.change:.2f}', q.change)} ({abs(q.change_percent)}%)"
    body = (f'<h1>{escape(i.name)} plc</h1><p class="ticker">{i.locale.exchange}: {i.symbol}'
            f'</p><div class="price-box"><strong>{money(q, q.price)}</strong> <em>{change}</em>'
            f"</div><ul class=\"facts\"><li>Volume: {volume(q)}</li><li>Market cap: "
            f"{market_cap(q)}</li></ul><p>Last updated {t:%d %B %Y %H:%M} {t.tzname()}</p>")
    return _page(q, f"{i.name} plc share price", body, market, head)


LAYOUTS = {"table": _us, "definitions": _de, "rows": _fr, "state": _ja, "swiss": _ch,
           "meta": _gb}


def quote_page(market: Market, instrument: Instrument, tick: int) -> str:
    quote = market.quote(instrument, tick)
    return LAYOUTS[instrument.locale.layout](quote, market)


def _stamp(market: Market, tick: int) -> str:
    when = market.time_of(tick)
    return (f'<p>As of <time datetime="{when.isoformat()}">{when:%b %d, %Y %H:%M} UTC</time>'
            "</p>")


def index_page(market: Market, tick: int) -> str:
    """Every instrument, its last price and currency, linked to its quote page: a market
    table whose rows join the quote pages' quotes (the same session, the same ``as_of``)."""
    rows = "".join(
        f'<tr><td><a href="{i.path}">{i.symbol}</a></td><td>{escape(i.name)}</td>'
        f'<td class="price">{market.quote(i, tick).price}</td><td>{i.locale.currency}</td></tr>'
        for i in market.instruments
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Markets</title>'
        f"</head><body><h1>Markets</h1><p>{len(market.instruments)} instruments.</p>"
        f"{_stamp(market, tick)}"
        f"<table><tr><th>Symbol</th><th>Name</th><th>Last</th><th>Currency</th></tr>{rows}"
        "</table></body></html>"
    )


def watchlist_page(market: Market, tick: int) -> str:
    """A watch list: every instrument in a table of its own, with change, % change and
    volume, its prices as its locale writes them, its rows linked nowhere (their quotes
    are the watch list's: ``/market/watchlist.html#<symbol>``). No page links to it: a
    crawl of the market is the same with or without it; seed it to read it."""
    rows = []
    for instrument in market.instruments:
        q = market.quote(instrument, tick)
        rows.append(
            f"<tr><td>{instrument.symbol}</td><td>{escape(instrument.name)}</td>"
            f"<td>{money(q, q.price)}</td><td>{_signed(f'{q.change}', q.change)}</td>"
            f"<td>{_signed(f'{q.change_percent}', q.change)}%</td><td>{q.volume:,}</td></tr>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Watch list</title>'
        f"</head><body><h1>Watch list</h1>{_stamp(market, tick)}<table><thead><tr>"
        "<th>Symbol</th><th>Name</th><th>Last</th><th>Chg</th><th>Chg %</th><th>Volume</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></body></html>"
    )


def quotes_csv(market: Market, tick: int) -> str:
    lines = ["Symbol,Date,Time,Open,High,Low,Close,Volume"]
    for instrument in market.instruments:
        q = market.quote(instrument, tick)
        t = q.local_time
        lines.append(f"{instrument.endpoint_symbol},{t:%Y-%m-%d},{t:%H:%M:%S},{q.open},"
                     f"{q.day_high},{q.day_low},{q.price},{q.volume}")
    return "\n".join(lines) + "\n"


def quotes_json(market: Market, tick: int) -> str:
    quotes = []
    for instrument in market.instruments:
        q = market.quote(instrument, tick)
        quotes.append({"symbol": instrument.endpoint_symbol, "name": instrument.name,
                       "price": str(q.price), "currency": instrument.locale.currency,
                       "change": str(q.change), "volume": q.volume,
                       "time": q.as_of.isoformat()})
    return json.dumps({"quotes": quotes}, ensure_ascii=False)


def resolve(market: Market, path: str) -> tuple[int, str, str] | None:
    """``(status, body, content type)`` of a market path, or None when there is none."""
    tick = market.tick_now()
    if path == MARKET_PREFIX:
        return 200, index_page(market, tick), "text/html; charset=utf-8"
    if path == f"{MARKET_PREFIX}watchlist.html":
        return 200, watchlist_page(market, tick), "text/html; charset=utf-8"
    if path == f"{MARKET_PREFIX}quotes.csv":
        return 200, quotes_csv(market, tick), "text/csv; charset=utf-8"
    if path == f"{MARKET_PREFIX}quotes.json":
        return 200, quotes_json(market, tick), "application/json"
    prefix = f"{MARKET_PREFIX}q/"
    if path.startswith(prefix) and path.endswith(".html"):
        instrument = market.by_symbol.get(path[len(prefix) : -len(".html")])
        if instrument is not None:
            return 200, quote_page(market, instrument, tick), "text/html; charset=utf-8"
    return None
