"""A canary: a TCP server on an address the crawl must never reach, counting every connection.

Any connection at all is a hit, whatever is sent (a page request, a proxy
request for another site, a ``CONNECT``): the first line of each is kept.

    with Canary() as canary:          # listens on 127.0.0.2:<free port>
        canary.url                    # http://127.0.0.2:<port>/
        canary.hits                   # ["GET / HTTP/1.1", ...]
"""

from __future__ import annotations

import socketserver
import threading


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.connection.settimeout(5)
        try:
            line = self.rfile.readline(4096).decode("latin-1").strip()
        except OSError:
            line = ""
        with self.server.lock:
            self.server.hits.append(line or "<connection>")
        body = b"canary"
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    hits: list[str]
    lock: threading.Lock


class Canary:
    def __init__(self, host: str = "127.0.0.2") -> None:
        self.host = host
        self.server = _Server((host, 0), _Handler)
        self.server.hits = []
        self.server.lock = threading.Lock()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    @property
    def hits(self) -> list[str]:
        with self.server.lock:
            return list(self.server.hits)

    def __enter__(self) -> Canary:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
