"""Start ``scrapy crawl`` workers by forking a process that has already imported Scrapy.

A worker spends about two thirds of its start-up CPU importing (Scrapy, Twisted,
redis-py, the stores' drivers, the extractor's patterns: about 1.3 s of CPU here).
The test suite starts a few hundred workers, so those imports were a large share
of its time. A *fork server* imports them once: it is a Python process that loads
the worker's modules (:func:`preload`) and then waits on a Unix socket; for each
request it forks, and the child runs ``scrapy crawl`` exactly as ``python -m scrapy``
would (``scrapy.cmdline``, the project's settings read from the child's own
environment, its own reactor), with the caller's log file as its stdout and stderr.

What the fork keeps is only imported code: no reactor is installed and no
connection is opened before the fork (:func:`preload` checks both the reactor and
that no thread was started); the settings read to find the components are thrown
away, and ``crawler.settings``, which reads the environment when imported, is
imported again by each child with its own. The child is a real worker process:
signals (SIGINT for a graceful stop, SIGKILL for a crash, SIGSTOP) go to its pid,
and its exit status comes back over the socket (:class:`ForkedProcess`, the part
of ``subprocess.Popen`` that :class:`tools.workers.WorkerProcess` uses).

Used by the tests (``tests/conftest.py``; ``TEST_WORKER_FORKSERVER=0`` starts
every worker with its own interpreter instead); the demo and the benchmarks start
their workers as ``python -m scrapy crawl``.

    python -m tools.forkserver SOCKET   (started by :class:`ForkServer`, not by hand)
"""

from __future__ import annotations

import json
import os
import random
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: the Scrapy settings that name the components a worker loads at start
_COMPONENT_DICTS = (
    "DOWNLOADER_MIDDLEWARES_BASE",
    "DOWNLOADER_MIDDLEWARES",
    "SPIDER_MIDDLEWARES_BASE",
    "SPIDER_MIDDLEWARES",
    "ITEM_PIPELINES_BASE",
    "ITEM_PIPELINES",
    "EXTENSIONS_BASE",
    "EXTENSIONS",
    "DOWNLOAD_HANDLERS_BASE",
    "DOWNLOAD_HANDLERS",
)
_COMPONENTS = (
    "SCHEDULER",
    "SCHEDULER_QUEUE_CLASS",
    "DUPEFILTER_CLASS",
    "STATS_CLASS",
    "REQUEST_FINGERPRINTER_CLASS",
    "DOWNLOADER",
    "ITEM_PROCESSOR",
    "SPIDER_LOADER_CLASS",
    "LOG_FORMATTER",
)
#: imported by the workers but named in no component setting
_MODULES = ("scrapy.cmdline", "scrapy.crawler", "twisted.internet.asyncioreactor", "lxml.html")
#: seconds a client may take to send its request
REQUEST_TIMEOUT = 30.0
#: modules that read the environment when imported: each child imports them again
_PER_CHILD = ("crawler.settings",)


def preload() -> None:
    """Import what a worker imports at start, without installing a reactor or keeping
    anything read from this process's environment."""
    import importlib

    for name in _MODULES:
        importlib.import_module(name)
    from scrapy.spiderloader import SpiderLoader
    from scrapy.utils.misc import load_object
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    paths = [path for name in _COMPONENT_DICTS for path in settings.getdict(name).values()]
    paths += [path for name in _COMPONENT_DICTS for path in settings.getdict(name)]
    paths += [settings.get(name) for name in _COMPONENTS]
    for path in paths:
        if isinstance(path, str) and "." in path:
            try:
                load_object(path)
            except Exception:  # noqa: BLE001 - an optional component; the child reports it
                pass
    SpiderLoader.from_settings(settings)  # the spiders' modules
    for name in _PER_CHILD:
        sys.modules.pop(name, None)
    if "twisted.internet.reactor" in sys.modules:
        raise RuntimeError("preloading installed a Twisted reactor: the workers need their own")
    if threading.active_count() != 1:
        raise RuntimeError("preloading started a thread: a fork would not copy it")


class _Child:
    """What the forked child runs once it has left the server's loop."""

    def __init__(self, request: Mapping[str, object], fds: Sequence[int]) -> None:
        self.argv = [str(arg) for arg in request["argv"]]  # type: ignore[attr-defined]
        self.env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
        self.cwd = str(request["cwd"])
        self.fds = list(fds)

    def run(self) -> None:
        for target, fd in enumerate(self.fds[:3]):
            os.dup2(fd, target)
        for fd in self.fds:
            if fd > 2:
                os.close(fd)
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.env)
        random.seed()
        sys.argv = list(self.argv)
        # as `python -m scrapy ARGS`: scrapy.cmdline.execute, then sys.exit(status), and
        # the interpreter's usual shutdown (atexit, flushed logs) in this process
        runpy.run_module("scrapy", run_name="__main__", alter_sys=True)


