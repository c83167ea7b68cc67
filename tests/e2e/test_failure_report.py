"""A failed e2e test shows its workers' logs, so the failure explains itself."""

from __future__ import annotations

import os

import pytest

from tools.workers import ROOT

pytestmark = pytest.mark.workers

pytest_plugins = ["pytester"]

INNER_TEST = """
from tests.support.net import free_port


def test_fails_after_a_worker_ran(crawl):
    crawl.env["REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"
    worker = crawl.start_worker("w-unlucky")
    crawl.wait_workers()
    assert worker.process.returncode == 0
"""


def test_a_failed_test_shows_the_tail_of_each_worker_log(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makeconftest('pytest_plugins = ["tests.conftest", "tests.e2e.conftest"]\n')
    pytester.makepyfile(test_inner=INNER_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "worker w-unlucky: " in output, output[-4000:]
    # the worker's own explanation, from its log
    assert "Cannot reach the shared Redis at redis://127.0.0.1:" in output, output[-4000:]
