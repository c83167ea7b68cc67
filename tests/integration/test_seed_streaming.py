"""``master seed`` on a long file: progress on stderr, duplicates found by Redis, counts."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

from crawler.core.keys import CrawlKeys
from crawler.net.network import NetworkRule
from master.progress import ProgressLine
from master.seeding import SeedLoader
from tools.workers import ROOT

KEYS = CrawlKeys()


def _seed(redis_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "master", "seed", "--redis-url", redis_url, *args],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_long_file_is_seeded_with_progress_and_duplicates_counted(
    tmp_path: Path, redis_url: str, redis_client
) -> None:
    path = tmp_path / "urls.txt"
    urls = [f"https://shop{i % 7}.example.com/p/{i}.html" for i in range(25_000)]
    # duplicates far apart (more than a batch), and a bad line
    path.write_text("\n".join(urls + urls[:1200] + ["ftp://nope.example.com/"]) + "\n")
    result = _seed(redis_url, "--progress", "--batch-size", "300", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "accepted 25000, already seeded 1200, rejected 1"
    progress = [line for line in result.stderr.splitlines() if "lines/s" in line]
    assert len(progress) == 2  # every 10,000 lines
    assert progress[0].startswith("[") and "10,000 lines" in progress[0]
    assert "20,000 lines" in progress[1]
    assert redis_client.llen(KEYS.start_urls) == 25_000
    assert redis_client.scard(KEYS.seeded) == 25_000

    again = _seed(redis_url, str(path))  # not a terminal, no --progress: no progress lines
    assert again.stdout.strip() == "accepted 0, already seeded 26200, rejected 1"
    assert "lines/s" not in again.stderr
    assert redis_client.llen(KEYS.start_urls) == 25_000


def test_progress_line_without_a_size_has_no_bar() -> None:
    out = io.StringIO()
    ProgressLine(None, out).update(50, "accepted 50")
    assert out.getvalue().startswith("50 lines, ")
    assert out.getvalue().endswith("lines/s: accepted 50\n")


def test_progress_line_bar_follows_the_file(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_bytes(b"https://a.example.com/\n" * 1000)
    out = io.StringIO()
    with open(path, "rb") as stream:
        progress = ProgressLine(stream, out)
        for _ in range(500):
            stream.readline()
        progress.update(500, "so far")
        stream.read()
        progress.update(1000, "done")
    first, second = out.getvalue().splitlines()
    assert first.startswith("[############............]  50% 500 lines")
    assert second.startswith("[########################] 100% 1,000 lines")


class _InterruptedBookkeeping(deque[object]):
    """The batches-in-flight record of a loader whose Ctrl-C lands right after a batch
    was handed to the pushing thread, before the hand-over is recorded."""

    def append(self, item: object) -> None:
        raise KeyboardInterrupt


def test_a_batch_pushed_as_ctrl_c_lands_is_counted(redis_client) -> None:
    # CI once saw a seed pushed to Redis and reported "accepted 0": the signal came
    # between the hand-over of the batch and its bookkeeping
    loader = SeedLoader(
        redis_client, KEYS, batch_size=1, rule=NetworkRule("", NetworkRule.no_resolution)
    )
    loader._in_flight = _InterruptedBookkeeping()
    with pytest.raises(KeyboardInterrupt):
        loader.load_lines(["https://shop.example.com/p/1.html", "https://shop.example.com/p/2"])
    assert redis_client.llen(KEYS.start_urls) == 1  # pushed...
    assert loader.counts.accepted == 1  # ...and counted
