"""tools.redis_server: the test redis-servers start on a port of their own, even when
two test processes (pytest-xdist) look for free ports at the same moment."""

from __future__ import annotations

import socket

import pytest
import redis

from tools.redis_server import RedisServer


def test_a_chosen_port_taken_before_the_server_binds_it_is_chosen_again() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = RedisServer(appendonly=False)
        server.port = port  # as if another process bound the free port it found first
        try:
            server.start()
            assert server.port != port
            assert redis.Redis.from_url(server.url).ping()
        finally:
            server.cleanup()


def test_a_given_port_held_by_another_server_is_an_error_not_that_server() -> None:
    first = RedisServer(appendonly=False).start()
    try:
        second = RedisServer(port=first.port, appendonly=False)
        with pytest.raises(RuntimeError, match="in use"):
            second.start()
        # the first server is untouched and answers as itself
        info = redis.Redis.from_url(first.url).info("server")
        assert first.process is not None and info["process_id"] == first.process.pid
    finally:
        first.cleanup()


def test_a_restart_keeps_the_port() -> None:
    server = RedisServer(appendonly=False).start()
    try:
        port = server.port
        server.restart()
        assert server.port == port
        assert redis.Redis.from_url(server.url).ping()
    finally:
        server.cleanup()
