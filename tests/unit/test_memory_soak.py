"""``benchmarks.memory_soak.checkpoints``: RSS at each tenth of a crawl's pages."""

from __future__ import annotations

from benchmarks.memory_soak import checkpoints


def test_checkpoints_take_the_first_sample_past_each_part() -> None:
    samples = [(0.5 * i, i * 10, 100 + i) for i in range(101)]  # 0 .. 1000 pages
    marks = checkpoints(samples, parts=4)
    assert marks == [(250, 125), (500, 150), (750, 175), (1000, 200)]


def test_checkpoints_skip_to_the_sample_after_a_jump() -> None:
    samples = [(1.0, 0, 50), (2.0, 10, 60), (3.0, 90, 70), (4.0, 100, 80)]
    # 1/2 of 100 pages is first passed at 90 pages, which is also the first sample past 1/4
    assert checkpoints(samples, parts=4) == [(90, 70), (90, 70), (90, 70), (100, 80)]


def test_no_samples_no_checkpoints() -> None:
    assert checkpoints([]) == []
