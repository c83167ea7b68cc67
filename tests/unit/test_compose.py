"""The deployment files: docker-compose.yml, the Dockerfiles, .env.example, .dockerignore.

No Docker engine is needed: the files are parsed and their structure checked. When
a compose implementation is installed (the ``docker compose`` plugin, or the older
``docker-compose``), ``config --quiet`` also validates the file against the Compose
Specification with the placeholders of ``.env.example``; otherwise that one test is
skipped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
DOCKERIGNORE = ROOT / ".dockerignore"
# Build arguments for builds behind a package mirror or a TLS-inspecting proxy.
BUILD_ARGS = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "EXTRA_CA_CERT")
DOCKERFILES = {
    "worker": ROOT / "docker" / "worker.Dockerfile",
    "master": ROOT / "docker" / "master.Dockerfile",
}

# ${NAME}, ${NAME:-default}, ${NAME:?message}, ... but not the escaped $${NAME}.
VARIABLE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)")
# A value that is exactly one variable reference.
REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*(?:(?::?[-?+])[^}]*)?\}$")
SECRET_NAME = re.compile(r"password|passwd|secret|token|auth|api_?key", re.IGNORECASE)
# The password of a URL's user info: scheme://user:PASSWORD@host
URL_PASSWORD = re.compile(r"://(?:\$\{[^}]*\}|[^/:@\s]*):(\$\{[^}]*\}|[^@\s/]+)@")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]


def env_example() -> dict[str, str]:
    values = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep, f".env.example: not NAME=value: {line!r}"
        values[name.strip()] = value.strip()
    return values


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's environment, whether written as a mapping or as a list."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {name: "" if value is None else str(value) for name, value in env.items()}


def command(service: dict[str, Any]) -> list[str]:
    cmd = service.get("command") or []
    return cmd.split() if isinstance(cmd, str) else [str(part) for part in cmd]


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}


def mounts(service: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """A service's volumes: target -> (source, mode), short or long syntax."""
    result = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            mode = "ro" if volume.get("read_only") else "rw"
            result[volume["target"]] = (str(volume.get("source", "")), mode)
            continue
        # ${VAR:-default} holds colons of its own: hide them while splitting.
        masked = re.sub(r"\$\{[^}]*\}", lambda m: m.group().replace(":", "\0"), str(volume))
        parts = [part.replace("\0", ":") for part in masked.split(":")]
        source, target = (parts[0], parts[1]) if len(parts) > 1 else ("", parts[0])
        result[target] = (source, parts[2] if len(parts) > 2 else "rw")
    return result


