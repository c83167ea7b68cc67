"""A worker that cannot reach Redis says so at once, and exits non-zero."""

import os
import subprocess
import sys

import pytest
from scrapy.settings import Settings

from crawler.spiders.ecommerce import RedisUnavailable, check_redis
from tests.support.net import free_port
from tools.workers import ROOT


def test_check_redis_names_the_url_without_its_password():
    url = f"redis://:s3cret@127.0.0.1:{free_port()}/0"
    with pytest.raises(RedisUnavailable, match=r"redis://:\*\*\*@127\.0\.0\.1") as info:
        check_redis(Settings({"REDIS_URL": url}))
    assert "s3cret" not in str(info.value)
    assert "REDIS_URL" in str(info.value)


def test_check_redis_passes_on_a_live_redis(redis_url):
    check_redis(Settings({"REDIS_URL": redis_url}))


def test_scrapy_crawl_exits_1_with_the_reason_in_one_line():
    env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "ecommerce"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,  # start-up takes over a minute on a busy machine
    )
    assert result.returncode == 1, result.stderr[-3000:]
    # one clean line: no traceback, no asyncio "Task exception was never retrieved"
    errors = [line for line in result.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, result.stderr[-3000:]
    assert "Cannot reach the shared Redis at redis://127.0.0.1:" in errors[0]
    assert "REDIS_URL" in errors[0]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "never retrieved" not in result.stderr, result.stderr[-3000:]


def test_a_worker_imports_no_extension_it_never_runs():
    """Scrapy imports every extension its lists name, enabled or not: the remote control
    (disabled on the workers) is left out of the list, so its aiohttp server is never
    imported; every other extension of Scrapy's and the project's stays."""
    code = (
        "import sys\n"
        "from scrapy.extension import ExtensionManager\n"
        "from scrapy.utils.project import get_project_settings\n"
        "names = ExtensionManager._get_mwlist_from_settings(get_project_settings())\n"
        "print(' '.join(map(str, names)))\n"
        "print('scrapy.extensions.remote_control' in sys.modules, 'aiohttp' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr[-3000:]
    names, imported = result.stdout.splitlines()
    assert imported == "False False"
    for kept in ("corestats.CoreStats", "logstats.LogStats", "closespider.CloseSpider"):
        assert f"scrapy.extensions.{kept}" in names.split()
    assert "crawler.extensions.workerstats.WorkerStats" in names.split()
    assert "RemoteControl" not in names
