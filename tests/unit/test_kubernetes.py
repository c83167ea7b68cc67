"""deploy/kubernetes/: every manifest validated offline against the Kubernetes schemas.

``kubernetes-validate`` checks each object strictly (unknown fields are errors)
against the API of one Kubernetes version. KEDA's ``ScaledObject`` is a custom
resource whose schema it does not have: it is checked structurally here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBE = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.30.0"
NAMESPACE = "crawler"
PLACEHOLDER = "CHANGE_ME"


def kustomization() -> dict[str, Any]:
    return yaml.safe_load((KUBE / "kustomization.yaml").read_text())


def objects() -> list[dict[str, Any]]:
    docs = []
    for name in kustomization()["resources"]:
        docs += [doc for doc in yaml.safe_load_all((KUBE / name).read_text()) if doc]
    return docs


def find(kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return obj["spec"]["template"]["spec"]


def workloads() -> list[dict[str, Any]]:
    kinds = {"Deployment", "StatefulSet", "Job", "CronJob"}
    return [o for o in objects() if o["kind"] in kinds]


def test_kustomization_lists_every_manifest() -> None:
    files = {p.name for p in KUBE.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization()["resources"]) == files
    assert kustomization()["namespace"] == NAMESPACE


@pytest.mark.parametrize(
    "obj",
    [o for o in objects() if not o["apiVersion"].startswith("keda.sh/")],
    ids=lambda o: f"{o['kind']}/{o['metadata']['name']}",
)
def test_manifest_is_valid_kubernetes(obj: dict[str, Any]) -> None:
    try:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {exc.message} at {exc.path}")
    if obj["kind"] != "Namespace":
        assert obj["metadata"]["namespace"] == NAMESPACE


def test_an_invalid_manifest_is_refused() -> None:
    # the validator itself is live: a typo in a field is an error, not a pass
    broken = yaml.safe_load((KUBE / "namespace.yaml").read_text())
    broken["metadata"]["nmae"] = "typo"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


WORKERS = ("crawler-worker", "crawler-browser-worker")


@pytest.mark.parametrize("name", WORKERS)
def test_keda_scaled_object_scales_the_worker_deployment_on_queue_depth(name: str) -> None:
    scaled = find("ScaledObject", name)
    assert scaled["apiVersion"] == "keda.sh/v1alpha1"
    spec = scaled["spec"]
    allowed = {
        "scaleTargetRef", "pollingInterval", "cooldownPeriod", "idleReplicaCount",
        "minReplicaCount", "maxReplicaCount", "fallback", "advanced", "triggers",
        "initialCooldownPeriod",
    }  # fmt: skip
    assert set(spec) <= allowed, set(spec) - allowed
    target = spec["scaleTargetRef"]
    worker = find("Deployment", target["name"])
    assert target.get("kind", "Deployment") == "Deployment"
    assert target.get("apiVersion", "apps/v1") == worker["apiVersion"]
    assert worker["metadata"]["name"] == name
    assert 0 <= spec["minReplicaCount"] < spec["maxReplicaCount"]
    for key in ("pollingInterval", "cooldownPeriod", "minReplicaCount", "maxReplicaCount"):
        assert isinstance(spec[key], int), key
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleDown"]["stabilizationWindowSeconds"] >= 60
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus"
    metadata = trigger["metadata"]
    assert set(metadata) <= {
        "serverAddress", "query", "threshold", "activationThreshold", "ignoreNullValues",
        "namespace", "customHeaders", "unsafeSsl", "queryParameters",
    }  # fmt: skip
    assert re.fullmatch(r"https?://[\w.-]+(:\d+)?", metadata["serverAddress"])
    # KEDA wants every metadata value as a string, the thresholds as numbers in it
    assert all(isinstance(value, str) for value in metadata.values())
    assert float(metadata["threshold"]) > 0
    assert float(metadata["activationThreshold"]) >= 0
    # the queue depth as the master's metrics report it: the work of those workers
    if name == "crawler-browser-worker":
        assert "crawl_browser_queued" in metadata["query"]
    else:
        assert "crawl_queued_requests" in metadata["query"]
        assert "crawl_pending_seeds" in metadata["query"]
    assert metadata["query"].count("(") == metadata["query"].count(")")


@pytest.mark.parametrize("name", WORKERS)
def test_the_query_metrics_are_served_by_master_metrics(name: str) -> None:
    from master.commands.metrics import GAUGES, RENAMED, RETRIES_WAITING

    served = {"crawl_" + RENAMED.get(field, field) for field, _ in GAUGES} | {RETRIES_WAITING}
    query = find("ScaledObject", name)["spec"]["triggers"][0]["metadata"]["query"]
    assert set(re.findall(r"crawl_[a-z_]+", query)) <= served


def test_every_scaled_object_targets_a_deployment_of_the_kustomization() -> None:
    for scaled in (o for o in objects() if o["kind"] == "ScaledObject"):
        target = scaled["spec"]["scaleTargetRef"]
        find("Deployment", target["name"])
    assert {o["metadata"]["name"] for o in objects() if o["kind"] == "ScaledObject"} == set(
        WORKERS
    )


def test_browser_workers_are_the_workers_with_a_browser() -> None:
    """crawler-browser-worker is crawler-worker in the image built with Debian's
    chromium, rendering (BROWSER_CONCURRENCY > 0) where the plain workers do not (0)."""
    plain = find("Deployment", "crawler-worker")
    browser = find("Deployment", "crawler-browser-worker")
    plain_spec, spec = pod_spec(plain), pod_spec(browser)
    (plain_container,) = plain_spec["containers"]
    (container,) = spec["containers"]
    assert container["image"] == "ecommerce-crawler-browser-worker:latest"
    assert plain_container["image"] == "ecommerce-crawler-worker:latest"
    (init,) = spec["initContainers"]
    assert init["image"] == container["image"], "no second image to pull"
    env = {item["name"]: item for item in container["env"]}
    plain_env = {item["name"]: item for item in plain_container["env"]}
    assert plain_env["BROWSER_CONCURRENCY"]["value"] == "0"
    assert int(env["BROWSER_CONCURRENCY"]["value"]) > 0
    assert "BROWSER_EXECUTABLE" not in env, "the image sets it"
    # everything else as the plain worker: the two cannot drift apart
    assert {k: v for k, v in env.items() if not k.startswith("BROWSER_")} == {
        k: v for k, v in plain_env.items() if not k.startswith("BROWSER_")
    }
    for key in ("envFrom", "ports", "livenessProbe", "name"):
        assert container[key] == plain_container[key], key
    for key in ("securityContext", "terminationGracePeriodSeconds"):
        assert spec[key] == plain_spec[key], key
    assert spec["shareProcessNamespace"] is True, "the pause process reaps the browser's"
    labels = browser["spec"]["template"]["metadata"]["labels"]
    assert browser["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert labels["app.kubernetes.io/name"] == "crawler-browser-worker"
    annotations = browser["spec"]["template"]["metadata"]["annotations"]
    assert annotations == plain["spec"]["template"]["metadata"]["annotations"]

    def mebibytes(quantity: str) -> float:
        units = {"Mi": 1, "Gi": 1024}
        return float(quantity[:-2]) * units[quantity[-2:]]

    limits, plain_limits = container["resources"]["limits"], plain_container["resources"]["limits"]
    assert mebibytes(limits["memory"]) > mebibytes(plain_limits["memory"])
    # the browser workers' ScaledObject: on the browser queue (a metric master metrics
    # serves), fewer replicas; the plain workers' ignores it (they never take that work)
    scaled = find("ScaledObject", "crawler-browser-worker")["spec"]
    plain_scaled = find("ScaledObject", "crawler-worker")["spec"]
    query = scaled["triggers"][0]["metadata"]["query"]
    assert query == 'sum(crawl_browser_queued{namespace="crawler"})'
    assert "browser" not in plain_scaled["triggers"][0]["metadata"]["query"]
    assert scaled["maxReplicaCount"] <= plain_scaled["maxReplicaCount"]


def test_workers_are_a_deployment_with_config_secret_and_metrics() -> None:
    worker = find("Deployment", "crawler-worker")
    spec = pod_spec(worker)
    (container,) = spec["containers"]
    assert container["image"].startswith("ecommerce-crawler-worker")
    config = find("ConfigMap", "crawler-config")["data"]
    assert {"configMapRef": {"name": "crawler-config"}} in container["envFrom"]
    env = {item["name"]: item for item in container["env"]}
    assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "crawler-credentials"
    assert env["POSTGRES_DSN"]["valueFrom"]["secretKeyRef"]["name"] == "crawler-credentials"
    assert env["WORKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    # METRICS_PORT, the container port, the probe and the scrape annotation agree
    port = int(config["METRICS_PORT"])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["metrics"] == port
    annotations = worker["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == port
    assert container["livenessProbe"]["httpGet"] == {"path": "/metrics", "port": "metrics"}
    assert spec["terminationGracePeriodSeconds"] >= 30
    assert spec["securityContext"]["runAsNonRoot"] is True


def test_env_references_are_defined_before_use() -> None:
    # $(NAME) in a value, command or args is expanded by Kubernetes only from
    # variables defined earlier in the same container
    for obj in workloads():
        spec = pod_spec(obj)
        for container in spec.get("initContainers", []) + spec["containers"]:
            defined: set[str] = set()
            for item in container.get("env", []):
                for name in re.findall(r"\$\(([A-Z_]+)\)", item.get("value", "")):
                    assert name in defined, f"{obj['metadata']['name']}: {item['name']}"
                defined.add(item["name"])
            for part in container.get("command", []) + container.get("args", []):
                for name in re.findall(r"\$\(([A-Z_]+)\)", part):
                    assert name in defined, f"{obj['metadata']['name']}: {part}"


def test_every_secret_and_config_reference_exists() -> None:
    secret = find("Secret", "crawler-credentials")
    keys = {
        "Secret": {secret["metadata"]["name"]: set(secret["stringData"])},
        "ConfigMap": {
            o["metadata"]["name"]: set(o["data"]) for o in objects() if o["kind"] == "ConfigMap"
        },
    }
    for obj in workloads():
        spec = pod_spec(obj)
        for container in spec.get("initContainers", []) + spec["containers"]:
            for source in container.get("envFrom", []):
                ref = source.get("secretRef") or source.get("configMapRef")
                kind = "Secret" if "secretRef" in source else "ConfigMap"
                assert ref["name"] in keys[kind], ref
            for item in container.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in keys["Secret"][ref["name"]], ref
        for volume in spec.get("volumes", []):
            if "configMap" in volume:
                assert volume["configMap"]["name"] in keys["ConfigMap"]


def test_secret_holds_placeholders_only() -> None:
    secret = find("Secret", "crawler-credentials")
    assert "data" not in secret, "base64 data would hide what is in it"
    for name, value in secret["stringData"].items():
        assert PLACEHOLDER in value, f"{name} is not a placeholder"


def check_scripts() -> list[tuple[str, str]]:
    scripts = []
    for obj in workloads():
        for init in pod_spec(obj).get("initContainers", []):
            if init["name"] == "check-credentials":
                scripts.append((obj["metadata"]["name"], init["command"][-1]))
    return scripts


def test_pods_refuse_to_start_with_placeholder_credentials() -> None:
    scripts = dict(check_scripts())
    assert {"redis", "crawler-worker", "crawler-browser-worker"} <= set(scripts)
    placeholders = find("Secret", "crawler-credentials")["stringData"]
    real = {name: "s3cret-value" for name in placeholders}
    for owner, script in scripts.items():
        run = subprocess.run(["sh", "-c", script], env=placeholders, capture_output=True, text=True)
        assert run.returncode == 1, owner
        assert "Secret crawler-credentials: set " in run.stderr, owner
        run = subprocess.run(["sh", "-c", script], env={}, capture_output=True, text=True)
        assert run.returncode == 1, f"{owner}: an unset secret passed"
        run = subprocess.run(["sh", "-c", script], env=real, capture_output=True, text=True)
        assert run.returncode == 0, f"{owner}: {run.stderr}"


def test_redis_is_a_statefulset_with_append_only_persistence() -> None:
    redis = find("StatefulSet", "redis")
    (container,) = pod_spec(redis)["containers"]
    args = container["args"]
    assert args[0] == "redis-server"
    assert args[args.index("--appendonly") + 1] == "yes"
    assert args[args.index("--appendfsync") + 1] == "everysec"
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    data_dir = args[args.index("--dir") + 1]
    (claim,) = redis["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == data_dir
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    service = find("Service", redis["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    # the clients' REDIS_URL names the StatefulSet's pod through its service
    worker_env = {
        e["name"]: e for e in pod_spec(find("Deployment", "crawler-worker"))["containers"][0]["env"]
    }
    assert "@redis-0.redis:6379/" in worker_env["REDIS_URL"]["value"]


def test_the_master_runs_as_jobs_seed_and_recrawl() -> None:
    seed = find("Job", "crawler-seed")
    (container,) = pod_spec(seed)["containers"]
    assert container["args"] == ["seed", "/seeds/urls.txt"]
    assert {"name": "seeds", "mountPath": "/seeds", "readOnly": True} in container["volumeMounts"]
    recrawl = find("CronJob", "crawler-recrawl")
    assert recrawl["spec"]["concurrencyPolicy"] == "Forbid"
    assert len(recrawl["spec"]["schedule"].split()) == 5
    (container,) = pod_spec(recrawl)["containers"]
    assert container["args"] == ["recrawl", "--older-than", "6h"]
    for job in (seed, recrawl):
        assert pod_spec(job)["restartPolicy"] in {"OnFailure", "Never"}
        assert pod_spec(job)["containers"][0]["image"].startswith("ecommerce-crawler-master")


def test_master_metrics_is_served_and_scraped() -> None:
    metrics = find("Deployment", "crawler-metrics")
    (container,) = pod_spec(metrics)["containers"]
    assert container["args"][:1] == ["metrics"]
    port = int(container["args"][container["args"].index("--port") + 1])
    annotations = metrics["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations["prometheus.io/port"]) == port
    service = find("Service", "crawler-metrics")
    assert service["spec"]["ports"][0]["port"] == port


def test_prometheus_kubernetes_config_keeps_the_alert_job_names() -> None:
    config = yaml.safe_load((ROOT / "deploy/monitoring/prometheus-kubernetes.yml").read_text())
    (job,) = config["scrape_configs"]
    assert job["kubernetes_sd_configs"][0]["namespaces"]["names"] == [NAMESPACE]
    jobs = {r["replacement"] for r in job["relabel_configs"] if r.get("target_label") == "job"}
    alerts = (ROOT / "deploy/monitoring/alerts.yml").read_text()
    assert jobs == {"crawler-worker", "crawler-master"}
    # the browser workers' pods are scraped as workers (the alerts' job)
    (workers,) = [r for r in job["relabel_configs"] if r.get("replacement") == "crawler-worker"]
    for name in WORKERS:
        assert re.fullmatch(workers["regex"], name), name
    assert all(f'job="{name}"' in alerts for name in jobs)
    # the annotation port rewrite, as Prometheus applies it (RE2 and Python agree here)
    rewrite = next(r for r in job["relabel_configs"] if r.get("target_label") == "__address__")
    assert re.fullmatch(rewrite["regex"], "10.1.2.3:8080;9410")
    assert (
        re.sub(rewrite["regex"], rewrite["replacement"].replace("$", "\\"), "10.1.2.3:8080;9410")
        == "10.1.2.3:9410"
    )


def test_the_dashboard_is_a_deployment_and_a_cluster_ip_service_with_the_token() -> None:
    dashboard = find("Deployment", "crawler-dashboard")
    spec = pod_spec(dashboard)
    (container,) = spec["containers"]
    assert container["image"] == "ecommerce-crawler-master:latest"
    assert container["args"] == ["serve", "--host", "0.0.0.0", "--port", "8800"]
    env = {item["name"]: item for item in container["env"]}
    assert env["DASHBOARD_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "crawler-credentials",
        "key": "DASHBOARD_TOKEN",
    }
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    assert "crawler-dashboard" in dict(check_scripts())
    service = find("Service", "crawler-dashboard")
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"] == dashboard["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "http"


# --- deploy/kubernetes-cluster/: the overlay for a Redis Cluster --------------------

CLUSTER_OVERLAY = ROOT / "deploy" / "kubernetes-cluster"
CLUSTER_SCRIPT = ROOT / "deploy" / "redis-cluster" / "create-cluster.sh"


@pytest.fixture(scope="module")
def cluster_objects() -> list[dict[str, Any]]:
    """The overlay as ``kubectl kustomize`` builds it (base, patches, deletions)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl: `kubectl kustomize` builds the overlay")
    built = subprocess.run(
        [kubectl, "kustomize", str(CLUSTER_OVERLAY)], capture_output=True, text=True, timeout=120
    )
    assert built.returncode == 0, built.stderr
    return [doc for doc in yaml.safe_load_all(built.stdout) if doc]


