"""A command run in a pseudo-terminal, as a user runs it in a terminal window.

The command leads a session of its own whose controlling terminal is the
pseudo-terminal, its process group in the foreground (what a shell does).
:meth:`Terminal.ctrl_c` writes the ^C character to the terminal: the kernel's
line discipline then sends SIGINT to every process of the foreground process
group, exactly as pressing Ctrl-C does. Everything the command writes is read
as it comes (:meth:`Terminal.wait_for`, :attr:`Terminal.output`).
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path


def _foreground_in(tty: int) -> Callable[[], None]:
    def in_child() -> None:
        fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
        os.tcsetpgrp(tty, os.getpgrp())
        # a test process may run with SIGINT ignored (inherited by exec): a terminal's
        # program starts with the default disposition
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return in_child


class Terminal:
    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._master, tty = pty.openpty()
        try:
            self.process = subprocess.Popen(
                list(args),
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=tty,
                stdout=tty,
                stderr=tty,
                start_new_session=True,
                preexec_fn=_foreground_in(tty),
            )
        finally:
            os.close(tty)
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="terminal", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:  # EIO: every process holding the terminal has closed it
                return
            if not data:
                return
            with self._lock:
                self._output += data

    @property
    def output(self) -> str:
        with self._lock:
            return self._output.decode(errors="replace").replace("\r\n", "\n")

    def wait_for(self, text: str, timeout: float) -> str:
        """Wait until ``text`` was written (the output so far); fail with the output."""
        deadline = time.monotonic() + timeout
        while text not in self.output:
            if self.process.poll() is not None:
                self._reader.join(5)
                if text in self.output:
                    break
                raise AssertionError(
                    f"exited with {self.process.returncode} before writing {text!r}:\n"
                    f"{self.output[-6000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not written in {timeout}s:\n{self.output[-6000:]}")
            time.sleep(0.05)
        return self.output

    def ctrl_c(self) -> float:
        """Press Ctrl-C: the ^C character, which the terminal turns into SIGINT to its
        foreground process group. Returns when (``time.monotonic()``)."""
        os.write(self._master, b"\x03")
        return time.monotonic()

    def foreground_group(self) -> int:
        return os.tcgetpgrp(self._master)

    def wait(self, timeout: float) -> int:
        """The exit status, once the command exited and its output is all read."""
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"still running {timeout}s later:\n{self.output[-6000:]}"
            ) from None
        self._reader.join(10)
        return status

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self._master)
        self._reader.join(5)


def process_groups(pids: Sequence[int]) -> dict[int, int]:
    """Each live process's process group."""
    groups = {}
    for pid in pids:
        if Path(f"/proc/{pid}").exists():
            groups[pid] = os.getpgid(pid)
    return groups
