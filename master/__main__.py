"""``python -m master COMMAND``: the master's command line (see :mod:`master.cli`)."""

from __future__ import annotations

import sys


def run(prog: str = "python -m master") -> int:
    try:
        from master.cli import main
    except KeyboardInterrupt:  # Ctrl-C while still importing
        return 130
    return main(prog=prog)


if __name__ == "__main__":
    sys.exit(run())
