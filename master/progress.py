"""A progress line on stderr for long master commands (``seed`` of millions of lines).

On a terminal it is one line rewritten in place (a bar when the input's size is
known); elsewhere (``--progress`` into a file or a pipe) one line per update.
"""

from __future__ import annotations

import os
import sys
import time
from typing import BinaryIO, TextIO

BAR_WIDTH = 24


class ProgressLine:
    def __init__(self, stream: BinaryIO | None = None, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.tty = self.out.isatty()
        self.stream = stream
        self.total = 0
        if stream is not None:
            try:
                self.total = os.fstat(stream.fileno()).st_size
            except (OSError, ValueError):  # a pipe, standard input
                self.total = 0
        self.started = time.monotonic()
        self.shown = False

    def _done_bytes(self) -> int:
        if self.stream is None or not self.total:
            return 0
        try:
            return self.stream.tell()
        except (OSError, ValueError):
            return 0

    def update(self, lines: int, summary: str) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        text = f"{lines:,} lines, {lines / elapsed:,.0f} lines/s: {summary}"
        if self.total:
            share = min(1.0, self._done_bytes() / self.total)
            filled = int(share * BAR_WIDTH)
            text = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {share:4.0%} " + text
        if self.tty:
            self.out.write("\r\033[K" + text)
        else:
            self.out.write(text + "\n")
        self.out.flush()
        self.shown = True

    def close(self) -> None:
        """End the line in place so that what follows starts on its own line."""
        if self.tty and self.shown:
            self.out.write("\n")
            self.out.flush()
