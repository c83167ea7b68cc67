"""Rounds of work every so often until Ctrl-C or SIGTERM (``recrawl --every``).

A round that has begun ends before a Ctrl-C (or SIGTERM) takes effect, so that a round
whose work is queued and said is also counted ("stopped after N rounds"); the first
Ctrl-C says so, and a second one stops at once, as Scrapy's does (a round of
``recrawl --listings --follow-up`` may wait minutes for the workers).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_STOPS = (signal.SIGINT, signal.SIGTERM)


def run_rounds(one_round: Callable[[int], Any], interval: float | None, most: int) -> int:
    """``one_round(n)`` now and every ``interval`` seconds (None: once) until Ctrl-C,
    SIGTERM or ``most`` rounds (0: no limit); the rounds made. Ctrl-C or SIGTERM raise
    :class:`Stopped` (a ``KeyboardInterrupt``) with the rounds made; an error of a round
    goes through as it is."""
    rounds = 0
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        while True:
            started = time.monotonic()
            with _held(rounds):
                one_round(rounds + 1)
                rounds += 1
            if interval is None or (most and rounds >= most):
                return rounds
            while (left := started + interval - time.monotonic()) > 0:
                time.sleep(min(left, 0.5))
    except Stopped:
        raise
    except KeyboardInterrupt:
        raise Stopped(rounds) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


class Stopped(KeyboardInterrupt):
    """Ctrl-C or SIGTERM between or in rounds: ``rounds`` were made."""

    def __init__(self, rounds: int) -> None:
        super().__init__(rounds)
        self.rounds = rounds


@contextmanager
def _held(done_before: int) -> Iterator[None]:
    """Ctrl-C and SIGTERM held until the block ends (then :class:`Stopped`, counting the
    round the block made); a second one meanwhile stops at once."""
    asked: list[int] = []

    def hold(signum: int, frame: object) -> None:
        if asked:
            raise Stopped(done_before)
        asked.append(signum)
        # os.write: a print here could land inside the round's own print to the stream
        os.write(2, b"stopping after this round; Ctrl-C again to stop now\n")

    previous = [signal.signal(number, hold) for number in _STOPS]
    try:
        yield
    finally:
        for number, handler in zip(_STOPS, previous, strict=True):
            signal.signal(number, handler)
    if asked:
        raise Stopped(done_before + 1)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM between rounds ends them as Ctrl-C does

