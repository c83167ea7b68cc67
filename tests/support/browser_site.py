"""Pages that only a browser shows, and pages that try what a rendered page may not (loopback).

Every page is an application shell whose script builds the product from
``/api/product.json`` (name, price, stock, SKU), so a page rendered to the end
gives a product. Besides:

``/refs``      reaches for a forbidden address (``forbidden``, e.g. a canary on
               127.0.0.2) every way a page can: a script, a stylesheet, an image, a
               preconnect, a frame, fetch, XHR, a WebSocket, a beacon, an EventSource,
               a redirect of its own site's (``/to-forbidden``), a popup, a navigation;
               and opens a dialog
``/hang``      a script that never ends (the page never loads), after ``/hang.css``
``/endless``   a page of 3 MB that grows for ever and fetches more for ever (an endless
               scroll)
``/ok``        nothing more

    with BrowserSite(forbidden=canary.url) as site:
        site.url + "refs"
"""

from __future__ import annotations

import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from crawler.browser.config import find_executable

PRODUCT = {"name": "Rendered Lamp", "price": "$42.50", "stock": "In stock", "sku": "RL-42"}

BUILD = """<script>
fetch("/api/product.json").then(r => r.json()).then(p => {
  const a = document.createElement("article");
  a.innerHTML = `<h1>${p.name}</h1><p class="price"><span class="price-now">${p.price}</span></p>
    <p class="stock">${p.stock}</p><form class="add-to-cart"><button>Add to cart</button></form>
    <table class="product-codes"><tr><th>SKU</th><td>${p.sku}</td></tr></table>`;
  document.getElementById("root").appendChild(a);
});
</script>"""


def shell(head: str = "", script: str = "") -> bytes:
    return (
        f'<!doctype html><html lang="en-US"><head><title>Shop</title>{head}</head><body>'
        f'<div id="root"></div>{BUILD}{script}</body></html>'
    ).encode()


def refs_page(forbidden: str) -> bytes:
    f = forbidden.rstrip("/")
    ws = "ws" + f[4:]
    head = (
        f'<link rel="preconnect" href="{f}/"><link rel="dns-prefetch" href="{f}/">'
        f'<link rel="stylesheet" href="{f}/style.css"><script src="{f}/script.js"></script>'
    )
    script = f"""<img src="{f}/image.png"><img src="/own-image.png">
<iframe src="{f}/frame"></iframe>
<script>
fetch("{f}/fetch").catch(() => 0);
const x = new XMLHttpRequest(); x.open("GET", "{f}/xhr"); x.send();
try {{ new WebSocket("{ws}/ws"); }} catch (e) {{}}
navigator.sendBeacon("{f}/beacon", "x");
try {{ new EventSource("{f}/events"); }} catch (e) {{}}
fetch("/to-forbidden").catch(() => 0);
window.open("{f}/popup");
alert("hello");
setTimeout(() => {{ location.href = "{f}/away"; }}, 50);
</script>"""
    return shell(head, script)


# the stylesheet is fetched (the site sees /hang.css) before the script runs: the page is
# in its renderer, about to loop for ever
HANG = shell(
    head='<link rel="stylesheet" href="/hang.css">', script="<script>while (true) {}</script>"
)
# past any size budget of the tests from the start (3 MB of text: whatever the speed of
# the machine), then growing for ever
ENDLESS = shell(
    script="""<script>
const start = document.createElement("p"); start.textContent = "big ".repeat(750000);
document.body.appendChild(start);
const chunk = "scroll ".repeat(40000);
setInterval(() => { const p = document.createElement("p"); p.textContent = chunk;
  document.body.appendChild(p); }, 10);
(function more() { fetch("/more").then(() => more(), () => more()); })();
</script>"""
)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        with self.server.lock:
            self.server.requests.append(self.path)

    def _send(self, status: int, body: bytes, kind: str = "text/html", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        pages = {"/refs": refs_page(self.server.forbidden), "/hang": HANG, "/endless": ENDLESS,
                 "/ok": shell()}
        if path in pages:
            self._send(200, pages[path])
        elif path == "/api/product.json":
            self._send(200, json.dumps(PRODUCT).encode(), "application/json")
        elif path == "/to-forbidden":
            self._send(302, b"", Location=self.server.forbidden.rstrip("/") + "/redirected")
        elif path == "/hang.css":
            self._send(200, b"h1 { color: black }", "text/css")
        elif path == "/more":
            self._send(200, b"more", "text/plain")
        else:
            self._send(404, b"not here", "text/plain")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    forbidden: str
    requests: list[str]
    lock: threading.Lock


class BrowserSite:
    def __init__(self, forbidden: str = "http://127.0.0.2:9/") -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.forbidden = forbidden
        self.server.requests = []
        self.server.lock = threading.Lock()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    @property
    def requests(self) -> list[str]:
        with self.server.lock:
            return list(self.server.requests)

    def __enter__(self) -> BrowserSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


_STAT = re.compile(r"^[ {]'([\w/.:-]+)': (\d+),?$", re.M)


def logged_stats(log: str) -> dict[str, int]:
    """The whole-number stats a worker dumped in its log when it closed (the last dump)."""
    dump = log.rsplit("Dumping Scrapy stats:", 1)[-1] if "Dumping Scrapy stats:" in log else ""
    return {name: int(value) for name, value in _STAT.findall(dump)}


def chromium_or_skip() -> None:
    """Skip without Debian's chromium (scripts/bootstrap-services installs it); under
    ``CI=true`` a missing browser fails the test instead."""
    if find_executable(""):
        return
    message = "no chromium: scripts/bootstrap-services installs it (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
