"""``master seed`` run for real, as a subprocess, through both entry points."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from crawler.core.keys import CrawlKeys
from tests.support.net import free_port

ROOT = Path(__file__).resolve().parents[2]
KEYS = CrawlKeys()
LONG_URL = "https://shop.example.com/" + "a" * 3000

SEED_FILE = (
    "\n".join(
        [
            "# seeds for the test shop",  # 1
            "https://shop.example.com/",  # 2 ok
            "",  # 3
            '{"url": "https://shop.example.com/c/shoes", "meta": {"category": "shoes"}}',  # 4 ok
            "https://shop.example.com/",  # 5 dup of 2
            '{"url": ""}',  # 6 empty url
            "shop.example.com/c/hats",  # 7 no scheme
            "ftp://x",  # 8 ftp
            "not a url",  # 9
            '{"url": "https://shop.example.com/broken"',  # 10 broken JSON
            '["https://shop.example.com/array"]',  # 11 array
            '{"url": "https://shop.example.com/k", "priority": 3}',  # 12 unknown key
            LONG_URL,  # 13 too long
            "http://other.example.org/list?b=2&a=1",  # 14 ok
            "http://other.example.org/list?a=1&b=2",  # 15 same, canonical
            '  {"url": "https://shop.example.com/c/bags", "meta": {}}  ',  # 16 ok
        ]
    )
    + "\n"
)

EXPECTED_ERRORS = [
    'line 6: empty URL: \'{"url": ""}\'',
    "line 7: not an absolute URL (expected http:// or https://): 'shop.example.com/c/hats'",
    "line 8: scheme 'ftp' is not http or https: 'ftp://x'",
    "line 9: URL contains whitespace or control characters: 'not a url'",
    "line 10: invalid JSON",
    "line 11: JSON seed must be an object",
    "line 12: unknown key(s) priority (allowed: url, meta)",
    "line 13: URL longer than 2048 characters",
]
EXPECTED_PAYLOADS = [
    {"url": "https://shop.example.com/"},
    {"url": "https://shop.example.com/c/shoes", "meta": {"category": "shoes"}},
    {"url": "http://other.example.org/list?b=2&a=1"},
    {"url": "https://shop.example.com/c/bags"},
]


def run_master(
    args: list[str], redis_url: str, cwd: Path = ROOT, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    script = ["master.py"] if cwd == ROOT / "master" else ["-m", "master"]
    env = {**os.environ, "REDIS_URL": redis_url}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, *script, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def seed_file(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text(SEED_FILE, encoding="utf-8")
    return path


def start_urls(client: redis.Redis) -> list[dict]:
    return [json.loads(raw) for raw in client.lrange(KEYS.start_urls, 0, -1)]


@pytest.mark.parametrize("cwd", [ROOT, ROOT / "master"], ids=["python -m master", "master.py"])
def test_seed_file_pushes_exactly_the_valid_seeds(
    cwd: Path, seed_file: Path, redis_url: str, redis_client: redis.Redis
) -> None:
    result = run_master(["seed", str(seed_file)], redis_url, cwd)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "accepted 4, already seeded 2, rejected 8"
    errors = result.stderr.splitlines()
    assert len(errors) == len(EXPECTED_ERRORS), result.stderr
    for line, expected in zip(errors, EXPECTED_ERRORS, strict=True):
        assert line.startswith(expected)
    assert "Traceback" not in result.stderr

    assert start_urls(redis_client) == EXPECTED_PAYLOADS
    assert sorted(redis_client.keys("*")) == sorted(
        [KEYS.start_urls.encode(), KEYS.seeded.encode()]
    )
    assert redis_client.scard(KEYS.seeded) == 4

    # a second run, and a file overlapping the first: nothing pushed twice
    again = run_master(["seed", str(seed_file)], redis_url, cwd)
    assert again.returncode == 0
    assert again.stdout.strip() == "accepted 0, already seeded 6, rejected 8"
    overlap = seed_file.with_name("more.txt")
    overlap.write_text("https://shop.example.com/\nhttps://shop.example.com/new\n")
    more = run_master(["seed", str(overlap)], redis_url, cwd)
    assert more.stdout.strip() == "accepted 1, already seeded 1, rejected 0"
    assert start_urls(redis_client) == EXPECTED_PAYLOADS + [{"url": "https://shop.example.com/new"}]


def test_seed_from_stdin_in_small_batches(redis_url: str, redis_client: redis.Redis) -> None:
    lines = "".join(f"https://shop.example.com/p/{i}\n" for i in range(7)) + "ftp://nope\n"
    result = run_master(["seed", "--batch-size", "3", "-"], redis_url, stdin=lines)
    assert result.returncode == 0
    assert result.stdout.strip() == "accepted 7, already seeded 0, rejected 1"
    assert result.stderr.strip() == "line 8: scheme 'ftp' is not http or https: 'ftp://nope'"
    assert [s["url"] for s in start_urls(redis_client)] == [
        f"https://shop.example.com/p/{i}" for i in range(7)
    ]


def test_strategy_and_scope_are_validated(redis_url: str, redis_client: redis.Redis) -> None:
    good = {"strategy": "pagination", "max_pages": 100, "max_depth": 3, "allow": "/c/|/p/"}
    lines = [
        json.dumps({"url": "https://shop.example.com/c/shoes/", "meta": good}),
        json.dumps({"url": "https://shop.example.com/", "meta": {"strategy": "all"}}),
        json.dumps({"url": "https://shop.example.com/a", "meta": {"max_pages": -1}}),
        json.dumps({"url": "https://shop.example.com/b", "meta": {"deny": "[a-"}}),
        json.dumps({"url": "https://shop.example.com/c", "meta": {"scope": {"s": "auto"}}}),
    ]
    result = run_master(["seed", "-"], redis_url, stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "accepted 1, already seeded 0, rejected 4"
    errors = result.stderr.splitlines()
    assert errors[0].startswith("line 2: 'strategy' must be one of auto, sitemap, navigation")
    assert errors[1].startswith("line 3: 'max_pages' must be a whole number from 1")
    assert errors[2].startswith("line 4: 'deny' pattern '[a-' is not a valid regex")
    assert errors[3].startswith("line 5: meta key(s) scope not allowed")
    assert start_urls(redis_client) == [{"url": "https://shop.example.com/c/shoes/", "meta": good}]


@pytest.mark.parametrize(
    "content",
    ["", "# only a comment\n\n", "ftp://x\nnot a url\n"],
    ids=["empty", "comments", "bad"],
)
def test_nothing_valid_exits_1(
    content: str, tmp_path: Path, redis_url: str, redis_client: redis.Redis
) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text(content)
    result = run_master(["seed", str(path)], redis_url)
    assert result.returncode == 1
    rejected = content.count("\n") if content.startswith("ftp") else 0
    assert result.stdout.strip() == f"accepted 0, already seeded 0, rejected {rejected}"
    assert "no valid seed" in result.stderr
    assert redis_client.llen(KEYS.start_urls) == 0


def test_missing_file_exits_1(redis_url: str) -> None:
    result = run_master(["seed", "/nonexistent/seeds.txt"], redis_url)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: cannot read /nonexistent/seeds.txt: No such file or directory"
    )


def test_dry_run_pushes_nothing(seed_file: Path, redis_url: str, redis_client: redis.Redis) -> None:
    result = run_master(["seed", "--dry-run", str(seed_file)], redis_url)
    assert result.returncode == 0
    assert result.stdout.strip() == "dry run: valid 4, duplicates 2, rejected 8; nothing was pushed"
    assert len(result.stderr.splitlines()) == 8
    assert redis_client.dbsize() == 0


def test_seed_json_summary(seed_file: Path, redis_url: str, redis_client: redis.Redis) -> None:
    result = run_master(["seed", "--json", str(seed_file)], redis_url)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert {k: summary[k] for k in ("accepted", "already_seeded", "rejected", "dry_run")} == {
        "accepted": 4,
        "already_seeded": 2,
        "rejected": 8,
        "dry_run": False,
    }
    assert summary["lines"] == 16
    refused = summary["rejected_lines"]
    assert [entry["line"] for entry in refused] == [6, 7, 8, 9, 10, 11, 12, 13]
    for entry, expected in zip(refused, EXPECTED_ERRORS, strict=True):
        shown = f"line {entry['line']}: {entry['reason']}: {entry['text']!r}"
        assert shown.startswith(expected), (shown, expected)
    assert refused[2]["text"] == "ftp://x"
    assert result.stderr == ""  # everything is in the JSON
    assert start_urls(redis_client) == EXPECTED_PAYLOADS

    again = json.loads(run_master(["seed", "--json", str(seed_file)], redis_url).stdout)
    assert (again["accepted"], again["already_seeded"], again["rejected"]) == (0, 6, 8)
    dry = json.loads(run_master(["seed", "--json", "--dry-run", str(seed_file)], redis_url).stdout)
    assert dry["dry_run"] is True and dry["accepted"] == 4

    bad = seed_file.with_name("bad.txt")
    bad.write_text("ftp://x\n")
    nothing = run_master(["seed", "--json", str(bad)], redis_url)
    assert nothing.returncode == 1
    assert json.loads(nothing.stdout)["rejected_lines"][0]["line"] == 1
    assert "no valid seed" in nothing.stderr


def test_unreachable_redis_exits_2_with_one_line(seed_file: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    for cwd in (ROOT, ROOT / "master"):
        result = run_master(["seed", str(seed_file)], url, cwd)
        assert result.returncode == 2
        message = result.stderr.strip()
        assert "Traceback" not in message
        assert message.splitlines()[-1].startswith(f"error: cannot reach Redis at {url}")
        assert "REDIS_URL" in message


def test_password_is_not_shown(seed_file: Path) -> None:
    url = f"redis://:s3cret@127.0.0.1:{free_port()}/0"
    result = run_master(["seed", str(seed_file)], url)
    assert result.returncode == 2
    assert "s3cret" not in result.stderr


def test_ctrl_c_exits_130_without_traceback(redis_url: str, redis_client: redis.Redis) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "master", "seed", "--batch-size", "1", "-"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write("https://shop.example.com/\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 120  # a start-up on a busy machine
        while redis_client.llen(KEYS.start_urls) < 1:
            assert time.monotonic() < deadline, "the first seed was never pushed"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert "Traceback" not in stderr
    assert "interrupted after line 1: accepted 1, already seeded 0, rejected 0" in stderr


def test_seed_applies_the_workers_network_rule(
    redis_url: str, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = "http://127.0.0.1:8000/\nhttp://localhost:8000/\nhttp://0x7f000001:8000/x\n"
    monkeypatch.delenv("ALLOW_PRIVATE_NETWORKS", raising=False)
    refused = run_master(["seed", "-"], redis_url, stdin=lines)
    no_resolve = run_master(["seed", "--no-resolve", "-"], redis_url, stdin=lines)
    allowed = run_master(
        ["seed", "--allow-private-networks", "127.0.0.1", "-"], redis_url, stdin=lines
    )
    # unset: no private address may be seeded, and nothing is recorded as seeded
    assert refused.returncode == 1
    assert refused.stdout.strip() == "accepted 0, already seeded 0, rejected 3"
    assert refused.stderr.splitlines()[:3] == [
        "line 1: refused by the network rule: 127.0.0.1 is a loopback address; list it in "
        "ALLOW_PRIVATE_NETWORKS to crawl it: 'http://127.0.0.1:8000/'",
        "line 2: refused by the network rule: localhost resolves to 127.0.0.1, which is a "
        "loopback address; list it in ALLOW_PRIVATE_NETWORKS to crawl it: "
        "'http://localhost:8000/'",
        "line 3: refused by the network rule: 0x7f000001 (127.0.0.1) is a loopback address; "
        "list it in ALLOW_PRIVATE_NETWORKS to crawl it: 'http://0x7f000001:8000/x'",
    ]
    # names are left to the workers; addresses in any form are still checked
    assert no_resolve.stdout.strip() == "accepted 1, already seeded 0, rejected 2"
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "accepted 2, already seeded 1, rejected 0"
    assert redis_client.scard(KEYS.seeded) == 3
