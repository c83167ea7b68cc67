"""After a Redis restart, which may have lost its last second, workers redo what they hold.

Redis persists the crawl with ``appendonly yes`` and ``appendfsync everysec``. A
crash of redis-server alone loses nothing (what it wrote is in the kernel's page
cache), but a crash of its machine loses what was not yet fsynced: about the last
second. Redis then restarts from an older, consistent state, and two kinds of
state in the workers may be ahead of it:

* the dupefilter's in-process cache of fingerprints known to be in Redis
  (``DUPEFILTER_LOCAL_CACHE_SIZE``): a link whose ``SADD`` was lost would be
  dropped as "seen" for ever;
* the leases a worker finishes after the restart: a page whose links were queued
  in the lost second, then acknowledged after the restart, would lose its links.

redis-py calls ``redis_connect_func`` (``REDIS_PARAMS``) on every new connection,
before its first command. :func:`connect` asks the server for its ``run_id``
there; when it differs from the one this process saw, Redis has restarted, and
*before* that connection (or any other of the process, which wait on a lock) runs
a command, the listeners registered with :func:`on_restart` run: the dupefilter
forgets its cache, the lease tracker requeues every lease this worker holds
(:meth:`crawler.leasing.tracker.LeaseTracker.redis_restarted`), so
that what it was doing is fetched again (at-least-once; the upserts make the
second write harmless). A restart that lost nothing costs those pages twice.

On a Redis Cluster the cluster client makes each node's handshake itself and
then calls :func:`check_run_id` (``REDIS_PARAMS``, see
:func:`crawler.net.redis_client.worker_redis_params`): a node that restarted makes
the listeners redo everything the worker holds, in every shard. A node seen for
the first time (a replica promoted by a failover, a node added) has no earlier
run id: nothing is redone for it here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

_lock = threading.RLock()
_local = threading.local()
Address = tuple[Any, Any, Any]  # (host, port, unix socket path) of a server
_seen: dict[Address, str] = {}  # the run id last seen at each server address
_listeners: list[tuple[Address, Callable[[str, str], None]]] = []


def address_of(settings: dict[str, Any]) -> Address:
    """The server address in connection (or connection pool) keyword arguments."""
    return (settings.get("host"), settings.get("port"), settings.get("path"))


ANY_NODE: Address = ("*", "*", "*")  # a Redis Cluster client: any of its nodes


def on_restart(client: Any, listener: Callable[[str, str], None]) -> Callable[[], None]:
    """Call ``listener(old_run_id, new_run_id)`` when the server of ``client`` restarts.

    For a Redis Cluster client, when any node of the cluster restarts (the
    listeners redo everything this worker holds, in every shard: simpler, and a
    node restart is rare). Returns the call that unregisters it.
    """
    from redis.cluster import RedisCluster

    if isinstance(client, RedisCluster):
        entry = (ANY_NODE, listener)
    else:
        pool = getattr(client, "connection_pool", None)
        entry = (address_of(getattr(pool, "connection_kwargs", {})), listener)
    with _lock:
        _listeners.append(entry)

    def unregister() -> None:
        with _lock:
            if entry in _listeners:
                _listeners.remove(entry)

    return unregister


def server_run_id(info: Any) -> str:
    """The ``run_id`` line of an ``INFO server`` reply (bytes or text)."""
    return info_field(info, "run_id")


def info_field(info: Any, name: str) -> str:
    """One ``name:value`` line of an ``INFO`` reply (bytes or text); "" if absent."""
    text = info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith(f"{name}:"):
            return line.split(":", 1)[1].strip()
    return ""


def connect(connection: Any) -> None:
    """``redis_connect_func``: the usual handshake, then the restart check."""
    connection.on_connect()
    check_run_id(connection)


def check_run_id(connection: Any) -> None:
    """The restart check alone, on a connection that has made its handshake.

    A Redis Cluster client makes the handshake itself and then calls its
    ``redis_connect_func``: it is given this (:func:`crawler.net.redis_client.worker_redis_params`).
    """
    if getattr(_local, "in_listener", False):
        return  # a listener's own commands, on a connection of their own
    connection.send_command("INFO", "server")
    info = connection.read_response()
    run_id = server_run_id(info)
    if not run_id:
        return
    address = (
        getattr(connection, "host", None),
        getattr(connection, "port", None),
        getattr(connection, "path", None),
    )
    with _lock:  # other threads' new connections wait here until the listeners are done
        previous = _seen.get(address)
        if previous == run_id:
            return
        if (
            previous is None
            and _cluster_primaries_known
            and info_field(info, "redis_mode") == "cluster"
        ):
            # no primary when the worker started: a replica that took over its failed
            # primary (which may not have sent it its last writes), or a node added; or
            # a replica, which the cluster client asks for the map of the slots
            connection.send_command("ROLE")
            role = connection.read_response()
            if not role or role[0] not in (b"master", "master"):
                return  # a replica: not noted, so that it is seen if it is promoted
            logger.warning(
                "Redis Cluster: a new primary at %s:%s (a replica that took over after a "
                "failover, or a node added): writes of the old primary's last moments may "
                "be lost; redoing the work this worker holds",
                address[0],
                address[1],
            )
            _call_listeners(lambda where: where == ANY_NODE, "", run_id)
        elif previous is not None:
            logger.warning(
                "Redis restarted (run id %s, was %s): writes of its last second may be "
                "lost; redoing the work this worker holds",
                run_id[:8],
                previous[:8],
            )
            _call_listeners(lambda where: where in (address, ANY_NODE), previous, run_id)
        _seen[address] = run_id


def _call_listeners(matches: Callable[[Address], bool], previous: str, run_id: str) -> None:
    _local.in_listener = True
    try:
        for where, listener in list(_listeners):
            if matches(where):
                listener(previous, run_id)  # a failure fails the connection: run again then
    finally:
        _local.in_listener = False


_cluster_primaries_known = False  # set by note_cluster_primaries


def note_cluster_primaries(client: Any) -> int:
    """Remember the run id of every primary of a Redis Cluster, as the worker starts.

    From then on, a connection to a node that was none of them is a new primary:
    after a failover, the replica that took over. Replication is asynchronous, so
    the old primary's last writes may be missing there (leases finished, pops,
    fingerprints); the listeners redo everything this worker holds, as after a
    restart. Returns the primaries noted.
    """
    global _cluster_primaries_known
    noted = 0
    for node in client.get_primaries():
        info = client.get_redis_connection(node).info("server")
        run_id = str(info.get("run_id") or "")
        if run_id:
            with _lock:
                _seen.setdefault((node.host, node.port, None), run_id)
            noted += 1
    _cluster_primaries_known = True
    return noted


connect.after_handshake = check_run_id  # type: ignore[attr-defined]
