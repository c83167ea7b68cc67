"""The command line itself: both entry points, --help, Redis failures, Ctrl-C, exit codes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

from crawler.core.keys import CrawlKeys
from master.cli import COMMANDS, main
from tests.support.net import free_port
from tools.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
KEYS = CrawlKeys()

OPTIONS = {
    "seed": ["FILE", "--batch-size", "--dry-run", "--json", "--progress"],
    "status": ["--json", "--watch"],
    "pause": [],
    "resume": [],
    "report": ["--json"],
    "reset": ["--yes", "--force"],
    "dead": ["list,reasons,requeue,clear", "--limit", "--start", "--json", "--yes", "--reason"],
    "serve": ["--host", "--port", "--max-body-mb", "--postgres-dsn", "--store-path"],
    "invalid": ["--limit", "--start", "--json"],
    "metrics": ["--port", "--address", "--once"],
    "export": [
        "--format",
        "--out",
        "--since",
        "--fields",
        "--progress",
        "--trusted",
        "--postgres-dsn",
        "--store-path",
    ],
    "checks": ["--json", "--all", "--fail-on"],
    "recrawl": ["--older-than", "--dry-run", "--postgres-dsn", "--mongo-uri", "--store-path"],
    "bench": [
        "--products",
        "--latency-ms",
        "--workers",
        "--redis-delay-ms",
        "--concurrency",
        "--stock-workers",
        "--set",
        "--no-reference",
        "--output",
        "--timeout",
    ],
}


def master(
    args: list[str], redis_url: str, script: bool = False
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "master.py"] if script else [sys.executable, "-m", "master"]
    return subprocess.run(
        [*command, *args],
        cwd=ROOT / "master" if script else ROOT,
        env={**os.environ, "REDIS_URL": redis_url},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_command_is_covered() -> None:
    assert set(OPTIONS) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"], prog="python -m master") == 0
    text = capsys.readouterr().out
    for option in [*OPTIONS[command], "--redis-url", "--spider"]:
        assert option in text
    assert "examples:" in text and f"python -m master {command}" in text


def test_help_of_both_entry_points() -> None:
    top = master(["--help"], "redis://unused")
    assert top.returncode == 0
    assert top.stdout.startswith("usage: python -m master")
    for command in OPTIONS:
        assert command in top.stdout
    script = master(["seed", "--help"], "redis://unused", script=True)
    assert script.returncode == 0
    assert script.stdout.startswith("usage: python master.py seed")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([], prog="master") == 2
    assert main(["nosuchcommand"], prog="master") == 2
    assert main(["seed", "x", "--batch-size", "0"], prog="master") == 2
    assert "must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["status", "--json"],
        ["pause"],
        ["resume"],
        ["report"],
        ["reset", "--yes"],
        ["dead"],
        ["dead", "requeue"],
        ["invalid"],
    ],
    ids=lambda a: " ".join(a),
)
def test_unreachable_redis(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    assert main([*args, "--redis-url", url], prog="master") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: cannot reach Redis at {url} (")
    assert "start Redis there, or point --redis-url / REDIS_URL at the crawl's Redis" in lines[0]


def test_unreachable_redis_subprocess_has_no_traceback() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    result = master(["status"], url, script=True)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_invalid_redis_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--redis-url", "http://example.com"], prog="master") == 2
    assert capsys.readouterr().err.startswith("error: invalid Redis URL 'http://example.com'")


def test_redis_url_from_environment_and_options_anywhere(
    redis_url: str,
    redis_client: redis.Redis,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    redis_client.zadd(KEYS.requests, {b"r": 0})
    monkeypatch.setenv("REDIS_URL", redis_url)
    assert main(["status", "--json"], prog="master") == 0
    assert json.loads(capsys.readouterr().out)["queued_requests"] == 1
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    assert main(["--redis-url", redis_url, "status", "--json"], prog="master") == 0
    assert main(["status", "--json", "--redis-url", redis_url], prog="master") == 0


def test_status_from_both_entry_points(redis_url: str, redis_client: redis.Redis) -> None:
    redis_client.rpush(KEYS.start_urls, b'{"url":"https://a.example/"}')
    for script in (False, True):
        result = master(["status", "--json"], redis_url, script=script)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["pending_seeds"] == 1


def test_watch_refreshes_until_ctrl_c(redis_url: str, redis_client: redis.Redis) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "master", "status", "--json", "--watch", "0.1"],
        cwd=ROOT,
        env={**os.environ, "REDIS_URL": redis_url},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        redis_client.zadd(KEYS.requests, {b"r": 0})
        deadline = time.monotonic() + 120  # a start-up on a busy machine
        while json.loads(proc.stdout.readline())["queued_requests"] != 1:
            assert time.monotonic() < deadline
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert first["queued_requests"] == 0
    assert proc.returncode == 0
    assert "Traceback" not in stderr


def master_connected(client: redis.Redis, pid_db: int) -> bool:
    return any(
        c.get("name") == "master" and int(c.get("db", -1)) == pid_db for c in client.client_list()
    )


def test_ctrl_c_while_waiting_exits_130(redis_url: str, redis_client: redis.Redis) -> None:
    """Interrupting a command that waits (here on standard input) exits 130, no traceback."""
    db = int(redis_client.connection_pool.connection_kwargs.get("db", 0))
    proc = subprocess.Popen(
        [sys.executable, "master.py", "seed", "-"],
        cwd=ROOT / "master",
        env={**os.environ, "REDIS_URL": redis_url},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120  # a start-up on a busy machine
        while not master_connected(redis_client, db):  # it connects, then reads its input
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert "Traceback" not in stderr


def test_something_that_is_not_redis(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]

        def answer_like_http() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        thread = threading.Thread(target=answer_like_http, daemon=True)
        thread.start()
        assert main(["status", "--redis-url", f"redis://127.0.0.1:{port}/0"], prog="m") == 2
        thread.join(5)
    err = capsys.readouterr().err
    assert err.startswith(f"error: something answered at redis://127.0.0.1:{port}/0, but not as")
    assert len(err.splitlines()) == 1


def test_wrong_password(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RedisServer(data_dir=tmp_path, appendonly=False, password="right-one") as server:
        wrong = f"redis://:wrong-one@127.0.0.1:{server.port}/0"
        assert main(["status", "--redis-url", wrong], prog="m") == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: Redis at redis://:***@127.0.0.1:{server.port}/0 refused")
        assert "wrong-one" not in err
        assert main(["status", "--json", "--redis-url", server.url], prog="m") == 0
