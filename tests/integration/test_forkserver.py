"""The fork server the tests start workers from (tools/forkserver.py): each child is a
``scrapy`` command of its own, with the environment, arguments, output and exit status
it would have as ``python -m scrapy``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.forkserver import ROOT, ForkedProcess, ForkServer


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    fork_server = ForkServer()
    yield fork_server
    fork_server.close()


def _run(server: ForkServer, tmp_path: Path, args: list[str], **env: str) -> tuple[int, str]:
    log = tmp_path / "out.log"
    with open(log, "ab") as output:
        child = server.spawn(args, {**os.environ, **env}, ROOT, output.fileno())
    status = child.wait(120)
    return status, log.read_text()


def test_a_child_reads_the_project_settings_from_its_own_environment(
    server: ForkServer, tmp_path: Path
) -> None:
    # crawler/settings.py reads the environment when imported: the server imported it
    # with its own, so a child that kept that copy would print the server's value
    for url in ("redis://127.0.0.1:1/3", "redis://127.0.0.1:2/4"):
        status, output = _run(server, tmp_path, ["settings", "--get", "REDIS_URL"], REDIS_URL=url)
        assert status == 0, output
        assert output.splitlines()[-1] == url


def test_a_childs_arguments_and_exit_status_are_its_own(server: ForkServer, tmp_path: Path) -> None:
    status, output = _run(server, tmp_path, ["crawl", "no-such-spider"])
    assert status != 0
    assert "no-such-spider" in output


def _idle_worker(server: ForkServer, redis_url: str, tmp_path: Path) -> ForkedProcess:
    """A worker with nothing to crawl that never closes for idleness."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "EMBEDDED_STORE_PATH": str(tmp_path / "store.sqlite3"),
        "TMPDIR": str(tmp_path),
    }
    with open(tmp_path / "worker.log", "ab") as output:
        return server.spawn(
            ["crawl", "ecommerce", "-s", "MAX_IDLE_TIME_BEFORE_CLOSE=0"], env, ROOT, output.fileno()
        )


def test_a_child_is_a_process_that_signals_reach(
    server: ForkServer, redis_url: str, tmp_path: Path
) -> None:
    child = _idle_worker(server, redis_url, tmp_path)
    assert child.poll() is None
    child.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
        assert time.monotonic() < deadline, "SIGSTOP did not stop the child"
        time.sleep(0.01)
    child.kill()
    assert child.wait(30) == -signal.SIGKILL
    assert child.poll() == -signal.SIGKILL


def test_a_sigint_stops_a_child_cleanly_and_wait_has_a_timeout(
    server: ForkServer, redis_url: str, tmp_path: Path
) -> None:
    child = _idle_worker(server, redis_url, tmp_path)
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(0.2)
    deadline = time.monotonic() + 120
    while "Spider opened" not in (tmp_path / "worker.log").read_text():
        assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    assert child.wait(120) == 0, (tmp_path / "worker.log").read_text()
    assert "Spider closed (shutdown)" in (tmp_path / "worker.log").read_text()


def test_a_client_that_dies_while_it_asks_does_not_hold_the_server(
    server: ForkServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, _ = _run(server, tmp_path, ["version"])  # the server is up
    assert status == 0
    serving = server.pid
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(server.path)  # connects, then says nothing and goes
    silent.close()
    half = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    half.connect(server.path)
    with open(os.devnull, "rb") as devnull:
        socket.send_fds(half, [b"\0"], [devnull.fileno()] * 3)
    half.close()  # the fds came, the request never did
    status, output = _run(server, tmp_path, ["version"])
    assert status == 0, output
    assert output.strip().startswith("Scrapy")
    assert server.pid == serving  # the same server: it neither stopped nor was restarted
