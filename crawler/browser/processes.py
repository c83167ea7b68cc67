"""The browser's processes, read from ``/proc``: their memory, and a last-resort kill.

Playwright runs a driver process, which launches Chromium, which forks its
renderers, GPU and utility processes. :func:`tree` lists a process and its
descendants; :func:`rss_mib` adds up their memory (proportional set size); :func:`kill_tree`
ends them all (SIGKILL) when a browser no longer answers. Linux only: elsewhere the
tree is empty (no memory figure, no kill).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

_PROC = Path("/proc")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            text = (task / "children").read_text()
        except OSError:
            continue
        out.extend(int(child) for child in text.split())
    return out


def tree(pid: int) -> list[int]:
    """``pid`` and every descendant that still runs."""
    found: list[int] = []
    todo = [pid]
    while todo and len(found) < 1000:
        current = todo.pop()
        if not (_PROC / str(current)).exists():
            continue
        found.append(current)
        todo.extend(_children(current))
    return found


def rss_mib(pids: list[int]) -> float:
    """The memory of these processes together, in MiB: their proportional set size (each
    shared page counted once across them, ``/proc/<pid>/smaps_rollup``), else their
    resident size (``statm``: shared pages counted in each)."""
    total = 0
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    for pid in pids:
        try:
            rollup = (_PROC / str(pid) / "smaps_rollup").read_text()
            pss = next(line for line in rollup.splitlines() if line.startswith("Pss:"))
            total += int(pss.split()[1]) * 1024
            continue
        except (OSError, StopIteration, IndexError, ValueError):
            pass
        try:
            fields = (_PROC / str(pid) / "statm").read_text().split()
            total += int(fields[1]) * page
        except (OSError, IndexError, ValueError):
            continue
    return total / (1024 * 1024)


def kill_tree(pid: int) -> int:
    """SIGKILL ``pid`` and its descendants (children first); how many were signalled."""
    killed = 0
    for target in reversed(tree(pid)):
        try:
            os.kill(target, signal.SIGKILL)
            killed += 1
        except OSError:
            continue
    return killed
