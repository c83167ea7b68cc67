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
import sys
from collections.abc import Callable
from typing import Any

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