def find_in(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
    return matches[0]


def containers_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod_spec(obj)
    return list(spec.get("initContainers", [])) + list(spec["containers"])


def test_cluster_overlay_lists_its_files_and_builds_on_the_base() -> None:
    overlay = yaml.safe_load((CLUSTER_OVERLAY / "kustomization.yaml").read_text())
    assert overlay["namespace"] == NAMESPACE
    assert "../kubernetes" in overlay["resources"]
    listed = {r for r in overlay["resources"] if not r.startswith("..")}
    listed |= {p["path"] for p in overlay["patches"] if "path" in p}
    files = {p.name for p in CLUSTER_OVERLAY.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == files


def test_cluster_overlay_is_valid_kubernetes(cluster_objects: list[dict[str, Any]]) -> None:
    for obj in cluster_objects:
        if obj["apiVersion"].startswith("keda.sh/"):
            continue
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {exc.message} at {exc.path}")
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == NAMESPACE
    # the single Redis is replaced, everything else of the base is kept
    names = {(o["kind"], o["metadata"]["name"]) for o in cluster_objects}
    base = {(o["kind"], o["metadata"]["name"]) for o in objects()}
    assert base - names == {("StatefulSet", "redis"), ("Service", "redis")}
    assert names - base == {
        ("StatefulSet", "redis-cluster"),
        ("Service", "redis-cluster"),
        ("Job", "redis-cluster-create"),
        ("ConfigMap", "redis-cluster-scripts"),
    }


def test_cluster_nodes_are_a_statefulset_announcing_their_dns_names(
    cluster_objects: list[dict[str, Any]],
) -> None:
    nodes = find_in(cluster_objects, "StatefulSet", "redis-cluster")
    assert nodes["spec"]["replicas"] == 6
    (container,) = pod_spec(nodes)["containers"]
    assert container["image"] == pod_spec(find("StatefulSet", "redis"))["containers"][0]["image"]
    args = container["args"]
    option = {args[i]: args[i + 1] for i in range(1, len(args) - 1, 2)}
    assert args[0] == "redis-server" and len(args) % 2 == 1
    assert option["--cluster-enabled"] == "yes"
    assert option["--cluster-preferred-endpoint-type"] == "hostname"
    service = find_in(cluster_objects, "Service", nodes["spec"]["serviceName"])
    assert option["--cluster-announce-hostname"] == f"$(POD_NAME).{service['metadata']['name']}"
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert option["--requirepass"] == option["--masterauth"] == "$(REDIS_PASSWORD)"
    assert option["--appendonly"] == "yes" and option["--appendfsync"] == "everysec"
    (claim,) = nodes["spec"]["volumeClaimTemplates"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == option["--dir"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"redis": int(option["--port"]), "bus": int(option["--port"]) + 10000}
    assert {p["targetPort"] for p in service["spec"]["ports"]} == set(ports)
    assert any(c["name"] == "check-credentials" for c in containers_of(nodes))


def test_cluster_job_creates_three_primaries_with_the_compose_script(
    cluster_objects: list[dict[str, Any]],
) -> None:
    nodes = find_in(cluster_objects, "StatefulSet", "redis-cluster")
    job = find_in(cluster_objects, "Job", "redis-cluster-create")
    (container,) = pod_spec(job)["containers"]
    env = {e["name"]: e for e in container["env"]}
    service = nodes["spec"]["serviceName"]
    expected = [f"redis-cluster-{i}.{service}:6379" for i in range(nodes["spec"]["replicas"])]
    assert env["REDIS_CLUSTER_NODES"]["value"].split() == expected
    replicas = int(env["REDIS_CLUSTER_REPLICAS"]["value"])
    assert nodes["spec"]["replicas"] // (1 + replicas) == 3
    assert env["REDISCLI_AUTH"]["valueFrom"]["secretKeyRef"]["key"] == "REDIS_PASSWORD"
    assert pod_spec(job)["restartPolicy"] in {"OnFailure", "Never"}
    (mount,) = container["volumeMounts"]
    assert container["command"] == ["sh", f"{mount['mountPath']}/create-cluster.sh"]
    (volume,) = pod_spec(job)["volumes"]
    scripts = find_in(cluster_objects, "ConfigMap", volume["configMap"]["name"])
    # one script for compose and Kubernetes: the copy in the ConfigMap is the file
    assert scripts["data"]["create-cluster.sh"] == CLUSTER_SCRIPT.read_text(encoding="utf-8")


def test_every_redis_client_of_the_overlay_is_on_the_cluster(
    cluster_objects: list[dict[str, Any]],
) -> None:
    nodes = find_in(cluster_objects, "StatefulSet", "redis-cluster")
    pods = [f"redis-cluster-{i}.redis-cluster:6379" for i in range(nodes["spec"]["replicas"])]
    base_clients = {
        o["metadata"]["name"]
        for o in workloads()
        if any(e["name"] == "REDIS_URL" for c in containers_of(o) for e in c.get("env", []))
    }
    clients, shards = set(), set()
    for obj in cluster_objects:
        if obj["kind"] not in {"Deployment", "StatefulSet", "Job", "CronJob"}:
            continue
        for container in containers_of(obj):
            env = {e["name"]: e for e in container.get("env", [])}
            if "REDIS_URL" not in env:
                continue
            clients.add(obj["metadata"]["name"])
            urls = env["REDIS_URL"]["value"].split(",")
            assert urls == [f"redis://:$(REDIS_PASSWORD)@{pod}" for pod in pods]
            assert env["REDIS_CLUSTER"]["value"] == "true"
            shards.add(env["REDIS_CLUSTER_SHARDS"]["value"])
            # $(REDIS_PASSWORD) is expanded only if defined before REDIS_URL
            names = [e["name"] for e in container["env"]]
            assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")
    assert clients == base_clients
    assert len(shards) == 1, "the master and every worker of a crawl agree on the shards"
    scaled = find_in(cluster_objects, "ScaledObject", "crawler-worker")
    assert scaled["spec"]["triggers"][0]["type"] == "prometheus"
