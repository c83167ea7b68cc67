"""``python -m master ARGS`` run in the test's own process: the same ``master.cli.main``
the command line runs, with the crawl's environment, its standard input given and its
output captured, as a ``CompletedProcess``.

The end-to-end tests ask the master for a hundred and more commands (seed, status,
report, recrawl ...) beside the real worker processes they test; each as a process of
its own cost about a second of CPU to start (the interpreter, Scrapy, redis-py, the
stores), a sixth of the suite's CPU time on two cores. The master's own command line,
as a process, is tested in ``tests/integration/test_master_*.py``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout


@contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _stdin(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
    try:
        yield
    finally:
        sys.stdin = saved


def run_master(
    args: list[str], env: Mapping[str, str], input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The master's ``main(args)`` with ``env`` over this process's environment."""
    from master.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _environment(env), _stdin(input or ""), redirect_stdout(out), redirect_stderr(err):
        code = main(list(args), prog="python -m master")
    return subprocess.CompletedProcess(
        ["python", "-m", "master", *args], code, out.getvalue(), err.getvalue()
    )