def serve(listener: socket.socket) -> _Child | None:
    """Fork a child for each request until stdin closes (the client is gone); returns
    the request to run in a forked child, None in the server when it stops."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the client
    waiting: dict[int, socket.socket] = {}
    while True:
        readable, _, _ = select.select([listener, wake_read, sys.stdin], [], [])
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            return None
        if wake_read in readable:
            os.read(wake_read, 4096)
            _reap(waiting)
        if listener in readable:
            conn, _ = listener.accept()
            # a client that dies while it asks must not hold the server (and every
            # later worker) in this read
            conn.settimeout(REQUEST_TIMEOUT)
            try:
                _, fds, _, _ = socket.recv_fds(conn, 1, 8)  # stdin, stdout, stderr
                with conn.makefile("rb") as stream:
                    message = stream.readline()
            except OSError:
                conn.close()
                continue
            if len(fds) != 3 or not message.endswith(b"\n"):
                for fd in fds:
                    os.close(fd)
                conn.close()
                continue
            conn.settimeout(None)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                for sock in (listener, conn, *waiting.values()):
                    sock.close()
                os.close(wake_read)
                os.close(wake_write)
                return _Child(json.loads(message), fds)
            for fd in fds:
                os.close(fd)
            conn.sendall(b'{"pid": %d}\n' % pid)
            waiting[pid] = conn


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(b'{"exit": %d}\n' % os.waitstatus_to_exitcode(status))
            except OSError:
                pass  # the client is gone
            conn.close()


class ForkedProcess:
    """A worker forked by the server: the ``subprocess.Popen`` calls the tests use."""

    def __init__(self, conn: socket.socket, args: Sequence[str]) -> None:
        self.args = list(args)
        self._conn = conn
        self._received = b""
        self.returncode: int | None = None
        line = self._line(None)
        if line is None:
            raise RuntimeError("the fork server closed the connection without forking")
        self.pid = int(json.loads(line)["pid"])

    def _line(self, timeout: float | None) -> bytes | None:
        """The server's next line; None when the server has closed the connection;
        b"" when none came within ``timeout`` seconds."""
        while b"\n" not in self._received:
            ready, _, _ = select.select([self._conn], [], [], timeout)
            if not ready:
                return b""
            chunk = self._conn.recv(4096)
            if not chunk:
                return None
            self._received += chunk
        line, self._received = self._received.split(b"\n", 1)
        return line

    def _read_exit(self, timeout: float | None) -> None:
        if self.returncode is not None:
            return
        line = self._line(timeout)
        if line == b"":
            return
        # no status: the server died before its child; reported as 255
        self.returncode = 255 if line is None else int(json.loads(line)["exit"])
        self._conn.close()

    def poll(self) -> int | None:
        self._read_exit(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._read_exit(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """The client: starts the server on first use, forks workers through it."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="forkserver-"))
        self.path = str(self._dir / "socket")

    @property
    def pid(self) -> int | None:
        """The server's pid (None before its first worker)."""
        return None if self._process is None else self._process.pid

    def _start(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-u", "-m", "tools.forkserver", self.path],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        ready = self._process.stdout.readline()
        if ready.strip() != b"ready":
            raise RuntimeError(f"the fork server did not start: {ready!r} (see its stderr)")

    def spawn(
        self, args: Sequence[str], env: Mapping[str, str], cwd: Path, output: int
    ) -> ForkedProcess:
        """Fork ``scrapy ARGS`` with ``env`` in ``cwd``, stdout and stderr to ``output``."""
        if self._process is None or self._process.poll() is not None:
            self._start()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.path)
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            socket.send_fds(conn, [b"\0"], [devnull, output, output])
        finally:
            os.close(devnull)
        request = {"argv": ["scrapy", *args], "env": dict(env), "cwd": str(cwd)}
        conn.sendall(json.dumps(request).encode() + b"\n")
        return ForkedProcess(conn, args)

    def close(self) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        for leftover in self._dir.iterdir():
            leftover.unlink()
        self._dir.rmdir()


def main(argv: Sequence[str]) -> int:
    # A warning raised while importing would be printed here, not in the workers' logs
    # (where the tests look for deprecations): the server does not start with one.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        preload()
    if caught:
        listed = "; ".join(f"{w.category.__name__}: {w.message}" for w in caught)
        raise RuntimeError(f"preloading the workers' modules warned: {listed}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(argv[0])
    listener.listen(64)
    print("ready", flush=True)
    child = serve(listener)
    if child is None:
        return 0
    child.run()  # exits through sys.exit in scrapy's cmdline
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
