"""The shop's access log: one tab-separated line per request, written and flushed at once.

Format (one line per request, in the order the requests arrived)::

    epoch_seconds <TAB> METHOD <TAB> path_with_query <TAB> status <TAB> user_agent

``epoch_seconds`` has six decimals; ``path_with_query`` is the request target
exactly as received (tabs, newlines and backslashes escaped with a backslash);
the user agent is ``-`` when the request had none. A line is written when the
request has been read and routed, before any ``--latency-ms`` delay.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import IO, NamedTuple


class AccessEntry(NamedTuple):
    time: float
    method: str
    path: str
    status: int
    user_agent: str


def _clean(text: str) -> str:
    if "\t" in text or "\n" in text or "\r" in text or "\\" in text:
        text = text.replace("\\", "\\\\").replace("\t", "\\t")
        text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text


def _unclean(text: str) -> str:
    if "\\" not in text:
        return text
    out, chars = [], iter(text)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(nxt, nxt))
        else:
            out.append(ch)
    return "".join(out)


class AccessLogWriter:
    """Appends access log lines to a file (line-buffered: each line reaches the file at once)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = open(  # noqa: SIM115 - closed by close()
            self.path, "a", buffering=1, encoding="utf-8", errors="replace", newline="\n"
        )

    def log(self, method: str, target: str, status: int, user_agent: str | None) -> None:
        if self._file is None:
            return
        self._file.write(
            f"{time.time():.6f}\t{_clean(method)}\t{_clean(target)}\t{status}\t"
            f"{_clean(user_agent) if user_agent else '-'}\n"
        )

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def parse_access_log_line(line: str) -> AccessEntry:
    stamp, method, path, status, agent = line.rstrip("\n").split("\t")
    return AccessEntry(float(stamp), _unclean(method), _unclean(path), int(status), _unclean(agent))


def read_access_log(path: str | os.PathLike[str]) -> list[AccessEntry]:
    """Every complete line of the access log at ``path`` (an absent file reads as empty)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    # The last piece is "" or a line being written right now: leave it for the next read.
    return [parse_access_log_line(line) for line in text.split("\n")[:-1]]
