"""Market pages written from a description, for the market-table reading's tests.

A market page lists many instruments, one a row, under column headers (symbol, name,
last price, change, % change, volume): an index's members, a market overview, a watch
list. Each builder renders the same instruments in one layout and one language:

* ``english_thead``: a ``<table>`` with a ``<thead>`` of ``<th>``, dollar prices with
  thousands commas, symbols linking to their quote pages, "As of ... EDT";
* ``german_first_row``: a ``<table>`` with no ``<thead>``, whose first row of ``<td>``
  is its headers, prices ``1.234,56 €``, no links, "Stand: ... Uhr";
* ``french_div_grid``: a grid of ``<div>`` rows of ``<span>`` cells whose first row
  is its headers, prices ``1 234,56 €`` (narrow no-break spaces), ``<time datetime>``;
* ``spanish_aria_grid``: ``role="table"``, a head ``<div>`` and a body ``<div>`` of
  ``role="row"`` rows, a "Valor" (name) column linking to quote pages;
* ``japanese_table``: a ``<table>`` with a ``<thead>``, ``コード | 銘柄名 | 現在値 |
  前日比 | 出来高``, yen prices.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from html import escape


def _unit(*parts: object) -> float:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Row:
    symbol: str
    name: str
    price: Decimal
    change: Decimal
    percent: Decimal
    volume: int


def rows(count: int, seed: int = 3, decimals: int = 2) -> list[Row]:
    found, taken = [], set()
    for index in range(count):
        symbol = ""
        attempt = 0
        while not symbol or symbol in taken:
            symbol = "".join(chr(65 + int(_unit(seed, index, attempt, n) * 26))
                             for n in range(3 + index % 2))
            attempt += 1
        taken.add(symbol)
        step = Decimal(1).scaleb(-decimals)
        price = Decimal(repr(1 + 3000 * _unit(seed, "p", index) ** 2)).quantize(step,
                                                                               ROUND_HALF_UP)
        change = (price * Decimal("0.04") * Decimal(repr(_unit(seed, "c", index) - 0.5))
                  ).quantize(step)
        percent = (change / (price - change) * 100).quantize(Decimal("0.01"))
        volume = int(100 + 40_000_000 * _unit(seed, "v", index) ** 3)
        found.append(Row(symbol, f"Example {symbol} Holdings {index}", price, change, percent,
                         volume))
    return found


def _group(value: Decimal, thousands: str, decimal: str, decimals: int = 2) -> str:
    text = f"{abs(value):,.{decimals}f}".replace(",", "\0").replace(".", decimal)
    return ("-" if value < 0 else "") + text.replace("\0", thousands)


def _signed(text: str, value: Decimal) -> str:
    return text if value < 0 else "+" + text


AS_OF = dt.datetime(2025, 3, 12, 20, 0, tzinfo=dt.UTC)  # 16:00 in New York, 21:00 in Paris


def english_thead(shown: list[Row]) -> str:
    body = "".join(
        f'<tr><td><a href="/quote/{r.symbol}">{r.symbol}</a></td><td>{escape(r.name)}</td>'
        f"<td>${_group(r.price, ',', '.')}</td><td>{_signed(f'{r.change}', r.change)}</td>"
        f"<td>{_signed(f'{r.percent}', r.change)}%</td><td>{r.volume:,}</td>"
        '<td><a href="/chart">Chart</a></td></tr>'
        for r in shown
    )
    return (
        '<!DOCTYPE html><html lang="en-US"><head><title>Index members</title></head><body>'
        '<nav><a href="/">Home</a></nav><h1>Example 30 Index: members</h1>'
        "<p>As of Mar 12, 2025 4:00 PM EDT</p><table class=\"members\"><thead><tr>"
        "<th>Symbol</th><th>Name</th><th>Last</th><th>Chg</th><th>% Chg</th><th>Volume</th>"
        f"<th></th></tr></thead><tbody>{body}</tbody></table></body></html>"
    )


def german_first_row(shown: list[Row]) -> str:
    body = "".join(
        f"<tr><td>{r.symbol}</td><td>{escape(r.name)}</td>"
        f"<td>{_group(r.price, '.', ',')} €</td>"
        f"<td>{_signed(_group(r.change, '.', ','), r.change)}</td>"
        f"<td>{_signed(_group(r.percent, '.', ','), r.change)} %</td>"
        f"<td>{_group(Decimal(r.volume), '.', ',', 0)}</td></tr>"
        for r in shown
    )
    return (
        '<!DOCTYPE html><html lang="de-DE"><head><title>Marktübersicht</title></head><body>'
        "<h1>Marktübersicht</h1><p>Stand: 12.03.2025 21:00 Uhr</p><table>"
        "<tr><td>Kürzel</td><td>Name</td><td>Kurs</td><td>Veränd.</td><td>Veränd. %</td>"
        f"<td>Volumen</td></tr>{body}</table></body></html>"
    )


def french_div_grid(shown: list[Row]) -> str:
    nnbsp = "\u202f"
    body = "".join(
        f'<div class="ligne"><span>{r.symbol}</span><span>{escape(r.name)}</span>'
        f"<span>{_group(r.price, nnbsp, ',')}\u00a0€</span>"
        f"<span>{_signed(_group(r.percent, '', ','), r.change)}\u00a0%</span>"
        f"<span>{_group(Decimal(r.volume), nnbsp, ',', 0)}</span></div>"
        for r in shown
    )
    return (
        '<!DOCTYPE html><html lang="fr-FR"><head><title>Palmarès</title></head><body>'
        '<h1>Palmarès du marché</h1><section class="palmares">'
        '<p>Cours au <time datetime="2025-03-12T21:00:00+01:00">12/03/2025 21h00</time></p>'
        '<div class="grille"><div class="ligne entete"><span>Mnémo</span><span>Libellé</span>'
        "<span>Cours</span><span>Var. %</span><span>Volume</span></div>"
        f"{body}</div></section></body></html>"
    )


def spanish_aria_grid(shown: list[Row]) -> str:
    body = "".join(
        f'<div role="row" class="fila"><div role="cell">{r.symbol}</div>'
        f'<div role="cell"><a href="/valor/{r.symbol.lower()}">{escape(r.name)}</a></div>'
        f'<div role="cell">{_group(r.price, ".", ",")}</div>'
        f'<div role="cell">{_signed(_group(r.change, ".", ","), r.change)}</div>'
        f'<div role="cell">{_signed(_group(r.percent, ".", ","), r.change)}%</div></div>'
        for r in shown
    )
    return (
        '<!DOCTYPE html><html lang="es-ES"><head><title>Ibex</title></head><body>'
        "<h1>Componentes del índice</h1><p>Fecha: 12/03/2025 · Hora: 21:00</p>"
        '<div role="table" class="tabla"><div class="cabecera"><div role="row">'
        '<div role="columnheader">Código</div><div role="columnheader">Valor</div>'
        '<div role="columnheader">Último</div><div role="columnheader">Dif.</div>'
        '<div role="columnheader">Dif. %</div></div></div>'
        f'<div class="cuerpo">{body}</div></div></body></html>'
    )


def japanese_table(shown: list[Row]) -> str:
    body = "".join(
        f"<tr><td>{r.symbol}</td><td>{escape(r.name)}</td><td>{_group(r.price, ',', '.', 1)}"
        f"</td><td>{_signed(f'{r.change:.1f}', r.change)}</td><td>{r.volume:,}株</td></tr>"
        for r in shown
    )
    return (
        '<!DOCTYPE html><html lang="ja-JP"><head><title>値上がり率ランキング</title></head>'
        "<body><h1>値上がり率ランキング</h1><p>更新日時: 2025年3月13日 05:00 JST</p>"
        "<table><thead><tr>"
        "<th>コード</th><th>銘柄名</th><th>現在値</th><th>前日比</th><th>出来高</th></tr>"
        f"</thead><tbody>{body}</tbody></table></body></html>"
    )


#: builder, the currency its prices are in, the decimals it shows, whether rows link
LAYOUTS: dict[str, tuple[Callable[[list[Row]], str], str, int]] = {
    "english_thead": (english_thead, "USD", 2),
    "german_first_row": (german_first_row, "EUR", 2),
    "french_div_grid": (french_div_grid, "EUR", 2),
    "spanish_aria_grid": (spanish_aria_grid, "EUR", 2),
    "japanese_table": (japanese_table, "JPY", 1),
}
