"""The Redis Cluster of the deployment files, run for real on loopback.

No Docker here: the six nodes of the compose profile ``cluster`` are started with
their own command lines from ``docker-compose.yml`` (``redis-server
deploy/redis-cluster/node.conf --port ... --cluster-announce-hostname ...``) on
free loopback ports, each announcing the hostname ``localhost`` instead of
``redis-node-<n>``; then ``deploy/redis-cluster/create-cluster.sh`` (the one-shot
``redis-cluster-init``) creates the cluster from the node list the compose file
gives it. A cluster client then follows the nodes' redirections by hostname, as
the workers do inside the compose network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from redis.cluster import ClusterNode, RedisCluster

from tools.redis_server import free_port_below

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))["services"]
SCRIPT = ROOT / "deploy" / "redis-cluster" / "create-cluster.sh"
NODE_CONF = ROOT / "deploy" / "redis-cluster" / "node.conf"
PASSWORD = "cluster-test-pw"
NODES = [name for name in COMPOSE if name.startswith("redis-node-")]

pytestmark = pytest.mark.skipif(
    not (shutil.which("redis-server") and shutil.which("redis-cli")),
    reason="needs redis-server and redis-cli",
)


@dataclass
class LocalCluster:
    """The compose nodes on loopback: compose port -> local port, and their processes."""

    tmp: Path
    ports: dict[int, int] = field(default_factory=dict)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def localize(self, text: str) -> str:
        """A compose address list (``redis-node-<n>:<port> ...``) on this machine."""
        for name in NODES:
            number = int(name.rsplit("-", 1)[1])
            port = 7000 + number
            text = text.replace(f"{name}:{port}", f"localhost:{self.ports[port]}")
        return text

    def run_script(
        self, env: dict[str, str], timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", str(SCRIPT)],
            env={"PATH": os.environ["PATH"], "REDISCLI_AUTH": PASSWORD, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def node_command(service: dict[str, Any], port: int, data_dir: Path) -> list[str]:
    """The node's compose command, with this machine's paths, port, hostname and password."""
    cmd = [str(part) for part in service["command"]]
    assert cmd[:2] == ["redis-server", "/usr/local/etc/redis/node.conf"]
    cmd[1] = str(NODE_CONF)
    cmd[cmd.index("--port") + 1] = str(port)
    cmd[cmd.index("--cluster-announce-hostname") + 1] = "localhost"
    for option in ("--requirepass", "--masterauth"):
        cmd[cmd.index(option) + 1] = PASSWORD
    # the image's working directory /data is the container's volume: here, a folder of the test
    return [*cmd, "--dir", str(data_dir), "--bind", "127.0.0.1", "--logfile", "redis.log"]


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(tmp_path)
    try:
        for name in NODES:
            service = COMPOSE[name]
            compose_port = int(service["environment"]["REDIS_NODE_PORT"])
            port = free_port_below(55536 - 10000)
            while port in cluster.ports.values():
                port = free_port_below(55536 - 10000)
            cluster.ports[compose_port] = port
            data_dir = tmp_path / name
            data_dir.mkdir()
            cluster.processes.append(
                subprocess.Popen(
                    node_command(service, port, data_dir),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        yield cluster
    finally:
        for process in cluster.processes:
            process.terminate()
        for process in cluster.processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_compose_cluster_is_created_and_followed_by_hostname(nodes: LocalCluster) -> None:
    init = COMPOSE["redis-cluster-init"]
    env = {k: str(v) for k, v in init["environment"].items() if k != "REDISCLI_AUTH"}
    env["REDIS_CLUSTER_NODES"] = nodes.localize(env["REDIS_CLUSTER_NODES"])
    assert len(env["REDIS_CLUSTER_NODES"].split()) == len(NODES) == 6

    # each node passes its compose healthcheck once it is up (the script waits for that too)
    created = nodes.run_script(env)
    assert created.returncode == 0, created.stdout + created.stderr
    assert created.stdout.strip().endswith("redis-cluster: 6 nodes, cluster_state:ok")
    for name in NODES:
        service = COMPOSE[name]
        kind, check = service["healthcheck"]["test"]
        assert kind == "CMD-SHELL"
        port = nodes.ports[int(service["environment"]["REDIS_NODE_PORT"])]
        health = subprocess.run(
            ["sh", "-c", check.replace("$$", "$")],
            env={
                "PATH": os.environ["PATH"],
                "REDISCLI_AUTH": PASSWORD,
                "REDIS_NODE_PORT": str(port),
            },
            capture_output=True,
            timeout=30,
        )
        assert health.returncode == 0, name

    # 3 primaries with one replica each; clients are sent the announced hostname
    first = redis.Redis(port=next(iter(nodes.ports.values())), password=PASSWORD)
    deadline = time.monotonic() + 60  # the replicas are announced by gossip, soon after
    while True:
        slots = first.execute_command("CLUSTER", "SLOTS")
        if all(len(holders) == 2 for _s, _e, *holders in slots) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(slots) == 3
    for _start, _end, *holders in slots:
        assert len(holders) == 2, "a primary and its replica"
        for holder in holders:
            assert holder[0] == b"localhost", holder
    first.close()

    # the workers' startup-node list (REDIS_URL of worker-cluster), here on loopback
    url = nodes.localize(str(COMPOSE["worker-cluster"]["environment"]["REDIS_URL"]))
    startup = [part.rsplit("@", 1)[1] for part in url.split(",")]
    client = RedisCluster(
        startup_nodes=[
            ClusterNode(host, int(port)) for host, port in (s.split(":") for s in startup)
        ],
        password=PASSWORD,
    )
    try:
        keys = [f"ecommerce:{{s{index}}}:requests" for index in range(16)]
        for index, key in enumerate(keys):
            client.zadd(key, {f"request-{index}": -index})
        owners = {client.get_node_from_key(key).port for key in keys}
        assert len(owners) == 3, "the shards' keys are spread over the three primaries"
        assert [client.zcard(key) for key in keys] == [1] * 16
    finally:
        client.close()

    # run again (compose starts it on every `up`): nothing to create, still ok
    again = nodes.run_script(env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already created" in again.stdout


def test_the_script_gives_up_on_a_node_that_does_not_answer(nodes: LocalCluster) -> None:
    silent = free_port_below(55536 - 10000)
    env = {"REDIS_CLUSTER_NODES": f"127.0.0.1:{silent}", "REDIS_CLUSTER_WAIT": "2"}
    result = nodes.run_script(env, timeout=60)
    assert result.returncode == 1
    assert f"redis-cluster: 127.0.0.1:{silent} does not answer PING" in result.stderr
    missing = nodes.run_script({})
    assert missing.returncode != 0
    assert "set REDIS_CLUSTER_NODES" in missing.stderr
