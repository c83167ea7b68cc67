"""The demo: a distributed crawl of the bundled shop with several workers.

Run through ``scripts/demo`` (which installs what is needed first). It starts a
private Redis (unless ``--redis-url``/``REDIS_URL`` is given) and the demo shop,
seeds the crawl with ``python -m master seed``, runs ``--workers`` real
``scrapy crawl ecommerce`` processes in parallel, shows progress, and ends with
``python -m master report``. ``--spider finance`` crawls the shop's market section
instead (quote pages of 300 instruments whose prices move every minute, seeded
from its index ``/market/``) with ``scrapy crawl finance`` workers. Products (and
quotes) go to PostgreSQL or MongoDB when ``POSTGRES_DSN``/``MONGO_URI`` are set,
else to the embedded SQLite store.
Everything it writes lives in ``.demo/`` (``DEMO_DIR`` in the environment: elsewhere).

Ctrl-C (the terminal's SIGINT, or SIGTERM) reaches the demo alone: its servers
(Redis, the shop, the dashboard) and its workers run in sessions of their own
(:func:`tools.processes.own_session`). It stops the workers with one SIGINT
each (each finishes what it fetches or hands back what it holds), prints
``python -m master report``, stops its servers and exits 0. A second Ctrl-C
while the workers stop kills them (their leases go back to the queue).

``--dashboard`` also starts ``python -m master serve`` and prints its address; the
demo then seeds nothing itself (paste the shop's address into the dashboard's form),
its workers wait for work instead of closing when idle (``--idle`` 0), and it runs
until Ctrl-C, which stops the workers gracefully and prints the report.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import redis

from crawler.browser.config import find_executable
from crawler.core.keys import CrawlKeys
from crawler.core.records import StatsFields
from crawler.policy.scope import STRATEGIES
from crawler.scheduling.lanes import QueueCount, count_queue
from demoshop.market import MARKET_PREFIX
from demoshop.process import ShopProcess
from demoshop.sitemaps import is_sitemap_path
from tools.processes import own_session
from tools.redis_server import RedisServer
from tools.workers import ROOT, WorkerProcess, kill_all, stop_all

# where the demo writes (its tests point it elsewhere)
DEMO_DIR = Path(os.environ.get("DEMO_DIR") or ROOT / ".demo")


def shown(path: Path) -> str:
    """A path as the demo prints it: relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def master(*args: str, env: dict[str, str]) -> int:
    return subprocess.call([sys.executable, "-m", "master", *args], cwd=ROOT, env=env)


def progress_line(client: redis.Redis, keys: CrawlKeys, started: float) -> str:
    with client.pipeline(transaction=False) as pipe:
        count_queue(pipe, keys.requests, True)  # and the pages that wait for a browser
        pipe.scard(keys.dupefilter)
        pipe.hget(keys.stats, StatsFields.ITEMS_STORED)
        counted, seen, stored = pipe.execute()
    queued = QueueCount().add(counted).total
    return (
        f"[{time.monotonic() - started:6.1f}s] queued {queued:>5}  seen {seen:>5}  "
        f"items stored {int(stored or 0):>5}"
    )


def requests_line(shop: ShopProcess, spider: str = "ecommerce") -> str:
    """What the shop served, by kind: the difference a strategy makes."""
    paths = [entry.path for entry in shop.read_access_log()]
    if spider == "finance":
        quotes = sum(1 for path in paths if path.startswith(f"{MARKET_PREFIX}q/"))
        return (
            f"demo: the shop served {len(paths)} requests: {quotes} quote pages, "
            f"{len(paths) - quotes} others (the market's index, robots.txt)"
        )
    products = shop.catalog.product_paths()
    robots = paths.count("/robots.txt")
    sitemaps = sum(1 for path in paths if is_sitemap_path(path))
    product_pages = sum(1 for path in paths if path in products)
    others = len(paths) - robots - sitemaps - product_pages
    return (
        f"demo: the shop served {len(paths)} requests: {product_pages} product pages, "
        f"{others} other pages, {sitemaps} sitemaps, {robots} robots.txt"
    )


