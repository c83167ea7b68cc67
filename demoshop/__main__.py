"""``python -m demoshop``: run the demo shop on a loopback port until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import ipaddress
import math
import signal
import sys
import time
from collections.abc import Sequence

from demoshop.generated import KINDS

LISTENING_FORMAT = "demoshop listening on {url} ({products} products, {pages} pages)"


def loopback_host(value: str) -> str:
    """argparse type: a loopback address (``localhost`` means 127.0.0.1); anything else fails."""
    if value == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an IP address: the demo shop listens on loopback only "
            "(127.0.0.1, ::1 or localhost)"
        ) from None
    if not address.is_loopback:
        raise argparse.ArgumentTypeError(
            f"refusing to listen on {value}: the demo shop listens on loopback only "
            "(127.0.0.1, ::1 or localhost)"
        )
    return str(address)


def _non_negative(kind: type) -> object:
    def parse(value: str) -> object:
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if number < 0:
            raise argparse.ArgumentTypeError(f"must be >= 0: {value}")
        return number

    parse.__name__ = kind.__name__
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m demoshop",
        description=(
            "A deterministic local e-commerce site: the target of the demo, the tests and "
            "the benchmarks. Every page is rendered at start-up. The first line on stdout is "
            "'demoshop listening on http://HOST:PORT/ (P products, N pages)', where N is the "
            "number of pages a correct crawler fetches. Stops cleanly on SIGINT or SIGTERM."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--host", type=loopback_host, default="127.0.0.1",
        help="loopback address to listen on (any non-loopback address is refused)",
    )
    parser.add_argument(
        "--port", type=_non_negative(int), default=0, help="TCP port; 0 picks a free one"
    )
    parser.add_argument(
        "--products", type=_non_negative(int), default=200, help="number of products"
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="catalogue seed: same seed, same shop"
    )
    parser.add_argument(
        "--price-version", type=_non_negative(int), default=0,
        help="0 is the original prices; each other value reprices about a third of the "
        "products and flips the stock of a few (a later visit to the same shop)",
    )
    parser.add_argument(
        "--page-size", type=int, default=12, help="products per listing page (at least 1)"
    )
    parser.add_argument(
        "--latency-ms", type=_non_negative(float), default=0.0,
        help="delay every response by this many milliseconds (non-blocking)",
    )
    parser.add_argument(
        "--jitter-ms", type=_non_negative(float), default=0.0,
        help="add a random delay of 0 to this many milliseconds (seeded by --seed)",
    )
    parser.add_argument(
        "--crawl-delay", type=_non_negative(float), default=0.0,
        help="seconds of 'Crawl-delay:' in robots.txt (0: none)",
    )
    parser.add_argument(
        "--no-sitemaps", action="store_true",
        help="serve no sitemaps (robots.txt names none; /sitemap_index.xml is a 404)",
    )
    parser.add_argument(
        "--sitemap-only", type=_non_negative(int), default=0, metavar="N",
        help="the last N products are linked from no page: only the sitemaps list them",
    )
    parser.add_argument(
        "--changed-at", metavar="ISO_TIME", default=None,
        help="sitemap lastmod of the products changed by --price-version "
        "(default: when the shop starts)",
    )
    parser.add_argument(
        "--rate-limit", type=_non_negative(float), default=0.0, metavar="RPS",
        help="a token bucket of RPS requests a second (burst RPS); over it: 429 with "
        "Retry-After (robots.txt is always served; 0: no limit)",
    )
    parser.add_argument(
        "--retry-after", type=_non_negative(float), default=2.0, metavar="SECONDS",
        help="the Retry-After of the rate limiter's 429 answers",
    )
    parser.add_argument(
        "--fail-every", type=_non_negative(int), default=0, metavar="N",
        help="answer 503 to the first request of every N-th product page (0: never)",
    )
    parser.add_argument(
        "--outage-seconds", type=_non_negative(float), default=0.0, metavar="S",
        help="answer 503 to every page for S seconds, starting after --outage-after requests",
    )
    parser.add_argument(
        "--outage-after", type=_non_negative(int), default=0, metavar="K",
        help="requests served before the outage of --outage-seconds starts",
    )
    parser.add_argument(
        "--market", type=_non_negative(int), default=0, metavar="N",
        help="also serve a market section of N instruments under /market/ (linked from no "
        "other page): quote pages, an index, /market/quotes.csv and .json (0: none)",
    )
    parser.add_argument(
        "--market-tick", type=_non_negative(float), default=60.0, metavar="SECONDS",
        help="the market's prices move every SECONDS (whole minutes); 0: only when the "
        "process gets SIGUSR1",
    )
    parser.add_argument(
        "--generated", metavar="KIND", choices=KINDS, default=None,
        help="serve the catalogue through another shop's template (demoshop/generated.py): "
        "plain-lists (no classes, no structured data, category pages that are ordered "
        "lists) or templated (a delivery notice and a sold-out badge on every page, JSON-LD "
        "on two product pages of three), card-layouts (category pages with cards in several "
        "layouts, for listed products), or a defect shop with one defect the data checks "
        "catch (defect-stock, defect-price, defect-name, defect-rejected, "
        "defect-hidden-price: demoshop/defects.py); no sitemaps",
    )
    parser.add_argument(
        "--browser-products", type=_non_negative(int), default=0, metavar="N",
        help="serve a section built in the browser, linked from the home page, with N "
        "products: /app/ (client-rendered over a JSON API) and /state/ (a Next.js-like "
        "embedded state); 0: none (see demoshop/browserapp.py)",
    )
    parser.add_argument(
        "--access-log", metavar="PATH", default=None,
        help="append one tab-separated line per request to PATH: "
        "epoch_seconds, METHOD, path_with_query, status, user_agent",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.page_size < 1:
        build_parser().error("--page-size must be at least 1")
    if args.sitemap_only > args.products:
        build_parser().error("--sitemap-only must not exceed --products")
    if args.sitemap_only and args.no_sitemaps:
        build_parser().error("--sitemap-only needs the sitemaps (drop --no-sitemaps)")
    if args.market_tick % 60:
        build_parser().error("--market-tick must be whole minutes (60, 120, ...) or 0")

    from twisted.internet import reactor

    from demoshop.accesslog import AccessLogWriter
    from demoshop.catalog import Catalog
    from demoshop.generated import GeneratedShop
    from demoshop.limits import ShopLimits
    from demoshop.server import ShopServerFactory
    from demoshop.site import ShopSite

    started = time.monotonic()
    catalog = Catalog.build(
        products=args.products, seed=args.seed, price_version=args.price_version,
        page_size=args.page_size, sitemap_only=args.sitemap_only,
    )
    market = None
    if args.market:
        from demoshop.market import Market

        market = Market(args.market, seed=args.seed, tick=args.market_tick)
        # SIGUSR1 moves every price on by one tick (tests: prices moved between crawls)
        signal.signal(signal.SIGUSR1, lambda *_: reactor.callFromThread(market.advance))  # type: ignore[attr-defined]
    if args.generated:
        from demoshop.generated import build

        site: ShopSite | GeneratedShop = build(args.generated, catalog)
    else:
        site = ShopSite(
            catalog, crawl_delay=args.crawl_delay, market=market,
            browser_products=args.browser_products,
        )
    access_log = AccessLogWriter(args.access_log) if args.access_log else None
    factory = ShopServerFactory(
        site, access_log, latency=args.latency_ms / 1000, jitter=args.jitter_ms / 1000,
        seed=args.seed, reactor=reactor,
        limits=ShopLimits(
            rate_limit=args.rate_limit, retry_after=args.retry_after,
            fail_every=args.fail_every, outage_after=args.outage_after,
            outage_seconds=args.outage_seconds,
        ),
    )
    try:
        port = reactor.listenTCP(  # type: ignore[attr-defined]
            args.port, factory, backlog=1024, interface=args.host
        )
    except Exception as exc:  # CannotListenError: the port is taken
        print(f"demoshop: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    # A SIGTERM/SIGINT between the listening line and reactor.run() (which installs
    # Twisted's own handlers) must stop the shop cleanly too, not kill it.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: reactor.callFromThread(reactor.stop))  # type: ignore[attr-defined]
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{port.getHost().port}/"
    if not args.no_sitemaps and not args.generated:
        changed_at = args.changed_at or time.strftime(
            "%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(math.ceil(time.time()))
        )
        site.publish_sitemaps(url, changed_at)
    print(
        LISTENING_FORMAT.format(url=url, products=len(catalog.products), pages=site.page_count),
        flush=True,
    )
    browser = getattr(site, "browser", None)  # the section built in the browser, if any
    print(
        f"demoshop: {len(catalog.categories)} categories, {len(catalog.leaves())} leaves, "
        f"{site.sitemap_count} sitemaps, {args.sitemap_only} products only in them, "
        f"{args.market} market instruments, "
        f"{len(browser.products) if browser else 0} products in the browser section, "
        f"rendered in {time.monotonic() - started:.2f}s; "
        f"access log: {args.access_log or 'off'}",
        file=sys.stderr,
        flush=True,
    )
    try:
        reactor.run()  # type: ignore[attr-defined]  # SIGINT/SIGTERM stop it
    finally:
        if access_log is not None:
            access_log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
