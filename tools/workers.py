"""Start and stop real ``scrapy crawl <spider>`` worker processes (demo, tests, benchmarks)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tools import processes
from tools.forkserver import ForkedProcess, ForkServer

ROOT = Path(__file__).resolve().parent.parent

#: when set, workers are forked from this server's pre-imported process (the tests set
#: it: :mod:`tools.forkserver`) instead of each starting an interpreter of its own
FORK_SERVER: ForkServer | None = None


class WorkerProcess:
    """One worker, its log in a file; ``stop()`` is a graceful SIGINT, ``kill()`` a crash.

    ``worker_id`` None leaves ``WORKER_ID`` unset (the worker names itself; the
    log file is still named ``name``). ``prefix`` runs the worker through another
    command, e.g. ``unshare --pid --fork --mount-proc --kill-child``. ``spider``: the
    spider it runs (``ecommerce``, ``finance``). ``own_session`` keeps a terminal's
    Ctrl-C from reaching the worker (the demo stops its workers itself, with one
    SIGINT each: a second would force an unclean shutdown) and stops it (SIGTERM) if
    the process that started it dies (:func:`tools.processes.own_session`).
    """

    def __init__(
        self,
        worker_id: str | None,
        env: Mapping[str, str],
        log_path: Path,
        settings: Mapping[str, object] | None = None,
        prefix: Sequence[str] = (),
        spider: str = "ecommerce",
        own_session: bool = False,
    ) -> None:
        self.worker_id = worker_id or log_path.stem
        self.log_path = log_path
        self.spider = spider
        command = ["crawl", spider]
        for name, value in (settings or {}).items():
            command += ["-s", f"{name}={value}"]
        # These workers crawl the local demo shop: no politeness budget unless asked for
        # (SITE_MAX_RPS in the environment, or as a setting).
        full_env = {"SITE_MAX_RPS": "0", **os.environ, **env, "PYTHONUNBUFFERED": "1"}
        full_env.pop("WORKER_ID", None)
        if worker_id is not None:
            full_env["WORKER_ID"] = worker_id
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        self.process: subprocess.Popen[bytes] | ForkedProcess
        if FORK_SERVER is not None and not prefix and not own_session:
            self.process = FORK_SERVER.spawn(command, full_env, ROOT, self._log.fileno())
            return
        self.process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "scrapy", *command],
            cwd=ROOT,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            **(processes.own_session() if own_session else {}),
        )

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            if not self.running:
                self._log.close()

    def interrupt(self) -> None:
        """SIGINT, as Ctrl-C: the worker hands back what it holds and closes."""
        if self.running:
            self.process.send_signal(signal.SIGINT)

    def stop(self, timeout: float = 60) -> int:
        self.interrupt()
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            return self.kill()

    def kill(self) -> int:
        if self.running:
            self.process.kill()
        return self.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 120) -> str:
        """The last ``lines`` lines of the log (where a worker says why it stopped)."""
        return "\n".join(self.log().splitlines()[-lines:])


def stop_all(workers: Sequence[WorkerProcess], timeout: float = 60) -> None:
    """Stop the workers together: one SIGINT each, then wait for them all (the ones
    still running ``timeout`` s later are killed)."""
    for worker in workers:
        worker.interrupt()
    deadline = time.monotonic() + timeout
    for worker in workers:
        try:
            worker.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.kill()


def kill_all(workers: Sequence[WorkerProcess]) -> None:
    for worker in workers:
        worker.kill()


def wait_all(workers: list[WorkerProcess], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for worker in workers:
        worker.wait(max(0.1, deadline - time.monotonic()))
