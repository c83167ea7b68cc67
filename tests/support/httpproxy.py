"""A tiny forwarding HTTP proxy on loopback, for the proxy-rotation tests.

    with ForwardProxy(credentials="user:secret") as proxy:   # or failing=True
        proxy.url        # "http://127.0.0.1:<port>"
        proxy.requests   # absolute URLs it was asked for (failing ones too)

It forwards ``GET http://host:port/path`` (absolute form, as clients speak to a
proxy) to the target and returns the answer. With ``credentials`` it answers 407
unless ``Proxy-Authorization`` carries them; with ``failing=True`` it answers
every request with 502 Bad Gateway, as a proxy whose upstream is broken.
"""

from __future__ import annotations

import base64
import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
        return

    def _answer(self, status: int, body: bytes, headers: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        proxy = self.server.owner
        with proxy.lock:
            proxy.requests.append(self.path)
            proxy.agents.append(self.headers.get("User-Agent", ""))
        if proxy.failing:
            self._answer(502, b"bad gateway")
            return
        if proxy.credentials:
            expected = "Basic " + base64.b64encode(proxy.credentials.encode()).decode()
            if self.headers.get("Proxy-Authorization") != expected:
                self._answer(407, b"proxy authentication required")
                return
        target = urlsplit(self.path)
        if not target.hostname:
            self._answer(400, b"absolute URL expected")
            return
        conn = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
        try:
            path = target.path + (f"?{target.query}" if target.query else "")
            headers = {
                k: v
                for k, v in self.headers.items()
                if k.lower() not in ("proxy-authorization", "proxy-connection", "connection")
            }
            conn.request("GET", path or "/", headers=headers)
            upstream = conn.getresponse()
            body = upstream.read()
            keep = [
                (k, v)
                for k, v in upstream.getheaders()
                if k.lower() not in ("content-length", "connection", "transfer-encoding")
            ]
            self._answer(upstream.status, body, keep)
        finally:
            conn.close()


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: ForwardProxy


class ForwardProxy:
    def __init__(self, failing: bool = False, credentials: str = "") -> None:
        self.failing = failing
        self.credentials = credentials
        self.requests: list[str] = []
        self.agents: list[str] = []
        self.lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, with_credentials: bool = True) -> str:
        auth = f"{self.credentials}@" if self.credentials and with_credentials else ""
        return f"http://{auth}127.0.0.1:{self.port}"

    def __enter__(self) -> ForwardProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
