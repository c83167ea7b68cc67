"""A small site of nasty pages for the workers (loopback only).

``/`` links to every case; ``HostileSite.paths`` names them. Run it in a thread:

    with HostileSite() as site:
        site.url  # http://127.0.0.1:<port>/
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

PRODUCT = """<!doctype html><html><head><title>{name}</title>
<script type="application/ld+json">{{"@context":"https://schema.org","@type":"Product",
"name":"{name}","sku":"{sku}","offers":{{"@type":"Offer","price":"{price}",
"priceCurrency":"USD","availability":"https://schema.org/InStock"}}}}</script></head>
<body><h1>{name}</h1><p class="price">${price}</p><p>In stock</p>
<button>Add to cart</button><a href="/">Home</a></body></html>"""

NO_CURRENCY = """<!doctype html><html><head><title>Mystery box</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product",
"name":"Mystery box","sku":"MB-1","offers":{"@type":"Offer","price":"12.50",
"availability":"https://schema.org/InStock"}}</script></head>
<body><h1>Mystery box</h1><p class="price">12.50</p><button>Add to cart</button></body></html>"""

LINKS = [
    "/p/good-1.html",
    "/p/good-2.html",
    "/p/no-currency.html",
    "/error",
    "/not-found",
    "/slow",
    "/huge",
    "/redirect-loop",
    "/to-private",
    "/malformed",
    "/data",
]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        self.server.requests.append(self.path)

    def _send(
        self,
        status: int,
        body: bytes = b"",
        ctype: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path
        if path == "/robots.txt":
            return self._send(200, b"User-agent: *\nDisallow:\n", "text/plain")
        if path == "/":
            links = "".join(f'<a href="{link}">{link}</a> ' for link in LINKS)
            return self._send(200, f"<html><body><h1>Hostile</h1>{links}</body></html>".encode())
        if path.startswith("/p/good-"):
            n = path[len("/p/good-") : -len(".html")]
            page = PRODUCT.format(name=f"Good product {n}", sku=f"G-{n}", price=f"{n}9.99")
            return self._send(200, page.encode())
        if path == "/p/no-currency.html":
            return self._send(200, NO_CURRENCY.encode())
        if path == "/error":
            return self._send(500, b"<h1>Internal error</h1>")
        if path == "/slow":
            time.sleep(self.server.slow_seconds)
            return self._send(200, b"<h1>too late</h1>")
        if path == "/huge":
            return self._send(
                200, b"<html><body>" + b"x" * self.server.huge_bytes + b"</body></html>"
            )
        if path in ("/redirect-loop", "/redirect-loop-2"):
            other = "/redirect-loop-2" if path == "/redirect-loop" else "/redirect-loop"
            return self._send(302, headers={"Location": other})
        if path == "/to-private":
            # loopback, but not in ALLOW_PRIVATE_NETWORKS: refused before any connection
            return self._send(
                302, headers={"Location": f"http://127.0.0.2:{self.server.server_port}/"}
            )
        if path.startswith("/redirect?to="):
            # an open redirect (not linked from /): wherever the query says
            target = unquote(path[len("/redirect?to=") :])
            return self._send(302, headers={"Location": target})
        if path == "/malformed":
            body = b'<html><body><h1>Broken <div><p>unclosed <a href="/p/good-1.html">x\xff\xfe<<<'
            return self._send(200, body)
        if path == "/data":
            return self._send(200, bytes(range(256)) * 8, "application/octet-stream")
        return self._send(404, b"<h1>Not found</h1>")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[str]
    slow_seconds: float
    huge_bytes: int

    def handle_error(self, request: object, client_address: object) -> None:
        # clients that give up (timeouts, oversized bodies) close the connection: expected
        pass


class HostileSite:
    def __init__(self, slow_seconds: float = 3.0, huge_bytes: int = 300_000) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.requests = []
        self.server.slow_seconds = slow_seconds
        self.server.huge_bytes = huge_bytes
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/"

    @property
    def requests(self) -> list[str]:
        return list(self.server.requests)

    def __enter__(self) -> HostileSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