def seconds(duration: str) -> float:
    """A compose duration (``1m30s``, ``60s``, ``500ms``) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "us": 1e-6}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(float(n) * units[u] for n, u in parts)


# --- docker-compose.yml -----------------------------------------------------------


MONITORING = {"metrics", "prometheus", "grafana"}
REDIS_NODES = {f"redis-node-{n}": 7000 + n for n in range(1, 7)}
CLUSTER_CLIENTS = {
    "master-cluster": "master",
    "worker-cluster": "worker",
    "dashboard-cluster": "dashboard",
}
CLUSTER = set(REDIS_NODES) | {"redis-cluster-init"} | set(CLUSTER_CLIENTS)


def test_compose_file_has_the_five_services_and_no_version_key(compose: dict[str, Any]) -> None:
    assert "version" not in compose, "the Compose Specification has no `version:` key"
    core = {name for name, svc in compose["services"].items() if "profiles" not in svc}
    assert core == {"redis", "master", "worker"}
    optional = {"postgres", "mongo", "dashboard", "browser-worker"} | MONITORING | CLUSTER
    assert set(compose["services"]) == core | optional


def test_monitoring_profile_adds_prometheus_and_grafana(
    compose: dict[str, Any], services: dict[str, Any]
) -> None:
    for name in MONITORING:
        assert services[name]["profiles"] == ["monitoring"], name
    # the workers serve /metrics on the port the compose Prometheus scrapes
    assert environment(services["worker"])["METRICS_PORT"] == "${METRICS_PORT:-9410}"
    metrics = services["metrics"]
    assert command(metrics) == ["metrics", "--port", "9400"]
    assert metrics["image"] == services["master"]["image"]
    assert depends_on(metrics) == {"redis": "service_healthy"}
    prometheus = services["prometheus"]
    assert prometheus["image"].startswith("prom/prometheus:")
    volumes = mounts(prometheus)
    assert volumes["/etc/prometheus/prometheus.yml"] == (
        "./deploy/monitoring/prometheus.yml",
        "ro",
    )
    assert volumes["/etc/prometheus/alerts.yml"] == ("./deploy/monitoring/alerts.yml", "ro")
    assert volumes["/prometheus"][0] in compose["volumes"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in command(prometheus)
    grafana = services["grafana"]
    assert grafana["image"].startswith("grafana/grafana:")
    volumes = mounts(grafana)
    assert volumes["/etc/grafana/provisioning"][0] == "./deploy/monitoring/grafana/provisioning"
    assert volumes["/var/lib/grafana/dashboards"][0] == "./deploy/monitoring/grafana/dashboards"
    for name in ("prometheus", "grafana"):
        for volume in mounts(services[name]).values():
            source = volume[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name}: {source} does not exist"
        # published on the loopback only: no dashboard open to the network
        for port in services[name]["ports"]:
            assert str(port).startswith("127.0.0.1:"), f"{name}: {port}"


def test_databases_are_official_images_with_named_volumes(
    compose: dict[str, Any], services: dict[str, Any]
) -> None:
    expected = {"redis": "/data", "postgres": "/var/lib/postgresql/data", "mongo": "/data/db"}
    for name, target in expected.items():
        service = services[name]
        assert service["image"].split(":")[0] == name, f"{name}: the official image"
        assert "build" not in service
        volumes = mounts(service)
        assert target in volumes, f"{name}: no volume at {target}"
        assert volumes[target][0] in compose["volumes"], f"{name}: {target} is not a named volume"
        assert "healthcheck" in service, f"{name}: depends_on conditions need a healthcheck"


def test_redis_is_durable_and_needs_a_password(services: dict[str, Any]) -> None:
    redis = services["redis"]
    cmd = command(redis)
    assert cmd[0] == "redis-server"
    assert cmd[cmd.index("--appendonly") + 1] == "yes"
    assert cmd[cmd.index("--appendfsync") + 1] == "everysec"
    password = cmd[cmd.index("--requirepass") + 1]
    assert re.match(r"^\$\{REDIS_PASSWORD:\?.+\}$", password), password
    # The healthcheck authenticates through REDISCLI_AUTH, not `-a PASSWORD` on its
    # command line, and checks for PONG (redis-cli exits 0 on NOAUTH too).
    test = " ".join(redis["healthcheck"]["test"])
    assert "redis-cli" in test and "PONG" in test
    assert " -a " not in f" {test} " and "REDIS_PASSWORD" not in test
    assert environment(redis)["REDISCLI_AUTH"].startswith("${REDIS_PASSWORD")


def test_postgres_has_a_healthcheck(services: dict[str, Any]) -> None:
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])


def test_databases_are_optional_profiles(services: dict[str, Any]) -> None:
    """PostgreSQL and MongoDB are each a profile; nothing depends on either.

    A MongoDB-only setup (COMPOSE_PROFILES=mongo) must start no PostgreSQL, so no
    service may pull one in through depends_on; workers wait for their store
    themselves (the storage pipelines hold the items until it is reachable).
    """
    assert services["postgres"]["profiles"] == ["postgres"]
    assert services["mongo"]["profiles"] == ["mongo"]
    env = environment(services["mongo"])
    assert env["MONGO_INITDB_ROOT_USERNAME"].startswith("${")
    assert env["MONGO_INITDB_ROOT_PASSWORD"] == "${MONGO_ROOT_PASSWORD:-}"
    for name, service in services.items():
        for database in ("mongo", "postgres"):
            assert database not in depends_on(service), f"{name} would pull in {database}"
    # the stores are chosen in .env: the postgres profile comes with its DSN
    example = env_example()
    assert example["COMPOSE_PROFILES"] == "postgres"
    assert example["POSTGRES_DSN"] == (
        "postgresql://${POSTGRES_USER}:${POSTGRES_PASSWORD}@postgres:5432/${POSTGRES_DB}"
    )
    assert example["MONGO_URI"] == ""
    for role in ("worker", "master"):
        role_env = environment(services[role])
        assert role_env["POSTGRES_DSN"] == "${POSTGRES_DSN:-}", role
        assert role_env["MONGO_URI"] == "${MONGO_URI:-}", role


def test_master_seeds_once_and_exits(services: dict[str, Any]) -> None:
    master = services["master"]
    assert command(master) == ["seed", "/seeds/urls.txt"]
    assert str(master["restart"]) == "no"
    assert depends_on(master) == {"redis": "service_healthy"}
    source, mode = mounts(master)["/seeds"]
    assert source.startswith("${SEEDS_DIR:-./seeds}") or source.startswith("./seeds")
    assert mode == "ro", "the seeds folder is mounted read-only"
    assert environment(master)["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD")
    assert "container_name" not in master and "ports" not in master


def test_worker_can_be_scaled(services: dict[str, Any]) -> None:
    worker = services["worker"]
    # `docker compose up --scale worker=3`: replicas cannot share a name or a host port.
    assert "container_name" not in worker
    assert "ports" not in worker
    assert worker["restart"] == "unless-stopped"
    assert depends_on(worker) == {"redis": "service_healthy"}
    env = environment(worker)
    assert "WORKER_ID" not in env, "each replica gets a unique default id"
    assert env["REDIS_URL"] == "redis://:${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}@redis:6379/0"
    assert env["MAX_IDLE_TIME_BEFORE_CLOSE"] == "${MAX_IDLE_TIME_BEFORE_CLOSE:-0}"


def build_args(service: dict[str, Any]) -> dict[str, str]:
    args = service["build"]["args"]
    if isinstance(args, list):
        args = dict(item.partition("=")[::2] for item in args)
    return {name: str(value) for name, value in args.items()}


def test_plain_workers_render_nothing(services: dict[str, Any]) -> None:
    # their image has no browser: 0 says so (one INFO line) rather than a WARNING
    for name in ("worker", "worker-cluster"):
        assert environment(services[name])["BROWSER_CONCURRENCY"] == "0", name
        assert "BROWSER_PACKAGES" not in build_args(services[name]), name


def test_browser_worker_is_the_worker_built_with_chromium(services: dict[str, Any]) -> None:
    """Profile `browser`: the same worker, its image built with Debian's chromium, that
    renders (``--scale browser-worker=M`` beside ``--scale worker=N``)."""
    browser, worker = services["browser-worker"], services["worker"]
    assert browser["profiles"] == ["browser"]
    assert browser["build"]["dockerfile"] == worker["build"]["dockerfile"]
    assert browser["build"].get("context") == worker["build"].get("context")
    assert build_args(browser) == {**build_args(worker), "BROWSER_PACKAGES": "chromium"}
    # its own image: the plain workers' stays without a browser
    assert browser["image"] == "ecommerce-crawler-browser-worker:latest" != worker["image"]
    assert browser["init"] is True, "PID 1 must reap what a restarted browser leaves"
    env, plain = environment(browser), environment(worker)
    assert env["BROWSER_CONCURRENCY"] == "${BROWSER_CONCURRENCY:-}"  # empty: the default, 2
    assert env["BROWSER_RENDERING"] == "${BROWSER_RENDERING:-}"
    assert "BROWSER_EXECUTABLE" not in env, "the image sets it"
    # everything else as the plain worker: the two cannot drift apart
    assert {k: v for k, v in env.items() if not k.startswith("BROWSER_")} == {
        k: v for k, v in plain.items() if not k.startswith("BROWSER_")
    }
    assert "container_name" not in browser and "ports" not in browser
    for key in ("depends_on", "restart", "stop_signal", "stop_grace_period", "healthcheck"):
        assert browser.get(key) == worker.get(key), key


def test_worker_stops_gracefully(services: dict[str, Any]) -> None:
    worker = services["worker"]
    assert worker.get("stop_signal", "SIGINT") in {"SIGINT", "SIGTERM"}
    grace = str(worker["stop_grace_period"])
    default = re.fullmatch(r"\$\{[A-Za-z_0-9]+:-([^}]+)\}", grace)
    assert seconds(default.group(1) if default else grace) >= 30


def test_every_variable_is_listed_in_env_example() -> None:
    used = set(VARIABLE.findall(COMPOSE_FILE.read_text(encoding="utf-8")))
    assert {"REDIS_PASSWORD", "POSTGRES_PASSWORD", "BASE_IMAGE"} <= used
    missing = used - set(env_example())
    assert not missing, f"not in .env.example: {sorted(missing)}"


def test_env_example_holds_placeholders_only() -> None:
    for name, value in env_example().items():
        if SECRET_NAME.search(name):
            assert value == "", f".env.example: {name}={value!r} would be used as a password"
        for password in URL_PASSWORD.findall(value):
            assert REFERENCE.match(password), f".env.example: {name} has a literal password"
    gitignore = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {".env", "/.env"} & set(gitignore), ".env must be git-ignored"


def test_no_password_placeholder_can_run() -> None:
    """Every password is empty in .env.example, and whatever uses it refuses it empty.

    A placeholder such as ``CHANGE_ME`` passes compose's ``:?`` check and gets used;
    an empty value does not. Redis is always needed: compose itself refuses
    (``${REDIS_PASSWORD:?...}``, empty included). The databases are optional
    profiles, and compose interpolates disabled services too, so their passwords
    are checked by their own containers, when they run (see the test below).
    """
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    secrets = {name for name in VARIABLE.findall(text) if SECRET_NAME.search(name)}
    assert secrets == {
        "REDIS_PASSWORD",
        "POSTGRES_PASSWORD",
        "MONGO_ROOT_PASSWORD",
        "GRAFANA_ADMIN_PASSWORD",
        "DASHBOARD_TOKEN",
    }
    assert "${REDIS_PASSWORD:-" not in text
    assert set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*):\?", text)) == {"REDIS_PASSWORD"}
    example = env_example()
    for name in sorted(secrets):
        assert example[name] == "", f".env.example: {name} must be empty"


@pytest.mark.parametrize(
    ("service", "variable", "program"),
    [("postgres", "POSTGRES_PASSWORD", "postgres"), ("mongo", "MONGO_ROOT_PASSWORD", "mongod")],
)
def test_database_refuses_an_empty_password(
    services: dict[str, Any], service: str, variable: str, program: str
) -> None:
    cmd = command(services[service])
    assert cmd[:2] == ["sh", "-c"], cmd
    inner = environment(services[service])
    (name,) = [key for key, value in inner.items() if value == f"${{{variable}:-}}"]
    # $$ is compose's escape for a $ left to the container's shell
    script = cmd[2].replace("$$", "$").replace("docker-entrypoint.sh", "echo started")
    assert script.rstrip().endswith(f"exec echo started {program}")
    for value, started in (("", False), ("s3cret", True)):
        result = subprocess.run(
            ["sh", "-c", script],
            env={"PATH": os.environ["PATH"], name: value},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert (result.returncode == 0) is started, result
        if started:
            assert result.stdout.strip() == f"started {program}"
        else:
            assert result.stderr.strip() == f"set {variable} in .env"


def test_grafana_refuses_an_empty_admin_password(services: dict[str, Any]) -> None:
    grafana = services["grafana"]
    assert environment(grafana)["GF_SECURITY_ADMIN_PASSWORD"] == "${GRAFANA_ADMIN_PASSWORD:-}"
    entrypoint = grafana["entrypoint"]
    assert entrypoint[:2] == ["sh", "-c"], entrypoint
    script = entrypoint[2].replace("$$", "$").replace("/run.sh", "echo started grafana")
    for value, started in (("", False), ("s3cret", True)):
        result = subprocess.run(
            ["sh", "-c", script],
            env={"PATH": os.environ["PATH"], "GF_SECURITY_ADMIN_PASSWORD": value},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert (result.returncode == 0) is started, result
        if started:
            assert result.stdout.strip() == "started grafana"
        else:
            assert result.stderr.strip() == "set GRAFANA_ADMIN_PASSWORD in .env"


def test_no_literal_secret_in_compose(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for key, value in environment(service).items():
            if SECRET_NAME.search(key):
                assert REFERENCE.match(value), f"{name}: {key} is not a ${{...}} reference"
            if "://" in value and "@" in value:
                assert URL_PASSWORD.search(value), f"{name}: {key}: unexpected URL form"
            for password in URL_PASSWORD.findall(value):
                assert REFERENCE.match(password), f"{name}: {key} has a literal password"
        cmd = command(service)
        for i, part in enumerate(cmd[:-1]):
            if REFERENCE.match(part):  # a password itself, not an option naming one
                continue
            if SECRET_NAME.search(part) or part == "--requirepass":
                assert REFERENCE.match(cmd[i + 1]), f"{name}: {part} is followed by a literal"


def test_images_are_built_from_the_dockerfiles_with_a_base_image_arg(
    services: dict[str, Any],
) -> None:
    for name, dockerfile in DOCKERFILES.items():
        build = services[name]["build"]
        assert (ROOT / build.get("context", ".")).resolve() == ROOT
        assert (ROOT / build["dockerfile"]).resolve() == dockerfile.resolve()
        assert dockerfile.is_file()
        args = build["args"]
        if isinstance(args, list):
            args = dict(item.partition("=")[::2] for item in args)
        assert args["BASE_IMAGE"] == "${BASE_IMAGE:-python:3.11-slim}"
        for name in BUILD_ARGS:
            assert args[name] == f"${{{name}:-}}", f"{name}: not passed to the image build"


# --- profile `cluster` --------------------------------------------------------------


def redis_option(cmd: list[str], option: str) -> str:
    return cmd[cmd.index(option) + 1]


def test_cluster_nodes_are_the_redis_image_with_cluster_enabled(
    compose: dict[str, Any], services: dict[str, Any]
) -> None:
    conf = (ROOT / "deploy" / "redis-cluster" / "node.conf").read_text(encoding="utf-8")
    directives = dict(
        line.split(None, 1)
        for line in conf.splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert directives["cluster-enabled"] == "yes"
    assert directives["cluster-preferred-endpoint-type"] == "hostname"
    assert directives["appendonly"] == "yes" and directives["appendfsync"] == "everysec"
    for name, port in REDIS_NODES.items():
        node = services[name]
        assert node["profiles"] == ["cluster"], name
        assert node["image"] == services["redis"]["image"], "the same image as the single Redis"
        assert "build" not in node
        cmd = command(node)
        assert cmd[:2] == ["redis-server", "/usr/local/etc/redis/node.conf"]
        assert mounts(node)["/usr/local/etc/redis/node.conf"] == (
            "./deploy/redis-cluster/node.conf",
            "ro",
        )
        # the port it listens on, announces, is checked on and is published on (loopback)
        assert redis_option(cmd, "--port") == str(port)
        assert environment(node)["REDIS_NODE_PORT"] == str(port)
        assert node["ports"] == [f"127.0.0.1:{port}:{port}"]
        assert "$$REDIS_NODE_PORT" in " ".join(node["healthcheck"]["test"])
        assert "PONG" in " ".join(node["healthcheck"]["test"])
        # clients are redirected (MOVED) to its hostname, which the network resolves
        assert node["hostname"] == name == redis_option(cmd, "--cluster-announce-hostname")
        password = "${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}"
        assert redis_option(cmd, "--requirepass") == password
        assert redis_option(cmd, "--masterauth") == password, "replicas log in to their primary"
        assert environment(node)["REDISCLI_AUTH"] == password
        data = mounts(node)["/data"][0]
        assert data in compose["volumes"], f"{name}: /data is not a named volume"
    datas = {mounts(services[name])["/data"][0] for name in REDIS_NODES}
    assert len(datas) == len(REDIS_NODES), "each node has its own volume"


def test_cluster_init_creates_three_primaries_with_a_replica_each_once_nodes_are_up(
    services: dict[str, Any],
) -> None:
    init = services["redis-cluster-init"]
    assert init["profiles"] == ["cluster"]
    assert init["image"] == services["redis"]["image"]
    assert str(init["restart"]) == "no", "one-shot"
    assert command(init) == ["sh", "/usr/local/bin/create-cluster.sh"]
    assert mounts(init)["/usr/local/bin/create-cluster.sh"] == (
        "./deploy/redis-cluster/create-cluster.sh",
        "ro",
    )
    env = environment(init)
    assert env["REDIS_CLUSTER_NODES"].split() == [f"{n}:{p}" for n, p in REDIS_NODES.items()]
    replicas = int(env["REDIS_CLUSTER_REPLICAS"])
    assert replicas == 1 and len(REDIS_NODES) // (1 + replicas) == 3
    assert env["REDISCLI_AUTH"].startswith("${REDIS_PASSWORD:?")
    assert depends_on(init) == dict.fromkeys(REDIS_NODES, "service_healthy")
    script = (ROOT / "deploy" / "redis-cluster" / "create-cluster.sh").read_text(encoding="utf-8")
    assert "redis-cli --cluster create" in script and "--cluster-yes" in script
    assert '--cluster-replicas "$replicas"' in script
    syntax = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True, timeout=30)
    assert syntax.returncode == 0, syntax.stderr


@pytest.mark.parametrize("name", sorted(CLUSTER_CLIENTS))
def test_cluster_clients_are_the_single_redis_ones_pointed_at_every_node(
    services: dict[str, Any], name: str
) -> None:
    service, single = services[name], services[CLUSTER_CLIENTS[name]]
    assert service["profiles"] == ["cluster"]
    assert service["image"] == single["image"] and service["build"] == single["build"]
    assert command(service) == command(single)
    env, single_env = environment(service), environment(single)
    assert env["REDIS_CLUSTER"] == "true"
    assert env["REDIS_CLUSTER_SHARDS"] == "${REDIS_CLUSTER_SHARDS:-16}"
    # everything else as the single-Redis service: the profiles cannot drift apart
    assert {k: v for k, v in env.items() if not k.startswith("REDIS_")} == {
        k: v for k, v in single_env.items() if k != "REDIS_URL"
    }
    urls = env["REDIS_URL"].split(",")
    password = "${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}"
    assert urls == [f"redis://:{password}@{n}:{p}" for n, p in REDIS_NODES.items()]
    assert depends_on(service) == {"redis-cluster-init": "service_completed_successfully"}
    for key in ("ports", "restart", "stop_signal", "stop_grace_period", "healthcheck", "volumes"):
        assert service.get(key) == single.get(key), f"{name}: {key}"


# --- Dockerfiles --------------------------------------------------------------------


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        keyword, _, args = line.partition(" ")
        result.append((keyword.upper(), args.strip()))
    assert not pending, f"{path.name}: dangling continuation line"
    return result


def copy_sources(args: str) -> list[str]:
    parts = [p for p in args.split() if not p.startswith("--")]
    if args.startswith("["):
        parts = json.loads(args)
    return [p.rstrip("/") for p in parts[:-1]]


def exec_form(args: str) -> list[str]:
    assert args.startswith("["), f"shell form would not get the stop signal: {args}"
    return json.loads(args)


@pytest.mark.parametrize("role", sorted(DOCKERFILES))
def test_dockerfile_builds_from_a_base_image_arg(role: str) -> None:
    steps = instructions(DOCKERFILES[role])
    first_from = next(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    assert ("ARG", "BASE_IMAGE=python:3.11-slim") in steps[:first_from]
    assert steps[first_from] == ("FROM", "${BASE_IMAGE}")


@pytest.mark.parametrize("role", sorted(DOCKERFILES))
def test_dockerfile_installs_runtime_requirements_before_the_code(role: str) -> None:
    steps = instructions(DOCKERFILES[role])
    copies = [
        (i, copy_sources(args)) for i, (kw, args) in enumerate(steps) if kw in {"COPY", "ADD"}
    ]
    sources = [src for _, srcs in copies for src in srcs]
    assert "requirements-dev.txt" not in sources
    assert not any(src in {".", "tests"} for src in sources), "copies only what it needs"
    requirements = next(i for i, srcs in copies if "requirements.txt" in srcs)
    code = min(i for i, srcs in copies if {"crawler", "master"} & set(srcs))
    install = next(
        i for i, (kw, args) in enumerate(steps) if kw == "RUN" and "-r requirements.txt" in args
    )
    assert requirements < install < code, "dependencies in a layer before the code"
    no_cache = "--no-cache-dir" in steps[install][1] or any(
        kw == "ENV" and "PIP_NO_CACHE_DIR" in args for kw, args in steps[:install]
    )
    assert no_cache, "pip's cache would stay in the image"
    assert any(kw == "ENV" and "PYTHONUNBUFFERED=1" in args for kw, args in steps)
    ignored = dockerignore()
    for src in sources:
        assert (ROOT / src).exists(), f"COPY {src}: no such path"
        assert src.split("/")[0] not in ignored, f"COPY {src}: excluded by .dockerignore"


@pytest.mark.parametrize("role", sorted(DOCKERFILES))
def test_dockerfile_runs_as_a_non_root_user(role: str) -> None:
    users = [args for kw, args in instructions(DOCKERFILES[role]) if kw == "USER"]
    assert users, "no USER: the container would run as root"
    assert users[-1].split(":")[0] not in {"root", "0"}


def test_worker_dockerfile() -> None:
    steps = instructions(DOCKERFILES["worker"])
    copied = {src for kw, args in steps if kw == "COPY" for src in copy_sources(args)}
    assert {"scrapy.cfg", "crawler"} <= copied
    assert ("WORKDIR", "/app") in steps
    cmd = [args for kw, args in steps if kw == "CMD"][-1]
    assert exec_form(cmd) == ["scrapy", "crawl", "ecommerce"]
    assert [args for kw, args in steps if kw == "STOPSIGNAL"][-1] in {"SIGINT", "SIGTERM"}


def test_worker_dockerfile_installs_a_browser_only_when_asked() -> None:
    steps = instructions(DOCKERFILES["worker"])
    first_from = next(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    install = next(
        i for i, (kw, args) in enumerate(steps) if kw == "RUN" and "-r requirements.txt" in args
    )
    code = next(i for i, (kw, args) in enumerate(steps) if kw == "COPY" and "crawler/" in args)
    declared = [i for i, step in enumerate(steps) if step == ("ARG", "BROWSER_PACKAGES=")]
    (browser_step,) = [
        i for i, (kw, args) in enumerate(steps) if kw == "RUN" and "$BROWSER_PACKAGES" in args
    ]
    # declared in the stage, empty by default; its own layer before pip's and the code's
    assert len(declared) == 1 and first_from < declared[0] < browser_step < install < code
    env = " ".join(args for kw, args in steps if kw == "ENV")
    # the installed browser is the one the worker drives; empty (ignored) without one
    assert "BROWSER_EXECUTABLE=${BROWSER_PACKAGES:+/usr/bin/chromium}" in env
    replace = {"apt-get": "echo apt-get", "/usr/bin/chromium --version": "echo version"}
    script = steps[browser_step][1]
    assert "rm -rf /var/lib/apt/lists/*" in script, "apt's lists would stay in the image"
    nothing = run_step(script, replace, {"BROWSER_PACKAGES": ""})
    assert nothing.returncode == 0 and nothing.stdout == "", "a plain worker installs nothing"
    chromium = run_step(script, replace, {"BROWSER_PACKAGES": "chromium"})
    assert chromium.returncode == 0, chromium.stderr
    assert chromium.stdout.splitlines() == [
        "apt-get update",
        "apt-get install -y --no-install-recommends chromium",
        "version",
    ]
    # an install that fails stops the build
    failing = run_step(script, {**replace, "echo apt-get": "false"}, {"BROWSER_PACKAGES": "x"})
    assert failing.returncode != 0


def test_master_dockerfile() -> None:
    steps = instructions(DOCKERFILES["master"])
    copied = {src for kw, args in steps if kw == "COPY" for src in copy_sources(args)}
    assert {"scrapy.cfg", "crawler", "master"} <= copied
    assert ("WORKDIR", "/app") in steps
    assert exec_form([a for kw, a in steps if kw == "ENTRYPOINT"][-1]) == [
        "python",
        "-m",
        "master",
    ]
    assert exec_form([a for kw, a in steps if kw == "CMD"][-1]) == ["--help"]


def run_step(
    args: str, replace: dict[str, str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """A Dockerfile RUN step run by ``sh`` here, with some words replaced (paths, tools)."""
    script = args
    for old, new in replace.items():
        assert old in script, f"{old!r} not in the RUN step"
        script = script.replace(old, new)
    return subprocess.run(
        ["sh", "-c", script],
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize("role", sorted(DOCKERFILES))
def test_dockerfile_takes_a_package_index_and_an_extra_ca_before_pip(role: str) -> None:
    steps = instructions(DOCKERFILES[role])
    first_from = next(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    install = next(
        i for i, (kw, args) in enumerate(steps) if kw == "RUN" and "-r requirements.txt" in args
    )
    # declared inside the build stage (an ARG before FROM is not seen by RUN), before pip
    declared = {args.split("=")[0]: i for i, (kw, args) in enumerate(steps) if kw == "ARG"}
    for name in BUILD_ARGS:
        assert first_from < declared[name] < install, f"ARG {name}"
    ca_step = next(
        i for i, (kw, args) in enumerate(steps) if kw == "RUN" and "update-ca-certificates" in args
    )
    assert ca_step < install, "the extra CA must be trusted before pip contacts the index"
    env = " ".join(args for kw, args in steps[:install] if kw == "ENV")
    for name in ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        assert f"{name}=/etc/ssl/certs/ca-certificates.crt" in env, name
    assert (ROOT / "docker" / "certs").is_dir()


@pytest.mark.parametrize("role", sorted(DOCKERFILES))
def test_dockerfile_pip_step_passes_only_the_index_options_that_are_set(role: str) -> None:
    steps = instructions(DOCKERFILES[role])
    (install,) = [a for kw, a in steps if kw == "RUN" and "-r requirements.txt" in a]
    # an empty PIP_INDEX_URL in pip's environment would mean "no index": it must be unset
    result = run_step(
        install,
        {"pip install --no-cache-dir -r requirements.txt": "env"},
        {
            "PIP_INDEX_URL": "",
            "PIP_EXTRA_INDEX_URL": "https://mirror.example/simple",
            "PIP_TRUSTED_HOST": "",
        },
    )
    assert result.returncode == 0, result.stderr
    seen = dict(line.partition("=")[::2] for line in result.stdout.splitlines())
    assert "PIP_INDEX_URL" not in seen and "PIP_TRUSTED_HOST" not in seen
    assert seen["PIP_EXTRA_INDEX_URL"] == "https://mirror.example/simple"


@pytest.mark.parametrize("role", sorted(DOCKERFILES))
def test_dockerfile_adds_the_named_ca_certificate(role: str, tmp_path: Path) -> None:
    steps = instructions(DOCKERFILES[role])
    (ca_step,) = [a for kw, a in steps if kw == "RUN" and "update-ca-certificates" in a]
    certs, store = tmp_path / "certs", tmp_path / "store"
    certs.mkdir()
    store.mkdir()
    (certs / "proxy-ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    replace = {
        "/tmp/extra-certs": str(certs),
        "/usr/local/share/ca-certificates": str(store),
        "update-ca-certificates": "echo trust store updated",
    }
    added = run_step(ca_step, replace, {"EXTRA_CA_CERT": "proxy-ca.pem"})
    assert added.returncode == 0, added.stderr
    assert "trust store updated" in added.stdout
    assert (store / "extra-ca.crt").read_text() == "-----BEGIN CERTIFICATE-----\n"
    assert not certs.exists(), "the copied folder stays out of the image"

    certs.mkdir()
    missing = run_step(ca_step, replace, {"EXTRA_CA_CERT": "nope.pem"})
    assert missing.returncode != 0
    assert "EXTRA_CA_CERT=nope.pem: no such file in docker/certs/" in missing.stderr

    (store / "extra-ca.crt").unlink()
    nothing = run_step(ca_step, replace, {"EXTRA_CA_CERT": ""})
    assert nothing.returncode == 0 and "updated" not in nothing.stdout
    assert not (store / "extra-ca.crt").exists()


# --- .dockerignore ------------------------------------------------------------------


def dockerignore() -> set[str]:
    entries = set()
    for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            entries.add(line.strip("/"))
    return entries


def test_dockerignore_keeps_the_context_small_and_secret_free() -> None:
    assert {".venv", ".git", "data", "tests", ".env"} <= dockerignore()


# --- a real compose implementation, when there is one -------------------------------


def compose_command() -> list[str] | None:
    """``docker compose`` if the plugin works, else ``docker-compose``, else None."""
    if shutil.which("docker"):
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, text=True, timeout=30
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def compose_config(cmd: list[str], passwords: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Only .env.example (and the passwords given here) may supply the variables.
    env = {k: v for k, v in os.environ.items() if k not in env_example()}
    env.update(passwords)
    return subprocess.run(
        [*cmd, "--env-file", ".env.example", "-f", "docker-compose.yml", "config", "--quiet"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_compose_config_is_valid_with_env_example_once_redis_has_a_password() -> None:
    cmd = compose_command()
    if cmd is None:
        pytest.skip("no compose implementation: no docker compose plugin, no docker-compose")
    result = compose_config(cmd, {"REDIS_PASSWORD": "r3dis-pw"})
    assert result.returncode == 0, result.stderr or result.stdout
    # .env.example as it is: compose refuses to run with the empty placeholder
    refused = compose_config(cmd, {})
    assert refused.returncode != 0, "compose ran without REDIS_PASSWORD"
    assert "set REDIS_PASSWORD in .env" in refused.stderr + refused.stdout


def test_compose_builds_the_workers_dsn_from_the_env_file(tmp_path: Path) -> None:
    cmd = compose_command()
    if cmd is None:
        pytest.skip("no compose implementation: no docker compose plugin, no docker-compose")
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("\nREDIS_PASSWORD=\n", "\nREDIS_PASSWORD=r3dis\n")
    text = text.replace("\nPOSTGRES_PASSWORD=\n", "\nPOSTGRES_PASSWORD=pg-pw\n")
    env_file = tmp_path / ".env"
    env_file.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in env_example()}
    result = subprocess.run(
        [*cmd, "--env-file", str(env_file), "-f", str(COMPOSE_FILE), "config"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    worker = yaml.safe_load(result.stdout)["services"]["worker"]
    assert environment(worker)["POSTGRES_DSN"] == "postgresql://crawler:pg-pw@postgres:5432/crawler"
    assert environment(worker)["REDIS_URL"] == "redis://:r3dis@redis:6379/0"
    assert "depends_on" not in worker or set(depends_on(worker)) == {"redis"}


def test_dashboard_needs_a_token_and_is_published_on_loopback(
    services: dict[str, Any],
) -> None:
    dashboard = services["dashboard"]
    assert dashboard["profiles"] == ["dashboard"]
    assert dashboard["image"] == services["master"]["image"]
    assert command(dashboard) == ["serve", "--host", "0.0.0.0", "--port", "8800"]
    assert dashboard["ports"] == ["127.0.0.1:${DASHBOARD_PORT:-8800}:8800"]
    env = environment(dashboard)
    assert env["DASHBOARD_TOKEN"] == "${DASHBOARD_TOKEN:-}"
    assert env["REDIS_URL"] == environment(services["worker"])["REDIS_URL"]
    assert env["POSTGRES_DSN"] == environment(services["worker"])["POSTGRES_DSN"]
    assert depends_on(dashboard) == {"redis": "service_healthy"}
    assert "/healthz" in " ".join(dashboard["healthcheck"]["test"])
    # the image's entrypoint is `python -m master`: with the token of .env.example (empty)
    # the command refuses to listen on all addresses, in one line, exit 2
    result = subprocess.run(
        [sys.executable, "-m", "master", *command(dashboard)],
        cwd=ROOT,
        env={**os.environ, "DASHBOARD_TOKEN": env_example()["DASHBOARD_TOKEN"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result
    assert "DASHBOARD_TOKEN" in result.stderr and result.stderr.count("\n") == 1
