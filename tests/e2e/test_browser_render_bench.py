"""``python -m benchmarks.browser_render`` on a few pages: it runs and prints its figures.

No speed is asserted: only that each run crawled (and, rendered, rendered) every page
it was given and that the table and the ratio are printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser_site import chromium_or_skip
from tools.workers import ROOT

pytestmark = pytest.mark.workers

PAGES = 3


def test_the_benchmark_prints_plain_and_rendered_figures(tmp_path: Path) -> None:
    chromium_or_skip()
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.browser_render", "--pages", str(PAGES),
         "--runs", "plain", "rendered", "--output", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "rendered vs plain:" in result.stdout and "CPU ms/page" in result.stdout
    data = json.loads((tmp_path / "browser_render.json").read_text())
    runs = {r["run"]: r for r in data["results"]}
    assert set(runs) == {"plain", "rendered"}
    assert runs["plain"]["stored"] == runs["rendered"]["stored"] == PAGES
    assert runs["plain"]["rendered"] == 0 and runs["rendered"]["rendered"] == PAGES
    # the browser's processes are measured: only the rendered run has any
    assert runs["plain"]["browser_cpu_ms_per_page"] == 0
    assert runs["rendered"]["browser_cpu_ms_per_page"] > 0
    assert runs["rendered"]["shop_requests_per_page"] == 3  # document, app.js, the API


def test_without_chromium_it_says_so_and_exits_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.browser_render", "--pages", "1"],
        cwd=ROOT,
        env={**os.environ, "BROWSER_EXECUTABLE": str(tmp_path / "no-chromium")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "no Chromium at" in result.stderr and "apt-get install chromium" in result.stderr
    assert result.stdout == ""
