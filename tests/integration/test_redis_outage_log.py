"""The workers' Redis client on a real redis-server behind a TCP proxy that drops or refuses.

The client is built as the workers' is (``CountingRedis``, ``ReportingRetry``)
with a socket timeout of half a second and its own :class:`OutageLog`; the
proxy is stalled (traffic dropped, connections left open: a partition) or cut
(connections closed, new ones refused: Redis down) until the log said Redis is
unreachable, then forwards again. Waits are on the log's lines, not on time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from redis.backoff import ConstantBackoff
from redis.exceptions import ConnectionError, TimeoutError

from crawler.net.outage import OutageLog, ReportingRetry
from crawler.net.redis_client import CountingRedis
from tools.tcpproxy import TcpProxy


class Lines(logging.Handler):
    """The outage log's lines, with an event per line."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[tuple[str, str]] = []
        self.added = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.added:
            self.lines.append((record.levelname, record.getMessage()))
            self.added.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 60) -> None:
        with self.added:
            assert self.added.wait_for(predicate, timeout), self.lines


@pytest.fixture
def proxy(redis_url: str) -> Iterator[TcpProxy]:
    parts = urlsplit(redis_url)
    with TcpProxy(parts.hostname or "127.0.0.1", parts.port or 6379) as proxy:
        yield proxy


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("test.outage")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)


def client_through(proxy: TcpProxy, redis_url: str, log: OutageLog) -> CountingRedis:
    retry = ReportingRetry(ConstantBackoff(0.05), retries=1000)
    retry.log = log
    path = urlsplit(redis_url).path
    return CountingRedis.from_url(
        f"redis://127.0.0.1:{proxy.port}{path}",
        socket_timeout=0.5,
        socket_connect_timeout=0.5,
        retry=retry,
        retry_on_error=[ConnectionError, TimeoutError],
    )


@pytest.mark.parametrize("how", ["stall", "cut"])
def test_one_warning_then_the_answer_and_how_long(
    how: str, proxy: TcpProxy, redis_url: str, lines: Lines, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = OutageLog(
        f"Redis at 127.0.0.1:{proxy.port}",
        interval=3600,
        holding=lambda: "holding 2 leases",
        log=logging.getLogger("test.outage"),
    )
    # the client's answers are told to the process's log: this test's, here
    monkeypatch.setattr("crawler.net.redis_client.REDIS", log)
    client = client_through(proxy, redis_url, log)
    assert client.set("outage:key", "before")
    connections = proxy.open_connections
    getattr(proxy, how)()  # stall: dropped; cut: refused
    reply: list[bytes | None] = []
    caller = threading.Thread(target=lambda: reply.append(client.get("outage:key")))
    caller.start()
    lines.wait_for(lambda: len(lines.lines) >= 1)
    level, message = lines.lines[0]
    assert level == "WARNING"
    # dropped: the socket timeout ends the attempt; cut: the connection is reset
    error = "Timeout reading from socket" if how == "stall" else "Error "
    assert message.startswith(f"Redis at 127.0.0.1:{proxy.port} unreachable ({error}"), message
    assert message.endswith(": holding 2 leases; waiting for its answer to GET (thread "
                            f"{caller.name})"), message
    if how == "stall":
        assert proxy.open_connections == connections  # nothing closed
    assert reply == []  # still waiting
    (proxy.resume if how == "stall" else proxy.restore)()
    caller.join(60)
    assert reply == [b"before"]
    level, message = lines.lines[-1]
    assert level == "INFO" and "reachable again after " in message and "cut off since" in message
    # however many attempts failed: one line when lost, one when back
    assert len(lines.lines) == 2, lines.lines
    assert not log.down


def test_a_reminder_while_it_lasts(
    proxy: TcpProxy, redis_url: str, lines: Lines, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = OutageLog("Redis", interval=1.0, log=logging.getLogger("test.outage"))
    monkeypatch.setattr("crawler.net.redis_client.REDIS", log)
    client = client_through(proxy, redis_url, log)
    assert client.ping()
    proxy.stall()
    caller = threading.Thread(target=client.ping)
    caller.start()
    lines.wait_for(lambda: len(lines.lines) >= 3)
    proxy.resume()
    caller.join(60)
    assert [level for level, _ in lines.lines[:3]] == ["WARNING"] * 3
    assert "still unreachable after " in lines.lines[1][1]
    assert lines.lines[-1][0] == "INFO"
