"""tools.redis_server: the test redis-servers start on a port of their own, even when
two test processes (pytest-xdist) look for free ports at the same moment."""

from __future__ import annotations

import socket

import pytest
import redis

from tools.redis_server import RedisServer, free_port_below


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


def test_a_cluster_node_whose_bus_port_was_taken_starts_on_another_pair() -> None:
    """The cluster bus listens on port + 10000: when another process holds that port
    (a client connection's local end once did), the node is started again on another
    pair, as a node whose own port was taken is."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        bus_port = taken.getsockname()[1]
        offered = iter([bus_port - 10000])
        server = RedisServer(
            appendonly=False,
            choose_port=lambda: next(offered, None) or free_port_below(55536 - 10000),
            extra_args=["--cluster-enabled", "yes"],
        )
        try:
            assert server.port == bus_port - 10000
            server.start()
            assert server.port != bus_port - 10000
            assert redis.Redis.from_url(server.url).info("cluster")["cluster_enabled"] == 1
        finally:
            server.cleanup()


def test_cluster_ports_are_drawn_below_the_ephemeral_range() -> None:
    """A port pair below the range client connections draw their local port from can
    only be taken by a server binding it by number."""
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    if low - 10000 - 10000 < 1000:
        pytest.skip(f"this machine's ephemeral range starts at {low}: no room below it")
    ports = [free_port_below(55536 - 10000) for _ in range(50)]
    assert all(10000 <= port and port + 10000 < low for port in ports)
