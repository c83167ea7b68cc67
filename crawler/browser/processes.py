"""The browser's processes, read from ``/proc``: their memory, and a last-resort kill.

Playwright runs a driver process, which launches Chromium, which forks its
renderers, GPU and utility processes. :func:`tree` lists a process and its
descendants; :func:`rss_mib` adds up their memory (proportional set size); :func:`kill_tree`
ends them all (SIGKILL) when a browser no longer answers; :func:`tidy_profiles` finds the
temporary profiles their browsers use, and deletes them once their browser is gone.
Linux only: elsewhere the tree is empty (no memory figure, no kill, no profile found).
"""

from __future__ import annotations

import os
import shutil
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


#: The name Playwright gives the temporary profile of a browser it launches (a
#: persistent context's profile is the user's own: never looked for, never deleted).
PROFILE_PREFIX = "playwright_chromiumdev_profile-"
_USER_DATA_DIR = b"--user-data-dir="
#: Chromium's process singleton: a link in the profile to a directory of its own in the
#: temporary directory (``org.chromium.Chromium.XXXXXX``), removed by a browser that exits.
_SINGLETON_LINK = "SingletonSocket"
SINGLETON_PREFIX = "org.chromium."


def profiles(pids: list[int]) -> set[str]:
    """The temporary profiles (:data:`PROFILE_PREFIX`) these processes were started with
    (their ``--user-data-dir``)."""
    found: set[str] = set()
    for pid in pids:
        try:
            args = (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for arg in args:
            if arg.startswith(_USER_DATA_DIR):
                path = os.fsdecode(arg[len(_USER_DATA_DIR) :])
                if Path(path).name.startswith(PROFILE_PREFIX):
                    found.add(path)
    return found


def singleton_dir(profile: str) -> str | None:
    """The directory of the process singleton of the browser that uses ``profile``
    (read while it runs: the link goes with a browser that exits)."""
    try:
        target = Path(os.readlink(Path(profile) / _SINGLETON_LINK)).parent
    except OSError:
        return None
    return str(target) if target.name.startswith(SINGLETON_PREFIX) else None


def tidy_profiles(driver: int | None, known: dict[str, str | None]) -> None:
    """Note in ``known`` the temporary profile of each browser the ``driver`` process
    runs, with its process singleton's directory, and delete what the browsers gone
    left of theirs (:func:`remove_profile`). A browser still exiting keeps them until
    the next call (the browser's next launch, restart or close)."""
    live = profiles(tree(driver)) if driver else set()
    for profile in live - known.keys():
        known[profile] = singleton_dir(profile)
    for profile in [p for p in known if p not in live]:
        remove_profile(profile, known.pop(profile))


def remove_profile(profile: str, singleton: str | None = None) -> None:
    """Delete what a dead browser left: its temporary profile (Playwright's driver
    deletes it when the browser exits, unless the driver was killed too: 1.2 MB) and
    its process singleton's directory (never deleted by Playwright). Nothing but such
    directories is ever deleted."""
    for path, prefix in ((profile, PROFILE_PREFIX), (singleton, SINGLETON_PREFIX)):
        if path and Path(path).name.startswith(prefix):
            shutil.rmtree(path, ignore_errors=True)
