"""What the command modules share: exit codes, output, confirmation, argument types, and
:class:`Subcommands`, through which each module registers its own sub-parser.

A command module ``master/commands/<name>.py`` holds ``register(commands)``, which adds
the ``<name>`` sub-parser (help, description, examples, arguments) and sets its handler,
``cmd_<name>(ctx, args) -> int``: ``ctx`` is :class:`master.cli.Context`, the return
value the exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any, TextIO

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_REDIS = 2
EXIT_INTERRUPTED = 130


class Subcommands:
    """The ``COMMAND`` sub-parsers of the master, all laid out alike."""

    def __init__(
        self,
        action: argparse._SubParsersAction[argparse.ArgumentParser],
        common: argparse.ArgumentParser,
        prog: str,
    ) -> None:
        self.action = action
        self.common = common  # --redis-url and --spider, accepted after the command name too
        self.prog = prog

    def add(
        self, name: str, *, help: str, description: str, examples: list[str]
    ) -> argparse.ArgumentParser:
        """Add ``name``; each example is a command line after ``prog``, unless it starts
        with ``cat `` (a pipe into ``{prog}``)."""
        lines = "\n".join(
            "  "
            + (
                example.format(prog=self.prog)
                if example.startswith("cat ")
                else f"{self.prog} {example}"
            )
            for example in examples
        )
        return self.action.add_parser(
            name,
            help=help,
            description=textwrap.fill(description, 79),
            parents=[self.common],
            epilog=f"examples:\n{lines}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )


# --- output -----------------------------------------------------------------------------


def out(text: str = "") -> None:
    print(text, file=sys.stdout, flush=True)


def err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def print_json(data: Any) -> None:
    out(json.dumps(data, indent=2, sort_keys=True, default=str))


def confirm(question: str, stream: TextIO | None = None) -> bool | None:
    """Ask on the terminal; ``None`` when there is no terminal to ask on."""
    stream = stream or sys.stdin
    if not stream.isatty():
        return None
    print(question, end="", flush=True)
    answer = stream.readline()
    return answer.strip().lower() in ("y", "yes")


def confirmed(question: str, action: str, cancelled: str) -> bool:
    """Ask ``question``; False, having said why, unless the answer is yes."""
    answer = confirm(question)
    if answer is None:
        err(f"refusing to {action} without confirmation: no terminal to ask on; pass --yes")
        return False
    if not answer:
        out(cancelled)
    return bool(answer)


def workers_phrase(count: int) -> str:
    return f"{count} live worker" + ("" if count == 1 else "s")


# --- argument types ---------------------------------------------------------------------
# (named with their underscore: argparse shows the name in "invalid _positive_int value: 'x'")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name, value
