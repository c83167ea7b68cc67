"""Start a private Redis Cluster on loopback: ``primaries`` nodes, each with ``replicas``.

For the tests and the benchmarks: real ``redis-server --cluster-enabled yes``
processes on free ports below 55536 (the cluster bus listens on port + 10000),
joined by ``redis-cli --cluster create``. Nodes keep an append-only file, as a
crawl's Redis should (docs/running.md), so a node can be killed and restarted.

    with RedisCluster(primaries=3) as cluster:
        cluster.url            # redis://127.0.0.1:<port>/0 of the first node
        cluster.startup_urls   # every node, comma-separated (REDIS_URL may list them)
        cluster.kill_primary_of(slot)   # SIGKILL; its replica takes over
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import redis
from redis.cluster import ClusterNode
from redis.cluster import RedisCluster as ClusterClient

from tools.redis_server import RedisServer, free_port_below

BUS_OFFSET = 10000


class RedisCluster:
    def __init__(
        self,
        primaries: int = 3,
        replicas: int = 0,
        data_dir: str | Path | None = None,
        node_timeout_ms: int = 1000,
    ) -> None:
        if primaries < 3:
            raise ValueError("redis-cli --cluster create needs at least 3 primaries")
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="redis-cluster-")
        self.data_dir = Path(data_dir or self._tmp.name)  # type: ignore[union-attr]
        self.primaries = primaries
        self.replicas = replicas
        self.node_timeout_ms = node_timeout_ms
        self.nodes: list[RedisServer] = []

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def startup_urls(self) -> str:
        return ",".join(node.url for node in self.nodes)

    def start(self, timeout: float = 60.0) -> RedisCluster:
        count = self.primaries * (1 + self.replicas)
        for index in range(count):
            node = RedisServer(
                # a node whose port or bus port another process took first is
                # started again on another pair (the nodes started so far hold theirs)
                choose_port=lambda: free_port_below(55536 - BUS_OFFSET),
                data_dir=self.data_dir / f"node-{index}",
                appendonly=True,
                extra_args=[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    str(self.node_timeout_ms),
                    # a replica may take over even if it lost touch for a while
                    "--cluster-replica-validity-factor",
                    "0",
                    # A replica's first sync starts at once (not after the 5 s a primary
                    # waits for more replicas), and the primary pings its replicas every
                    # second (not 10): until a ping moves a replica's offset from 0, no
                    # node lists it in CLUSTER SLOTS, and wait_ok() waits for that. A
                    # cluster with replicas is ready in about 3 s instead of 10.
                    "--repl-diskless-sync-delay",
                    "0",
                    "--repl-ping-replica-period",
                    "1",
                ],
            )
            self.nodes.append(node.start())
        redis_cli = shutil.which("redis-cli")
        if redis_cli is None:
            self.cleanup()
            raise RuntimeError(
                "redis-cli is needed to create a cluster (apt-get install redis-tools)"
            )  # noqa: E501
        create = [redis_cli, "--cluster", "create"]
        create += [f"127.0.0.1:{node.port}" for node in self.nodes]
        create += ["--cluster-replicas", str(self.replicas), "--cluster-yes"]
        result = subprocess.run(create, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            self.cleanup()
            raise RuntimeError(f"redis-cli --cluster create failed: {result.stdout}{result.stderr}")
        self.wait_ok(timeout)
        return self

    def wait_ok(self, timeout: float = 60.0) -> None:
        """Until every live node says ``cluster_state:ok`` and every slot is served."""
        deadline = time.monotonic() + timeout
        while True:
            live = [node for node in self.nodes if node.process is not None]
            if all(self._ok(node) for node in live) and (
                not self.replicas or len(live) < len(self.nodes) or self._replicated()
            ):
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the Redis Cluster did not become ready")
            time.sleep(0.1)

    def _replicated(self) -> bool:
        """Every primary lists its replicas in the slots' map of every node (a client
        reads the map of whichever node it asks first), and they are in sync."""
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                client = redis.Redis.from_url(node.url, socket_timeout=1)
                slots = client.execute_command("CLUSTER", "SLOTS")
                client.close()
            except redis.RedisError:
                return False
            if any(len(entry) - 3 < self.replicas for entry in slots):
                return False
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                client = redis.Redis.from_url(node.url, socket_timeout=1)
                info = client.info("replication")
                client.close()
            except redis.RedisError:
                return False
            if (
                info.get("role") == "master"
                and int(info.get("connected_slaves", 0)) < self.replicas
            ):
                return False
            if info.get("role") == "slave" and info.get("master_link_status") != "up":
                return False
        return True

    @staticmethod
    def _ok(node: RedisServer) -> bool:
        try:
            client = redis.Redis.from_url(node.url, socket_timeout=1)
            info = client.cluster("info")
            client.close()
        except redis.RedisError:
            return False
        state = info.get("cluster_state") if isinstance(info, dict) else None
        slots = info.get("cluster_slots_ok") if isinstance(info, dict) else None
        return state == "ok" and str(slots) == "16384"

    def client(self, **kwargs: object) -> ClusterClient:
        """A cluster client whose startup nodes are the nodes still running."""
        live = [ClusterNode("127.0.0.1", node.port) for node in self.nodes if node.process]
        return ClusterClient(startup_nodes=live, **kwargs)  # type: ignore[arg-type]

    def node_for_port(self, port: int) -> RedisServer:
        return next(node for node in self.nodes if node.port == port)

    def primary_of(self, key: str) -> RedisServer:
        client = self.client()
        try:
            port = client.get_node_from_key(key).port
        finally:
            client.close()
        return self.node_for_port(int(port))

    def kill(self, node: RedisServer) -> None:
        """SIGKILL a node (a crash: it writes nothing more)."""
        node.stop(signal.SIGKILL)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def cleanup(self) -> None:
        for node in self.nodes:
            node.cleanup()
        self.nodes = []
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> RedisCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
