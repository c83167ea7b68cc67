"""Child processes that a terminal's Ctrl-C does not reach, and that end with their parent.

A terminal sends SIGINT (Ctrl-C) to every process of its foreground process
group: the command typed, and every child it started that did not leave the
group. A server the command started for itself (a private Redis, the demo shop,
a test PostgreSQL) must outlive that signal, so that the command can still use
it while it winds down (stop its workers, print a report) and then stop it.
``own_session()`` gives such a child a session of its own (so no terminal signal
reaches it) and, on Linux, asks the kernel to send it ``death_signal`` when the
thread that started it dies (``PR_SET_PDEATHSIG``), so that a parent killed
outright (SIGKILL, a crash) leaves no server behind either.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar

_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function: Callable[..., int] | None = getattr(libc, "prctl", None)
    return function


# looked up once, here: the function a forked child calls must not import or load anything
_PRCTL = _prctl()


def _die_with_parent(death_signal: int, parent: int) -> Callable[[], None]:
    def in_child() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, death_signal, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), death_signal)

    return in_child


def own_session(death_signal: int = signal.SIGTERM) -> dict[str, Any]:
    """``subprocess.Popen`` keyword arguments: a session of its own, and ``death_signal``
    when the thread that starts it dies (start it from a thread that lives as long as
    it should: the main thread)."""
    return {
        "start_new_session": True,
        "preexec_fn": _die_with_parent(death_signal, os.getpid()),
    }


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_Server = TypeVar("_Server", bound="ServerProcess")


class ServerProcess:
    """A server this process started (``process``), with its temporary folder
    (``_tmp``, None when the caller gave one): stopped by :meth:`stop`, its folder
    removed by :meth:`cleanup`, both at the end of a ``with`` block. A subclass
    starts it (``start``, returning itself) and says how it stops cleanly
    (``stop_signal``, waited for ``stop_timeout`` seconds before a SIGKILL)."""

    stop_signal: int = signal.SIGTERM
    stop_timeout: float = 10.0
    process: subprocess.Popen[bytes] | None = None
    _tmp: tempfile.TemporaryDirectory[str] | None = None

    def start(self: _Server) -> _Server:
        raise NotImplementedError

    def stop(self, sig: int | None = None, timeout: float | None = None) -> None:
        """``sig`` (the class's clean stop when None; SIGKILL: a crash), then SIGKILL
        after ``timeout`` seconds."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(self.stop_signal if sig is None else sig)
            try:
                self.process.wait(self.stop_timeout if timeout is None else timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def cleanup(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
