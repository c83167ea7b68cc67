"""``crawler.scheduling.restarts`` on a real redis-server that is killed and started again."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
import redis
from redis.backoff import ConstantBackoff
from redis.exceptions import ConnectionError
from redis.retry import Retry

from crawler.scheduling import restarts
from tools.redis_server import RedisServer


def client(url: str) -> redis.Redis:
    return redis.Redis.from_url(
        url,
        redis_connect_func=restarts.connect,
        retry=Retry(ConstantBackoff(0.1), retries=50),
        retry_on_error=[ConnectionError],
    )


@pytest.fixture
def server(private_redis: RedisServer) -> Iterator[RedisServer]:
    restarts._seen.clear()  # the run id of an earlier test's server
    yield private_redis
    restarts._seen.clear()


def test_listeners_run_after_a_restart_before_any_command(server: RedisServer) -> None:
    calls: list[tuple[str, str]] = []
    first, second = client(server.url), client(server.url)
    before = first.info("server")["run_id"]

    def listener(old: str, new: str) -> None:
        calls.append((old, new))
        # a listener's own commands run, on a connection of their own
        second.set("redone", "yes")

    forget = restarts.on_restart(first, listener)
    try:
        assert first.ping() and second.ping()
        assert calls == []  # the first server seen is no restart
        server.stop(signal.SIGKILL)
        server.start()
        # the first command after the restart sees what the listener did
        assert first.get("redone") == b"yes"
        after = first.info("server")["run_id"]
        assert calls == [(before, after)]
        # other connections of the process do not run the listeners again
        assert second.ping()
        assert client(server.url).ping()
        assert len(calls) == 1
    finally:
        forget()
        first.close()
        second.close()
    # unregistered: a further restart calls nothing
    server.stop(signal.SIGKILL)
    server.start()
    assert client(server.url).ping()
    assert len(calls) == 1


def test_a_failing_listener_fails_the_connection_and_runs_again(server: RedisServer) -> None:
    attempts: list[str] = []

    def listener(old: str, new: str) -> None:
        attempts.append(new)
        if len(attempts) == 1:
            raise ConnectionError("Redis went away again")

    r = client(server.url)
    forget = restarts.on_restart(r, listener)
    try:
        assert r.ping()
        server.stop(signal.SIGKILL)
        server.start()
        assert r.ping()  # the retry reconnects, and the listener runs again
        assert len(attempts) == 2 and attempts[0] == attempts[1]
    finally:
        forget()
        r.close()


def test_servers_at_other_addresses_are_not_restarts(
    server: RedisServer, redis_url: str
) -> None:
    """One process, two servers: each keeps its own run id, neither looks restarted."""
    calls: list[str] = []
    here, there = client(server.url), client(redis_url)
    forget = [
        restarts.on_restart(here, lambda old, new: calls.append("here")),
        restarts.on_restart(there, lambda old, new: calls.append("there")),
    ]
    try:
        for _ in range(3):
            assert here.ping() and there.ping()
            here.connection_pool.disconnect()
            there.connection_pool.disconnect()
        assert calls == []
        server.stop(signal.SIGKILL)
        server.start()
        assert here.ping() and there.ping()
        assert calls == ["here"]
    finally:
        for unregister in forget:
            unregister()
        here.close()
        there.close()


def test_run_id_of_an_info_reply() -> None:
    reply = b"# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\ntcp_port:6379\r\n"
    assert restarts.server_run_id(reply) == "abc123"
    assert restarts.server_run_id("# Server\r\n") == ""
