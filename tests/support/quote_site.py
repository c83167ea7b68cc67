"""A second quote site, unlike the demo shop's market, for the finance spider's tests.

Written apart from the extractor's vocabulary tables and from ``demoshop/market``:
a Spanish site (``lang="es-ES"``, decimal comma) with its own markup: no price in
the heading, the symbol in a line of codes (``Código: BEJ · ISIN: ... · Mercado:
BME``), the price in a box with its currency code beside it (or a bare ``$`` for
the Mexican exchange), the data in a list of spans and ``<strong>``, the date and
the time under two labels, news with their own ``<time>`` and a table of other
instruments with prices. Quote pages are addressed by ISIN in a query string
(``/valor/ficha?isin=ES0000000007``), found from a paginated index
(``/cotizaciones/?pagina=N``) and a sitemap.

The site runs in a thread of the test process (:class:`QuoteSite`, a context
manager): the workers fetch it over loopback like any site. ``advance()`` moves
every price (a new session, an hour later); :meth:`QuoteSite.quote` is what a page
shows for a session, so the tests compare the stored quotes with it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

PER_PAGE = 40
NEWS = (
    '<section class="noticias"><h2>Noticias</h2><ul>\n'
    '<li><time datetime="2024-01-02T10:00:00+01:00">2 ene 2024</time> Resultados anuales</li>\n'
    '<li><time datetime="2023-11-05T09:30:00+01:00">5 nov 2023</time> Junta general</li>'
    "</ul></section>"
)
# timeless pages: no date anywhere (a dated news item is read as the quote's time: see
# the report of issue 45)
NEWS_UNDATED = """<section class="noticias"><h2>Noticias</h2><ul>
<li>Resultados anuales</li><li>Junta general</li></ul></section>"""
EPOCH = dt.datetime(2025, 3, 10, 16, 30, tzinfo=dt.UTC)
# exchange, currency, how the price shows its currency, zone of the times shown
MARKETS = (
    ("BME", "EUR", "code", "Europe/Madrid"),
    ("NYSE", "USD", "code", "America/New_York"),
    ("BMV", "MXN", "dollar", "America/Mexico_City"),
)
WORDS = ("Banco", "Grupo", "Energía", "Construcciones", "Aceros", "Textil", "Minera",
         "Hoteles", "Farmacéutica", "Telecom", "Aerolíneas", "Seguros")
PLACES = ("Ibérica", "del Norte", "Atlántico", "Andina", "Central", "del Sur", "Levante")


def _unit(*parts: object) -> float:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _es(value: Decimal, decimals: int = 2) -> str:
    """A number as Spanish pages write it: 1.234.567,89."""
    text = f"{abs(value):,.{decimals}f}".replace(",", " ").replace(".", ",").replace(" ", ".")
    return ("-" if value < 0 else "") + text


@dataclass(frozen=True)
class Instrument:
    index: int
    symbol: str
    isin: str
    name: str
    exchange: str
    currency: str
    shows: str  # "code" or "dollar"
    zone: str
    base: float

    @property
    def path(self) -> str:
        return f"/valor/ficha?isin={self.isin}"


@dataclass(frozen=True)
class SiteQuote:
    instrument: Instrument
    session: int
    as_of: dt.datetime
    price: Decimal
    previous_close: Decimal
    volume: int


class QuoteSite:
    """The site, its instruments and its sessions (see the module's doc)."""

    def __init__(
        self, count: int = 120, seed: int = 7, latency: float = 0.0, timeless: bool = False
    ) -> None:
        self.seed = seed
        self.timeless = timeless  # its quote pages show no time nor date at all
        self.latency = latency  # seconds each answer waits (a slower site)
        self.session = 0
        self.fetches: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.instruments: list[Instrument] = []
        taken: set[str] = set()
        for index in range(count):
            exchange, currency, shows, zone = MARKETS[index % len(MARKETS)]
            symbol = ""
            attempt = 0
            while not symbol or symbol in taken:
                symbol = "".join(chr(65 + int(_unit(seed, index, attempt, n) * 26))
                                 for n in range(3 + (index + attempt) % 2))
                attempt += 1
            taken.add(symbol)
            name = f"{WORDS[index % len(WORDS)]} {PLACES[index % len(PLACES)]} {index}"
            base = 2 + 400 * _unit(seed, "base", index) ** 2
            self.instruments.append(Instrument(
                index, symbol, f"ES{index:010d}", name, exchange, currency, shows, zone, base,
            ))
        self.by_isin = {i.isin: i for i in self.instruments}
        self.server: ThreadingHTTPServer | None = None
        self.url = ""

    # --- sessions -----------------------------------------------------------------------
    def advance(self) -> None:
        """A new session: every price moves, an hour later."""
        with self._lock:
            self.session += 1

    def _price(self, instrument: Instrument, session: int) -> Decimal:
        move = 1 + 0.05 * (_unit(self.seed, "p", instrument.index, session) - 0.5)
        return Decimal(repr(instrument.base * move)).quantize(Decimal("0.001"), ROUND_HALF_UP)

    def quote(self, instrument: Instrument, session: int) -> SiteQuote:
        volume = int(1000 + 9_000_000 * _unit(self.seed, "v", instrument.index, session) ** 2)
        return SiteQuote(
            instrument, session, EPOCH + dt.timedelta(hours=session),
            self._price(instrument, session), self._price(instrument, session - 1), volume,
        )

    def url_of(self, instrument: Instrument) -> str:
        return self.url.rstrip("/") + instrument.path

    # --- pages ----------------------------------------------------------------------------
    def quote_page(self, instrument: Instrument) -> str:
        q = self.quote(instrument, self.session)
        local = q.as_of.astimezone(ZoneInfo(instrument.zone))
        change = q.price - q.previous_close
        pct = (change / q.previous_close * 100).quantize(Decimal("0.01"))
        sign = "+" if change >= 0 else ""
        if instrument.shows == "code":
            price = (f'<span class="cifra">{_es(q.price, 3)}</span> '
                     f'<span class="moneda">{instrument.currency}</span>')
        else:
            price = f'<span class="cifra">$ {_es(q.price, 3)}</span>'
        low = min(q.price, q.previous_close) * Decimal("0.98")
        high = max(q.price, q.previous_close) * Decimal("1.02")
        cap = (q.price * 80_000_000 / 1_000_000).quantize(Decimal("0.1"))
        others = "".join(
            f'<tr><td><a href="{o.path}">{o.name}</a></td>'
            f"<td>{_es(self.quote(o, self.session).price, 3)}</td><td>{o.currency}</td></tr>"
            for o in self.instruments[instrument.index + 1 : instrument.index + 4]
        )
        news = NEWS_UNDATED if self.timeless else NEWS
        stamp = "" if self.timeless else (
            f'<p class="sello">Fecha: <time>{local:%d/%m/%Y}</time> · '
            f"Hora: <time>{local:%H:%M:%S}</time>\n</p>"
        )
        return f"""<!DOCTYPE html><html lang="es-ES"><head><meta charset="utf-8">
<title>{instrument.name} | Bolsa de Ejemplo</title></head><body>
<div id="cabecera"><a href="/">Inicio</a> <a href="/cotizaciones/">Cotizaciones</a></div>
<article class="ficha-valor"><header><h1 class="nombre">{instrument.name}</h1>
<p class="codigos">Código: {instrument.symbol} · ISIN: {instrument.isin} · \
Mercado: {instrument.exchange}</p>
</header><section class="precio"><div class="ultimo"><span class="etiqueta">Último</span>
{price}</div><div class="dif">Dif. <span>{sign}{_es(change, 3)}</span>
<span>({sign}{_es(pct)} %)</span></div></section>
<ul class="datos"><li><span>Apertura</span> <strong>{_es(q.previous_close, 3)}</strong></li>
<li><span>Máximo</span> <strong>{_es(high, 3)}</strong></li>
<li><span>Mínimo</span> <strong>{_es(low, 3)}</strong></li>
<li><span>Cierre anterior</span> <strong>{_es(q.previous_close, 3)}</strong></li>
<li><span>Volumen (títulos)</span> <strong>{_es(Decimal(q.volume), 0)}</strong></li>
<li><span>Capitalización</span> <strong>{_es(cap, 1)} M</strong></li></ul>
{stamp}</article>
{news}
<section class="relacionados"><h2>Otros valores</h2><table>{others}</table></section>
<footer>Bolsa de Ejemplo · Datos con 15 minutos de retraso</footer></body></html>"""

    def index_page(self, page: int) -> str | None:
        start = (page - 1) * PER_PAGE
        shown = self.instruments[start : start + PER_PAGE]
        if not shown:
            return None
        rows = "".join(
            f'<div class="fila"><a href="{i.path}">{i.name}</a> '
            f"<span>{_es(self.quote(i, self.session).price, 3)}</span></div>"
            for i in shown
        )
        pages = (len(self.instruments) + PER_PAGE - 1) // PER_PAGE
        following = f'<a rel="next" href="/cotizaciones/?pagina={page + 1}">Siguiente</a>' \
            if page < pages else ""
        return (f'<!DOCTYPE html><html lang="es-ES"><head><title>Cotizaciones, página {page}'
                f"</title></head><body><h1>Cotizaciones</h1>{rows}<p>{following}</p></body></html>")

    def respond(self, target: str) -> tuple[int, str, str]:
        parts = urlsplit(target)
        params = parse_qs(parts.query)
        with self._lock:
            self.fetches[target] += 1
        if parts.path == "/robots.txt":
            return 200, f"User-agent: *\nDisallow: /buscar\nSitemap: {self.url}sitemap.xml\n", \
                "text/plain"
        if parts.path == "/sitemap.xml":
            urls = "".join(f"<url><loc>{self.url_of(i).replace('&', '&amp;')}</loc></url>"
                           for i in self.instruments)
            body = ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
                    f'schemas/sitemap/0.9">{urls}</urlset>')
            return 200, body, "application/xml"
        if parts.path == "/":
            return 200, ('<html lang="es"><body><h1>Bolsa de Ejemplo</h1><a href="/cotizaciones/">'
                         "Cotizaciones</a></body></html>"), "text/html; charset=utf-8"
        if parts.path == "/cotizaciones/":
            raw = params.get("pagina", ["1"])[0]
            page = int(raw) if raw.isdigit() else 0
            body = self.index_page(page) if page >= 1 else None
            if body is not None:
                return 200, body, "text/html; charset=utf-8"
        if parts.path == "/valor/ficha":
            instrument = self.by_isin.get(params.get("isin", [""])[0])
            if instrument is not None:
                return 200, self.quote_page(instrument), "text/html; charset=utf-8"
        return 404, "<html><body><h1>No encontrado</h1></body></html>", "text/html; charset=utf-8"

    def page_fetches(self) -> Counter[str]:
        """Fetches of quote pages by path and query."""
        with self._lock:
            return Counter({t: n for t, n in self.fetches.items() if t.startswith("/valor/")})

    # --- the server -----------------------------------------------------------------------
    def __enter__(self) -> QuoteSite:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                if site.latency:
                    time.sleep(site.latency)
                status, body, kind = site.respond(self.path)
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a worker killed mid-request resets its connection: nothing to say

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
