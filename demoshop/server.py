"""The demo shop's HTTP/1.1 server: a small Twisted protocol in front of ``ShopSite``.

Twisted's own ``twisted.web`` builds a ``Request`` object, parses and logs every
request in Python and serves a few thousand pages per second at best; the shop must
never be the bottleneck of a crawl or a benchmark, so it speaks just the HTTP/1.1
a crawler needs, on the pre-rendered bytes of ``ShopSite``:

* GET and HEAD (other methods: 405); request bodies with ``Content-Length`` are
  read and ignored; chunked request bodies are refused (501);
* persistent connections (HTTP/1.1 unless ``Connection: close``; HTTP/1.0 with
  ``Connection: keep-alive``) and pipelining (responses in request order);
* absolute-form request targets (``GET http://host/path``);
* malformed requests get 400, oversized heads 431, oversized bodies 413, unknown
  HTTP versions 505, and the connection is closed.

``latency`` and ``jitter`` (seconds) delay each response with ``reactor.callLater``:
the reactor keeps serving other connections meanwhile, so latency costs no throughput.
The jitter comes from a ``random.Random(seed)``: the same for the same request order.
"""

from __future__ import annotations

import random
import time
from email.utils import formatdate
from typing import Any

from twisted.internet import protocol
from twisted.internet.interfaces import IDelayedCall

from demoshop.accesslog import AccessLogWriter
from demoshop.limits import ShopLimits
from demoshop.site import Response, ShopSite

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 1024 * 1024
MAX_BUFFER_BYTES = 4 * 1024 * 1024

_date_cache: list[Any] = [0, b""]


def _date_header() -> bytes:
    now = int(time.time())
    if now != _date_cache[0]:
        _date_cache[0] = now
        _date_cache[1] = f"Date: {formatdate(now, usegmt=True)}\r\n".encode()
    return _date_cache[1]  # type: ignore[no-any-return]


_KEEP_ALIVE = b"Connection: keep-alive\r\n\r\n"
_CLOSE = b"Connection: close\r\n\r\n"


class ShopProtocol(protocol.Protocol):
    """One client connection: parses requests from the byte stream and answers them in order."""

    factory: ShopServerFactory

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._waiting: IDelayedCall | None = None  # a delayed response not yet written
        self._closing = False
        self._paused = False

    def dataReceived(self, data: bytes) -> None:
        if self._closing:
            return
        self._buffer += data
        if self._waiting is not None:
            if len(self._buffer) > MAX_BUFFER_BYTES and not self._paused:
                self._paused = True
                self.transport.pauseProducing()  # type: ignore[attr-defined]
            return
        self._process()

    def connectionLost(self, reason: Any = None) -> None:
        self._closing = True
        if self._waiting is not None and self._waiting.active():
            self._waiting.cancel()
        self._waiting = None

    def _process(self) -> None:
        buffer = self._buffer
        while self._waiting is None and not self._closing:
            while buffer[:2] == b"\r\n":  # tolerated: empty lines before a request
                del buffer[:2]
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD_BYTES:
                    self._refuse(431)
                return
            if end > MAX_HEAD_BYTES:
                self._refuse(431)
                return
            lines = bytes(buffer[:end]).split(b"\r\n")
            request_line = lines[0].split(b" ")
            if len(request_line) != 3 or not request_line[0].isalpha():
                self._refuse(400)
                return
            raw_method, raw_target, version = request_line
            if version not in (b"HTTP/1.1", b"HTTP/1.0"):
                self._refuse(505 if version.startswith(b"HTTP/") else 400)
                return
            agent: bytes | None = None
            connection = b""
            length = 0
            for line in lines[1:]:
                name, sep, value = line.partition(b":")
                if not sep or not name or name[-1:] in (b" ", b"\t"):
                    self._refuse(400)
                    return
                name = name.lower()
                if name == b"user-agent":
                    agent = value.strip()
                elif name == b"connection":
                    connection = value.lower()
                elif name == b"content-length":
                    value = value.strip()
                    if not value.isdigit():
                        self._refuse(400)
                        return
                    length = int(value)
                    if length > MAX_BODY_BYTES:
                        self._refuse(413)
                        return
                elif name == b"transfer-encoding":
                    self._refuse(501)
                    return
            if len(buffer) < end + 4 + length:
                return  # the body is still coming
            del buffer[: end + 4 + length]

            if version == b"HTTP/1.1":
                keep_alive = b"close" not in connection
            else:
                keep_alive = b"keep-alive" in connection
            method = raw_method.decode("ascii")
            target = raw_target.decode("latin-1")
            limits = self.factory.limits
            refusal = limits.check(target.split("?", 1)[0]) if limits is not None else None
            response = refusal or self.factory.site.resolve(method, target)
            self.factory.log(
                method, target, response.status, agent.decode("utf-8", "replace") if agent else None
            )
            data = response.head + _date_header() + (_KEEP_ALIVE if keep_alive else _CLOSE)
            if method != "HEAD":
                data += response.body
            delay = self.factory.next_delay()
            if delay > 0:
                self._waiting = self.factory.reactor.callLater(delay, self._send, data, keep_alive)
                return
            self._write(data, keep_alive)

    def _send(self, data: bytes, keep_alive: bool) -> None:
        self._waiting = None
        self._write(data, keep_alive)
        if self._paused and not self._closing:
            self._paused = False
            self.transport.resumeProducing()  # type: ignore[attr-defined]
        self._process()

    def _write(self, data: bytes, keep_alive: bool) -> None:
        if self._closing:
            return
        self.transport.write(data)  # type: ignore[union-attr]
        if not keep_alive:
            self._closing = True
            self.transport.loseConnection()  # type: ignore[union-attr]

    def _refuse(self, status: int) -> None:
        """Answer a request that cannot be served, then close the connection."""
        response = Response(status, b"")
        self.factory.log("-", "-", status, None)
        self._write(response.head + _date_header() + _CLOSE, keep_alive=False)


class ShopServerFactory(protocol.ServerFactory):
    """Serves one ``ShopSite``; writes the access log; draws the response delays."""

    protocol = ShopProtocol
    noisy = False

    def __init__(
        self,
        site: ShopSite,
        access_log: AccessLogWriter | None = None,
        latency: float = 0.0,
        jitter: float = 0.0,
        seed: int = 1,
        reactor: Any = None,
        limits: ShopLimits | None = None,
    ) -> None:
        if reactor is None:
            from twisted.internet import reactor as default_reactor

            reactor = default_reactor
        self.site = site
        self.limits = limits if limits is not None and limits.active else None
        self.access_log = access_log
        self.latency = max(0.0, latency)
        self.jitter = max(0.0, jitter)
        self.reactor = reactor
        self._random = random.Random(seed)

    def next_delay(self) -> float:
        if not self.jitter:
            return self.latency
        return self.latency + self._random.uniform(0.0, self.jitter)

    def log(self, method: str, target: str, status: int, user_agent: str | None) -> None:
        if self.access_log is not None:
            self.access_log.log(method, target, status, user_agent)
