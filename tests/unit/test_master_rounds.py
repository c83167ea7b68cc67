"""``recrawl --every``'s rounds (:mod:`master.rounds`): a Ctrl-C in a round takes effect
when the round ends, and the round is counted; a second one stops at once."""

from __future__ import annotations

import os
import signal

import pytest

from master.rounds import Stopped, run_rounds


def test_a_ctrl_c_in_a_round_counts_the_round_it_let_finish() -> None:
    said: list[str] = []

    def one_round(number: int) -> None:
        said.append(f"round {number}: queued")
        os.kill(os.getpid(), signal.SIGINT)  # as the line is said: the race CI met
        said.append("after")

    with pytest.raises(Stopped) as stopped:
        run_rounds(one_round, 3600, 0)
    assert stopped.value.rounds == 1
    assert said == ["round 1: queued", "after"]


def test_a_second_ctrl_c_in_a_round_stops_it_at_once() -> None:
    said: list[str] = []

    def one_round(number: int) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        said.append("never")

    with pytest.raises(Stopped) as stopped:
        run_rounds(one_round, 3600, 0)
    assert stopped.value.rounds == 0 and said == []


def test_sigterm_while_waiting_for_the_next_round_stops_with_the_rounds_made() -> None:
    made: list[int] = []

    def one_round(number: int) -> None:
        made.append(number)
        if number == 2:  # SIGTERM 50 ms later: in the wait for round 3, 0.5 s after round 2
            signal.setitimer(signal.ITIMER_REAL, 0.05)

    previous = signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
    try:
        with pytest.raises(Stopped) as stopped:
            run_rounds(one_round, 0.5, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert stopped.value.rounds == 2 and made == [1, 2]


def test_rounds_end_at_the_most_asked_and_once_without_an_interval() -> None:
    made: list[int] = []
    assert run_rounds(made.append, 0.001, 3) == 3 and made == [1, 2, 3]
    assert run_rounds(made.append, None, 0) == 1 and made[-1] == 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