def browser_line(count: int) -> str:
    """What the demo does with the shop's section built in the browser."""
    if find_executable(os.environ.get("BROWSER_EXECUTABLE", "")):
        return (
            f"demo: the shop's app section: {count} products rendered in chromium (/app/), "
            f"{count} read from their embedded state (/state/, no browser)"
        )
    return (
        f"demo: no chromium here (scripts/bootstrap-services installs it): the {count} "
        f"client-rendered products of /app/ will not be stored; the {count} of /state/ "
        "(embedded state, no browser) will"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/demo",
        description="Crawl the bundled demo shop with several workers sharing one Redis.",
    )
    parser.add_argument("--workers", type=int, default=3, help="worker processes (default 3)")
    parser.add_argument(
        "--spider",
        choices=("ecommerce", "finance"),
        default="ecommerce",
        help="ecommerce (default): the shop's products; finance: the quotes of its market "
        "section (/market/, 300 instruments whose prices move every minute)",
    )
    parser.add_argument(
        "--instruments",
        type=int,
        default=300,
        help="instruments of the shop's market section (default 300; linked from no product "
        "page: the products' crawl is the same)",
    )
    parser.add_argument(
        "--products", type=int, default=1000, help="products in the shop (default 1000)"
    )
    parser.add_argument(
        "--latency-ms", type=int, default=20, help="shop response latency (default 20)"
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        help="use this Redis instead of starting a private one (its crawl state is not reset)",
    )
    parser.add_argument(
        "--idle",
        type=int,
        default=None,
        help="MAX_IDLE_TIME_BEFORE_CLOSE (default 3 s; with --dashboard 0: never close)",
    )
    parser.add_argument(
        "--dashboard",
        action="store_true",
        help="also serve the dashboard (python -m master serve) and seed from it; "
        "runs until Ctrl-C",
    )
    parser.add_argument(
        "--dashboard-port",
        type=int,
        default=8800,
        help="the dashboard's port on 127.0.0.1 (default 8800)",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="auto",
        help="the seed's crawl strategy (default auto: sitemaps and links); compare the "
        "requests the shop served with --strategy sitemap",
    )
    parser.add_argument(
        "--sitemap-only",
        type=int,
        default=0,
        metavar="N",
        help="N of the products are linked from no page, only listed in the shop's sitemaps "
        "(default 0)",
    )
    parser.add_argument(
        "--browser-products",
        type=int,
        default=24,
        metavar="N",
        help="the shop's section built in the browser, linked from its home page: N products "
        "client-rendered (/app/: stored when chromium is installed) and the same N in a "
        "Next.js-like embedded state (/state/: read from the HTML); 0: no section (default 24)",
    )
    args = parser.parse_args(argv)
    if args.idle is None:
        args.idle = 0 if args.dashboard else 3
    return args


