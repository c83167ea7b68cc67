"""``ShopProcess``: run ``python -m demoshop`` in a subprocess (tests, demo, benchmarks).

::

    with ShopProcess(products=50, latency_ms=5) as shop:
        urllib.request.urlopen(shop.url + "c/books/")
        assert {e.path for e in shop.read_access_log()} == {"/c/books/"}
        expected = shop.catalog.crawlable_paths()

``stop()`` ends the process (SIGTERM, then SIGKILL after 5 s); the access log
stays readable until ``cleanup()`` (called by ``__exit__``), which also deletes
the temporary directory the default access log lives in.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from demoshop.accesslog import AccessEntry, read_access_log
from demoshop.browserapp import BrowserSection
from demoshop.catalog import Catalog
from demoshop.generated import build as build_generated

if TYPE_CHECKING:
    from demoshop.market import Market

_LISTENING = re.compile(
    r"^demoshop listening on (?P<url>http://(?P<host>\[[^\]]+\]|[^:/]+):(?P<port>\d+)/) "
    r"\((?P<products>\d+) products, (?P<pages>\d+) pages\)$"
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)


class ShopStartError(RuntimeError):
    """The shop did not print its listening line in time, or exited."""


class ShopProcess:
    """The demo shop in a subprocess on a free loopback port (or ``port``).

    Attributes once started: ``url`` (``http://127.0.0.1:<port>/``), ``port``,
    ``access_log`` (Path), ``catalog`` (the same ``Catalog``, built in-process),
    ``browser`` (the :class:`~demoshop.browserapp.BrowserSection` of ``browser_products``,
    else None),
    ``pages`` (the count the shop printed), ``process`` (the ``Popen``).
    """

    def __init__(
        self,
        products: int = 200,
        seed: int = 1,
        price_version: int = 0,
        latency_ms: float = 0,
        jitter_ms: float = 0,
        access_log: str | os.PathLike[str] | None = None,
        page_size: int = 12,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 10.0,
        crawl_delay: float = 0,
        sitemaps: bool = True,
        sitemap_only: int = 0,
        changed_at: str | None = None,
        rate_limit: float = 0,
        retry_after: float = 2.0,
        fail_every: int = 0,
        outage_seconds: float = 0,
        outage_after: int = 0,
        market: int = 0,
        market_tick: float = 60.0,
        generated: str | None = None,
        browser_products: int = 0,
        own_session: bool = False,
    ) -> None:
        #: in a session of its own: a terminal's Ctrl-C does not reach it (the demo); it
        #: ends (SIGTERM) when the thread that started it dies
        self.own_session = own_session
        # the market section (demoshop/market.py): 0 instruments, none
        self.market = market
        self.market_tick = market_tick
        self.crawl_delay = crawl_delay
        self.browser_products = browser_products
        self.sitemaps = sitemaps
        self.sitemap_only = sitemap_only
        self.changed_at = changed_at
        # the shop's defences (demoshop/limits.py)
        self.limits = {
            "--rate-limit": rate_limit,
            "--retry-after": retry_after,
            "--fail-every": fail_every,
            "--outage-seconds": outage_seconds,
            "--outage-after": outage_after,
        }
        self.products = products
        self.seed = seed
        self.price_version = price_version
        self.latency_ms = latency_ms
        self.jitter_ms = jitter_ms
        self.page_size = page_size
        self.host = host
        self.requested_port = port
        self.startup_timeout = startup_timeout
        self._tmpdir: str | None = None
        if access_log is None:
            self._tmpdir = tempfile.mkdtemp(prefix="demoshop-")
            access_log = Path(self._tmpdir) / "access.log"
        self.access_log = Path(access_log)
        catalog = Catalog.build(
            products=products, seed=seed, price_version=price_version, page_size=page_size,
            sitemap_only=sitemap_only,
        )
        #: the shop's own account of its pages: its catalogue, or the generated shop's
        #: (``generated``: a kind of :mod:`demoshop.generated`, same questions answered)
        self.generated = generated
        self.catalog: Any = catalog if generated is None else build_generated(generated, catalog)
        # the section built in the browser (demoshop/browserapp.py), when asked for
        self.browser = BrowserSection(catalog, browser_products) if browser_products else None
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.port = 0
        self.pages = 0
        self._stderr: IO[str] | None = None

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "demoshop",
            "--host", self.host,
            "--port", str(self.requested_port),
            "--products", str(self.products),
            "--seed", str(self.seed),
            "--price-version", str(self.price_version),
            "--page-size", str(self.page_size),
            "--latency-ms", str(self.latency_ms),
            "--jitter-ms", str(self.jitter_ms),
            "--crawl-delay", str(self.crawl_delay),
            "--access-log", str(self.access_log),
            "--sitemap-only", str(self.sitemap_only),
            "--browser-products", str(self.browser_products),
            *([] if self.sitemaps else ["--no-sitemaps"]),
            *(["--changed-at", self.changed_at] if self.changed_at else []),
            *(["--generated", self.generated] if self.generated else []),
            *(part for name, value in self.limits.items() for part in (name, str(value))),
            "--market", str(self.market),
            "--market-tick", str(self.market_tick),
        ]

    def start(self) -> ShopProcess:
        if self.process is not None:
            raise RuntimeError("the shop is already running")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH", "")) if p
        )
        env["PYTHONUNBUFFERED"] = "1"
        self._stderr = tempfile.TemporaryFile("w+", prefix="demoshop-stderr-")
        # a session of its own, and ended when the thread that started it dies (a demo
        # killed outright leaves no shop behind: seen after a test killed a stuck demo)
        session: dict[str, Any] = {"start_new_session": False}
        if self.own_session:
            from tools.processes import own_session

            session = own_session()
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
            **session,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(
            target=_drain, args=(self.process.stdout, lines), name="demoshop-stdout", daemon=True
        ).start()
        try:
            first = lines.get(timeout=self.startup_timeout)
        except queue.Empty:
            self._failed(f"the demo shop did not start within {self.startup_timeout:g} s")
        match = _LISTENING.match((first or "").rstrip("\n"))
        if match is None:
            self._failed(f"the demo shop did not start (first line {first!r})")
        self.url = match["url"]
        self.port = int(match["port"])
        self.pages = int(match["pages"])
        return self

    def _failed(self, what: str) -> NoReturn:
        """Stop, keep the reason, clean up (``__exit__`` will not run) and raise."""
        exited = False
        if self.process is not None:
            try:  # stdout closed: the process is exiting; let its status arrive
                self.process.wait(1.0)
                exited = True
            except subprocess.TimeoutExpired:
                pass
        status = self.stop()
        detail = f"exit status {status}; " if exited else ""
        stderr = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            stderr = self._stderr.read()[-2000:].strip()
        self.cleanup()
        raise ShopStartError(f"{what}: {detail}stderr: {stderr or '(empty)'}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 5.0) -> int | None:
        """Stop the shop; returns its exit status (None if it was not running)."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
        return process.returncode

    def cleanup(self) -> None:
        """Stop the shop and delete the temporary access log directory, if it made one."""
        self.stop()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def market_model(self) -> Market:
        """The shop's market (:mod:`demoshop.market`), built in-process: what its pages show."""
        from demoshop.market import Market

        return Market(self.market, seed=self.seed, tick=self.market_tick)

    def advance_market(self) -> None:
        """Move every price of the market on by one tick (SIGUSR1 to the shop)."""
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError("the shop is not running")
        self.process.send_signal(signal.SIGUSR1)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def read_access_log(self) -> list[AccessEntry]:
        """Every request the shop has logged so far, in arrival order."""
        return read_access_log(self.access_log)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[AccessEntry]:
        """The access log once it holds at least ``count`` lines (or at ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            entries = self.read_access_log()
            if len(entries) >= count or time.monotonic() > deadline:
                return entries
            time.sleep(0.02)

    def page_fetches(self) -> list[str]:
        """Paths requested so far, robots.txt and sitemaps aside (the pages), in order."""
        from demoshop.sitemaps import is_sitemap_path

        return [
            entry.path
            for entry in self.read_access_log()
            if entry.path != "/robots.txt" and not is_sitemap_path(entry.path)
        ]

    def expected_products(self) -> dict[str, dict[str, Any]]:
        """``Catalog.expected_products`` keyed by absolute URL on this shop."""
        return self.catalog.expected_products(self.url)

    def __enter__(self) -> ShopProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<ShopProcess {self.url or '(not started)'} {state}>"


def _drain(stream: IO[str] | None, lines: queue.Queue[str | None]) -> None:
    """Hand the first line over, then keep reading so the pipe never fills up."""
    if stream is None:
        lines.put(None)
        return
    try:
        lines.put(stream.readline() or None)
        for _ in stream:
            pass
    except (OSError, ValueError):
        pass
