"""A TCP proxy on 127.0.0.1 that can be cut and restored (a database outage) or slowed down.

    with TcpProxy("127.0.0.1", 5432) as proxy:
        dsn = f"postgresql://postgres@127.0.0.1:{proxy.port}/db"
        ...
        proxy.cut()      # every open connection is closed, new ones are refused
        proxy.restore()  # connections are accepted (and forwarded) again

While cut, nothing listens on the port: clients get "connection refused", as
when the server is down. The port stays the same across cut and restore.

A network partition is another thing: nothing is refused, nothing is closed,
the traffic is dropped. ``proxy.stall()`` stops forwarding in both directions
on every connection, open or new (new ones are accepted by the kernel and left
unanswered), until ``proxy.resume()``, which forwards what was held back.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
import time
from collections import deque
from types import TracebackType

from tools.processes import free_port


class TcpProxy:
    def __init__(
        self, target_host: str, target_port: int, port: int | None = None, delay: float = 0.0
    ) -> None:
        self.target = (target_host, target_port)
        self.port = port or free_port()
        self.delay = delay
        self.connections_accepted = 0
        #: chunks of data received from either side (traffic is flowing when it grows)
        self.chunks_received = 0
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket]] = set()
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._flowing = threading.Event()  # cleared while stalled (see stall)
        self._flowing.set()

    # --- control -----------------------------------------------------------------

    def start(self) -> TcpProxy:
        self.restore()
        return self

    def restore(self) -> None:
        """Listen (again) and forward new connections to the target."""
        if self._listener is not None:
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deadline = time.monotonic() + 5
        while True:
            try:
                listener.bind(("127.0.0.1", self.port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        listener.listen(64)
        self._stopping.clear()
        self._listener = listener
        self._accept_thread = threading.Thread(
            target=self._accept_loop, args=(listener,), name="tcpproxy-accept", daemon=True
        )
        self._accept_thread.start()

    def cut(self) -> None:
        """Close every connection and stop listening: new connections are refused."""
        listener, self._listener = self._listener, None
        self._stopping.set()
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
            self._accept_thread = None
        with self._lock:
            pairs, self._pairs = self._pairs, set()
        for pair in pairs:
            for sock in pair:
                _abort(sock)

    def stall(self) -> None:
        """Stop forwarding (a partition): connections stay open, their traffic is held."""
        self._flowing.clear()

    def resume(self) -> None:
        """Forward again after :meth:`stall`."""
        self._flowing.set()

    @property
    def stalled(self) -> bool:
        return not self._flowing.is_set()

    def close(self) -> None:
        self._flowing.set()
        self.cut()

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- threads -----------------------------------------------------------------

    def _accept_loop(self, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            if not self._flowing.wait(0.1):
                continue  # stalled: new connections wait in the kernel's backlog
            try:
                ready, _, _ = select.select([listener], [], [], 0.1)
                if not ready:
                    continue
                client, _ = listener.accept()
            except (OSError, ValueError):
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _abort(client)
                continue
            pair = (client, upstream)
            with self._lock:
                if self._stopping.is_set():
                    _abort(client)
                    _abort(upstream)
                    return
                self._pairs.add(pair)
                self.connections_accepted += 1
            threading.Thread(
                target=self._pump, args=(pair,), name="tcpproxy-pump", daemon=True
            ).start()

    def _pump(self, pair: tuple[socket.socket, socket.socket]) -> None:
        client, upstream = pair
        peers = {client: upstream, upstream: client}
        # chunks held back by the delay, per destination: (due time, bytes)
        held: dict[socket.socket, deque[tuple[float, bytes]]] = {client: deque(), upstream: deque()}
        try:
            while True:
                if not self._flowing.wait(0.2):  # stalled: hold everything, close nothing
                    with self._lock:
                        if pair not in self._pairs:
                            return
                    continue
                now = time.monotonic()
                for destination, chunks in held.items():
                    while chunks and chunks[0][0] <= now:
                        destination.sendall(chunks.popleft()[1])
                due = [chunks[0][0] for chunks in held.values() if chunks]
                wait = min(0.2, max(0.0, min(due) - now)) if due else 0.2
                ready, _, _ = select.select(list(peers), [], [], wait)
                with self._lock:
                    if pair not in self._pairs:
                        return
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    self.chunks_received += 1
                    if self.delay > 0:
                        held[peers[sock]].append((time.monotonic() + self.delay, data))
                    else:
                        peers[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            with self._lock:
                self._pairs.discard(pair)
            _abort(client)
            _abort(upstream)


def _abort(sock: socket.socket) -> None:
    """Close at once (RST), as a crashed server or a broken network would."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()
