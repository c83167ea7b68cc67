"""``master pause``, ``resume`` and ``reset``: their effects in Redis and what they print."""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from crawler.core.keys import CrawlKeys
from master.cli import main

ROOT = Path(__file__).resolve().parents[2]
KEYS = CrawlKeys()


def run(capsys: pytest.CaptureFixture[str], redis_url: str, *args: str) -> tuple[int, str, str]:
    code = main(["--redis-url", redis_url, *args], prog="master")
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def make_live(client: redis.Redis, *workers: str) -> None:
    for worker in workers:
        client.hset(KEYS.workers, worker, json.dumps({"worker": worker, "state": "running"}))
        client.set(KEYS.alive(worker), "1", ex=60)


def test_pause_and_resume(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    make_live(redis_client, "w1", "w2")
    before = time.time()
    code, out, _ = run(capsys, redis_url, "pause")
    assert code == 0
    marker = json.loads(redis_client.get(KEYS.paused))
    assert before <= marker["since"] <= time.time()
    assert marker["by"].endswith("@" + socket.gethostname())
    assert out.splitlines() == [
        f"paused crawl 'ecommerce' (by {marker['by']}).",
        "2 live workers will stop taking requests within about a second; "
        "requests already in flight finish.",
    ]

    code, out, _ = run(capsys, redis_url, "pause")
    assert code == 0
    assert "already paused since" in out and "nothing changed (2 live workers holding)" in out
    assert json.loads(redis_client.get(KEYS.paused)) == marker  # the first pause is kept

    code, out, _ = run(capsys, redis_url, "resume")
    assert code == 0
    assert redis_client.exists(KEYS.paused) == 0
    assert out.splitlines()[0].startswith(f"resumed crawl 'ecommerce' (paused by {marker['by']}")
    assert out.splitlines()[1] == "2 live workers will take requests again within about a second."

    code, out, _ = run(capsys, redis_url, "resume")
    assert code == 0
    assert out.strip() == "crawl 'ecommerce' is not paused; nothing changed (2 live workers)."


def test_pause_without_workers(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    _, out, _ = run(capsys, redis_url, "pause")
    assert "No live worker right now" in out
    assert redis_client.exists(KEYS.paused) == 1


def fill_crawl(client: redis.Redis) -> None:
    client.zadd(KEYS.requests, {b"r1": 0, b"r2": 0})
    client.rpush(KEYS.start_urls, b"{}")
    client.sadd(KEYS.seeded, b"a", b"b", b"c")
    client.sadd(KEYS.dupefilter, b"\x01" * 20)
    client.hset(KEYS.inflight("w9"), b"lease", b"req")
    client.hset(KEYS.workers, "w9", json.dumps({"worker": "w9", "state": "finished"}))
    client.rpush(KEYS.dead, b"{}")
    client.set("other:requests", b"keep me")
    client.set("ecommercex", b"keep me too")


def test_reset_yes_deletes_only_the_crawl(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    fill_crawl(redis_client)
    for i in range(1200):  # more than one SCAN/UNLINK batch
        redis_client.hset(KEYS.inflight(f"old{i}"), b"l", b"r")
    code, out, err = run(capsys, redis_url, "reset", "--yes")
    assert code == 0, err
    assert out.splitlines()[0] == f"reset deletes 1207 keys matching ecommerce:* on {redis_url}:"
    assert "  queued requests        2" in out.splitlines()
    assert "  requests in flight  1201" in out.splitlines()
    assert out.splitlines()[-1] == "deleted 1207 keys of crawl 'ecommerce'."
    assert sorted(redis_client.keys("*")) == [b"ecommercex", b"other:requests"]

    code, out, _ = run(capsys, redis_url, "reset", "--yes")
    assert code == 0
    assert out.strip() == f"nothing to delete: no key matches ecommerce:* on {redis_url}"


def test_reset_without_terminal_refuses(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    fill_crawl(redis_client)
    code, out, err = run(capsys, redis_url, "reset")
    assert code == 1
    assert "reset deletes 7 keys" in out
    assert err.strip() == (
        "refusing to reset without confirmation: no terminal to ask on; pass --yes"
    )
    assert redis_client.exists(KEYS.requests) == 1


def test_reset_refuses_while_workers_live(
    capsys: pytest.CaptureFixture[str], redis_url: str, redis_client: redis.Redis
) -> None:
    fill_crawl(redis_client)
    make_live(redis_client, "w1")
    code, _, err = run(capsys, redis_url, "reset", "--yes")
    assert code == 1
    assert err.strip() == (
        "refusing to reset: 1 live worker (w1) at work on this crawl; stop them first, "
        "or pass --force"
    )
    assert redis_client.exists(KEYS.requests) == 1
    code, out, _ = run(capsys, redis_url, "reset", "--yes", "--force")
    assert code == 0
    assert "(--force: 1 live worker still running)" in out
    assert redis_client.keys("ecommerce:*") == []


def reset_on_a_terminal(redis_url: str, answer: bytes) -> tuple[int, str]:
    """Run ``python -m master reset`` with a pseudo-terminal as stdin; answer its question."""
    master_fd, slave_fd = pty.openpty()
    env = {**os.environ, "REDIS_URL": redis_url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "master", "reset"],
        cwd=ROOT,
        env=env,
        stdin=slave_fd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    os.close(slave_fd)
    assert proc.stdout is not None
    output = b""
    try:
        deadline = time.monotonic() + 120  # a start-up on a busy machine
        while b"[y/N]" not in output:
            assert time.monotonic() < deadline, output
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 4096)
                assert chunk, output
                output += chunk
        os.write(master_fd, answer)
        rest, _ = proc.communicate(timeout=120)
        output += rest
    finally:
        os.close(master_fd)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, output.decode()


def test_reset_asks_on_a_terminal(redis_url: str, redis_client: redis.Redis) -> None:
    fill_crawl(redis_client)
    code, output = reset_on_a_terminal(redis_url, b"n\n")
    assert code == 1
    assert "Delete all 7 keys? [y/N]" in output
    assert "reset cancelled; nothing was deleted." in output
    assert redis_client.exists(KEYS.requests) == 1

    code, output = reset_on_a_terminal(redis_url, b"yes\n")
    assert code == 0, output
    assert "deleted 7 keys of crawl 'ecommerce'." in output
    assert redis_client.keys("ecommerce:*") == []