def dashboard_ready(process: subprocess.Popen[bytes], port: int, timeout: float = 60) -> bool:
    """Whether ``/healthz`` answers before ``timeout`` (False once the process exited)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            time.sleep(0.2)
    return False


def start_dashboard(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``python -m master serve`` on 127.0.0.1 (its log in .demo/dashboard.log)."""
    log = open(DEMO_DIR / "dashboard.log", "wb")  # noqa: SIM115 (the child holds it)
    return subprocess.Popen(
        [sys.executable, "-m", "master", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        **own_session(),
    )


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (kill, a container stop) ends the demo as Ctrl-C does


def wind_down(workers: list[WorkerProcess], env: dict[str, str], spider: str) -> None:
    """After Ctrl-C: stop the workers together (a second Ctrl-C kills them), then report."""
    print("\ndemo: stopping the workers gracefully (Ctrl-C again to force)", flush=True)
    try:
        stop_all(workers)
    except KeyboardInterrupt:
        print("demo: killing the workers (their leases go back to the queue)", flush=True)
        kill_all(workers)
    try:
        options = [] if spider == "ecommerce" else ["--spider", spider]
        print(f"demo: $ {' '.join(['python -m master report', *options])}", flush=True)
        master("report", *options, env=env)
    except KeyboardInterrupt:
        pass


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    DEMO_DIR.mkdir(exist_ok=True)
    for stale in [*DEMO_DIR.glob("worker-*.log"), DEMO_DIR / "shop-access.log"]:
        stale.unlink(missing_ok=True)
    redis_server = None
    if args.redis_url:
        redis_url = args.redis_url
        print(f"demo: using Redis at {redis_url}")
    else:
        data_dir = DEMO_DIR / "redis"
        shutil.rmtree(data_dir, ignore_errors=True)  # every demo starts a fresh crawl
        redis_server = RedisServer(data_dir=data_dir, appendonly=True, own_session=True).start()
        redis_url = redis_server.url
        print(
            f"demo: started a private Redis at {redis_url} (append-only, data in {shown(data_dir)})"
        )
    store = DEMO_DIR / "products.sqlite3"
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "ALLOW_PRIVATE_NETWORKS": "127.0.0.1,localhost",
        "MAX_IDLE_TIME_BEFORE_CLOSE": str(args.idle),
        # the demo shop is ours: no budget unless asked for
        "SITE_MAX_RPS": os.environ.get("SITE_MAX_RPS", "0"),
    }
    if not (env.get("POSTGRES_DSN") or env.get("MONGO_URI")):
        for stale in DEMO_DIR.glob("products.sqlite3*"):
            stale.unlink()
        env["EMBEDDED_STORE_PATH"] = str(store)
    workers: list[WorkerProcess] = []
    dashboard: subprocess.Popen[bytes] | None = None
    try:
        with ShopProcess(
            products=args.products,
            latency_ms=args.latency_ms,
            access_log=DEMO_DIR / "shop-access.log",
            sitemap_only=args.sitemap_only,
            market=args.instruments,
            # the section built in the browser is the product crawl's
            browser_products=args.browser_products if args.spider == "ecommerce" else 0,
            own_session=True,
        ) as shop:
            if args.spider == "finance":
                print(
                    f"demo: demo shop at {shop.url} ({args.products} products; market of "
                    f"{args.instruments} instruments at {shop.url}market/)"
                )
            else:  # the market is there too, linked from no product page
                print(f"demo: demo shop at {shop.url} ({args.products} products)")
            if shop.browser is not None:
                print(browser_line(len(shop.browser.products)))
            if args.dashboard:
                dashboard = start_dashboard(args.dashboard_port, env)
                if not dashboard_ready(dashboard, args.dashboard_port):
                    log = (DEMO_DIR / "dashboard.log").read_text(errors="replace")
                    print(f"demo: the dashboard did not start:\n{log[-3000:]}")
                    return 1
                print(f"demo: dashboard at http://127.0.0.1:{args.dashboard_port}/")
                print(f'demo: submit {shop.url} in its form "Submit URLs"; Ctrl-C ends the demo')
            else:
                seeds = DEMO_DIR / "urls.txt"
                seed = shop.url
                comment = "the demo shop's home page"
                if args.spider == "finance":
                    # the market's index; its links only (the shop's sitemaps list products)
                    meta = {"strategy": "navigation"}
                    seed = json.dumps({"url": f"{shop.url}market/", "meta": meta})
                    comment = "the market's index: its links lead to every quote page"
                elif args.strategy != "auto":
                    seed = json.dumps({"url": shop.url, "meta": {"strategy": args.strategy}})
                seeds.write_text(f"# {comment}\n{seed}\n")
                spider = ["--spider", args.spider] if args.spider != "ecommerce" else []
                print(f"demo: $ {' '.join(['python -m master seed', *spider, shown(seeds)])}")
                if master("seed", *spider, str(seeds), env=env) != 0:
                    return 1
            kind = "" if args.spider == "ecommerce" else f"{args.spider} "  # the default unnamed
            print(f"demo: starting {args.workers} {kind}workers (logs in .demo/worker-N.log)")
            started = time.monotonic()
            workers = [
                WorkerProcess(
                    f"demo-worker-{n}",
                    env,
                    DEMO_DIR / f"worker-{n}.log",
                    spider=args.spider,
                    own_session=True,
                )
                for n in range(1, args.workers + 1)
            ]
            client = redis.Redis.from_url(redis_url)
            keys = CrawlKeys(args.spider)
            try:
                while any(worker.running for worker in workers):
                    time.sleep(2)
                    print(progress_line(client, keys, started), flush=True)
            except KeyboardInterrupt:  # the workers stop while the shop still serves them
                wind_down(workers, env, args.spider)
                return 0
            failed = [w for w in workers if w.process.returncode != 0]
            for worker in failed:
                print(f"demo: {worker.worker_id} exited with {worker.process.returncode}:")
                print(worker.log()[-3000:])
            for worker in workers:
                for line in worker.log().splitlines():
                    if f"Spider ({worker.worker_id})" in line:
                        print("  " + line.split("] ", 1)[-1])
            spider = [] if args.spider == "ecommerce" else ["--spider", args.spider]
            print(f"demo: $ python -m master report {' '.join(spider)}".rstrip())
            master("report", *spider, env=env)
            print(requests_line(shop, args.spider))
            if "EMBEDDED_STORE_PATH" in env:
                where = shown(store)
                query = (
                    "select symbol, price, currency, volume, as_of from quotes limit 5"
                    if args.spider == "finance"
                    else "select url, name, price from products limit 5"
                )
                what = "quotes (and quote_history)" if args.spider == "finance" else "products"
                print(f"demo: {what} are in {where} (sqlite3 {where} '{query}')")
            return 1 if failed else 0
    except KeyboardInterrupt:
        wind_down(workers, env, args.spider)
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the servers stop in a moment
        for worker in workers:
            if worker.running:
                worker.stop()
        if dashboard is not None:
            dashboard.terminate()
            dashboard.wait(30)
        if redis_server is not None:
            redis_server.stop()


if __name__ == "__main__":
    sys.exit(main())
