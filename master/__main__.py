"""``python -m master COMMAND``: the master's command line (see :mod:`master.cli`)."""

from __future__ import annotations

import signal
import sys


def run(prog: str = "python -m master") -> int:
    # Ctrl-C (SIGINT) always interrupts, even when the process was started with SIGINT
    # ignored (a background job of a non-interactive shell, some supervisors): the
    # long-running commands (metrics, status --watch, seed) then stop cleanly.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        from master.cli import main
    except KeyboardInterrupt:  # Ctrl-C while still importing
        return 130
    return main(prog=prog)


if __name__ == "__main__":
    sys.exit(run())
