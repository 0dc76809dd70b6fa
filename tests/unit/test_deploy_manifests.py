"""The Kubernetes manifests (``deploy/kubernetes``) and the two Dockerfiles: every object validates
against the Kubernetes API schemas (``kubernetes-validate``, offline: it ships them), and the
invariants an operator relies on hold — probes, disruption budget, grace for a hand-over,
resources, non-root read-only pods, the tokens file from a Secret, pinned image tags, the
controller's settings accepted by reassignd's own configuration checks, the kustomizations
listing every file, and the secured ZooKeeper's password read from a Secret the operator creates
(the ``secured-zookeeper`` component). With ``kubectl`` on the machine, the kustomize output is
validated too, with the component and without."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from reassignd import options as opt
from reassignd.config import BY_NAME, BrokerCommand, ControllerCommand, resolve
from reassignd.feeder.goals import parse_goal
from reassignd.zk.security import ZkSecurity

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
# the kustomize component a secured ZooKeeper adds (its files patch the base's objects)
SECURED = KUBERNETES / "secured-zookeeper"
ZK_SECRET = "reassignd-zookeeper"
# 1.28: the oldest with the pod-index label the agents read; 1.37: the newest schemas shipped
VERSIONS = ("1.28", "1.37")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
IMAGES = {"reassignd", "reassignd-feeder"}
POD_IP = "10.1.2.3"

Doc = dict[str, Any]


def manifest_files() -> list[Path]:
    return sorted(p for p in KUBERNETES.rglob("*.yaml") if p.name != "kustomization.yaml")


def documents(path: Path) -> list[Doc]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def every_object() -> list[Doc]:
    """The base's objects and the feeder's (the component's patches aside)."""
    return [d for p in manifest_files() if SECURED not in p.parents for d in documents(p)]


def by_kind(kind: str) -> list[Doc]:
    return [d for d in every_object() if d["kind"] == kind]


def one(kind: str, name: str) -> Doc:
    [found] = [d for d in by_kind(kind) if d["metadata"]["name"] == name]
    return found


def pod_specs() -> Iterator[tuple[str, Doc]]:
    for d in every_object():
        if d["kind"] in ("Deployment", "StatefulSet", "Job"):
            yield d["metadata"]["name"], d["spec"]["template"]


def containers(template: Doc) -> list[Doc]:
    spec = template["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def env_of(container: Doc, config: Mapping[str, str]) -> dict[str, str]:
    """The container's plain variables as Kubernetes would give them: the ConfigMap's, then its
    own, ``$(VAR)`` expanded; field references resolved to test values."""
    env = dict(config)
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), var["value"])
        elif "fieldRef" in var.get("valueFrom", {}):
            env[var["name"]] = {"status.podIP": POD_IP}.get(var["valueFrom"]["fieldRef"]["fieldPath"], "2")
    return env


CONFIG = one("ConfigMap", "reassignd-config")["data"]


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(KUBERNETES)))
@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_validates_against_the_kubernetes_schemas(path: Path, version: str) -> None:
    docs = documents(path)
    assert docs, f"{path} holds no object"
    for doc in docs:
        assert kubernetes_validate.validate(doc, version, strict=True) == version


def test_the_schemas_are_shipped_not_fetched() -> None:
    assert {"1.28.0", "1.37.0"} <= set(kubernetes_validate.utils.all_versions())


@pytest.mark.parametrize(
    "directory", [KUBERNETES, KUBERNETES / "feeder", SECURED], ids=["base", "feeder", "secured"]
)
def test_each_kustomization_lists_its_files_and_pins_its_images(directory: Path) -> None:
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    if kustomization["kind"] == "Component":
        listed = {p["path"] for p in kustomization["patches"]}
    else:
        listed = set(kustomization["resources"])
    present = {p.name for p in directory.glob("*.yaml") if p.name != "kustomization.yaml"}
    assert listed == present
    for image in kustomization.get("images", []):
        assert image["name"] in IMAGES and image["newTag"] == VERSION


def test_images_are_ours_with_the_projects_version_never_latest() -> None:
    seen = set()
    for name, template in pod_specs():
        for container in containers(template):
            image, _, tag = container["image"].rpartition(":")
            assert image in IMAGES and tag == VERSION, f"{name}/{container['name']}: {container['image']}"
            assert container["imagePullPolicy"] == "IfNotPresent"
            seen.add((name, image))
    assert seen == {
        ("reassignd-controller", "reassignd"),
        ("reassignd-broker-r0", "reassignd"),
        ("reassignd-feed", "reassignd-feeder"),
    }


def test_every_pod_is_non_root_with_a_read_only_root_filesystem() -> None:
    for name, template in pod_specs():
        spec = template["spec"]
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0, name
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", name
        assert spec["automountServiceAccountToken"] is False, name
        for container in containers(template):
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            # what writes (Python, the JVM, Spark) writes to a volume
            assert "/tmp" in {m["mountPath"] for m in container["volumeMounts"]}, name
            resources = container["resources"]
            assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}, name


def mebibytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", quantity).groups()  # type: ignore[union-attr]
    return int(number) * (1024 if unit == "Gi" else 1)


def test_the_controller_deployment() -> None:
    deployment = one("Deployment", "reassignd-controller")
    spec = deployment["spec"]
    assert spec["replicas"] >= 2
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    pod = spec["template"]["spec"]
    [container] = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    # the grace covers the preStop pause, an event in hand (ZooKeeper's 10 s request timeout),
    # the HTTP drain and the session close
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pod["terminationGracePeriodSeconds"] >= pause + 10 + 5 + 10
    # bench/README.md: 155-167 MiB of RSS at 100,000 partitions
    resources = container["resources"]
    assert mebibytes(resources["requests"]["memory"]) >= 167
    assert mebibytes(resources["limits"]["memory"]) >= 2 * 167


def test_the_tokens_file_comes_from_a_secret() -> None:
    pod = one("Deployment", "reassignd-controller")["spec"]["template"]["spec"]
    [container] = pod["containers"]
    path = env_of(container, CONFIG)["REASSIGND_AUTH_TOKENS"]
    mounts = [m for m in container["volumeMounts"] if path.startswith(m["mountPath"] + "/")]
    [mount] = mounts
    assert mount["readOnly"] is True
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == "reassignd-tokens"
    assert not by_kind("Secret")  # no token is ever shipped in the manifests


SECURED_CONFIG = documents(SECURED / "config.yaml")[0]


def zk_credentials_mount(template: Doc) -> str:
    """Where the pod mounts the optional Secret of the ZooKeeper credentials (its one container)."""
    spec = template["spec"]
    [container] = spec["containers"]
    [volume] = [v for v in spec["volumes"] if v.get("secret", {}).get("secretName") == ZK_SECRET]
    # optional: the base runs against an open ZooKeeper, without the Secret
    assert volume["secret"]["optional"] is True
    [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["readOnly"] is True
    return str(mount["mountPath"])


def zk_security_of(command: str, flags: dict[str, object], env: dict[str, str]) -> ZkSecurity:
    """The ZooKeeper security the pod's command gets, resolved as ``reassignd`` resolves it."""
    resolved = resolve(command, flags, env, {})
    assert isinstance(resolved, (ControllerCommand, BrokerCommand))
    return resolved.settings.zk_security


@pytest.mark.parametrize(
    ("kind", "name", "command", "flags"),
    [
        ("Deployment", "reassignd-controller", "controller", {}),
        ("StatefulSet", "reassignd-broker-r0", "broker", {"id": 1}),
    ],
)
def test_the_zookeeper_password_comes_from_a_secret_the_operator_creates(
    kind: str, name: str, command: str, flags: dict[str, object]
) -> None:
    """Open by default; with the secured-zookeeper component, every pod authenticates with the
    password file of the Secret it mounts and sets Kafka's ACLs. No Secret is shipped: the
    component says how to create it, with the key the password file names."""
    template = one(kind, name)["spec"]["template"]
    mount = zk_credentials_mount(template)
    [container] = template["spec"]["containers"]
    opened = zk_security_of(command, flags, env_of(container, CONFIG))
    assert opened.credentials() is None and not opened.zk_set_acl

    assert SECURED_CONFIG["metadata"]["name"] == "reassignd-config"
    env = env_of(container, CONFIG | SECURED_CONFIG["data"])
    security = zk_security_of(command, flags, env)
    assert security.zk_sasl_user == "kafka" and security.zk_set_acl is True
    assert security.zk_sasl_password_file is not None
    password_file = Path(security.zk_sasl_password_file)
    assert password_file.parent == Path(mount)
    assert not by_kind("Secret")  # never a password in the repository
    how = (SECURED / "kustomization.yaml").read_text()
    assert f"kubectl create secret generic {ZK_SECRET} --from-file={password_file.name}=" in how
    # the optional CA, commented out: a file of the same Secret
    [ca] = re.findall(r'^\s*# REASSIGND_ZK_TLS_CA: "(.+)"$', (SECURED / "config.yaml").read_text(), re.M)
    assert Path(ca).parent == Path(mount)


def test_the_controllers_settings_pass_reassignds_own_checks() -> None:
    """The environment the pods get, resolved as ``reassignd controller`` resolves it: a wildcard
    bind with tokens and the advertised addresses (exit 2 otherwise)."""
    [container] = one("Deployment", "reassignd-controller")["spec"]["template"]["spec"]["containers"]
    env = env_of(container, CONFIG) | {"REASSIGND_CONTROLLER_ID": "9515"}
    command = resolve("controller", {}, env, {})
    assert isinstance(command, ControllerCommand)
    settings = command.settings
    assert settings.http_advertised == f"http://{POD_IP}:8080"
    assert (settings.kafka_advertised_host, settings.kafka_advertised_port) == (POD_IP, 9092)
    assert settings.auth_tokens_path is not None and command.log.format == "json"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert (settings.http_port, settings.kafka_listener_port) == (ports["http"], ports["kafka"])
    # the broker ports: advertised on the pod IP, opened by the NetworkPolicy
    assert settings.kafka_broker_ports is not None
    first, last = settings.kafka_broker_ports
    policy = one("NetworkPolicy", "reassignd-controller")["spec"]
    opened = [p for rule in policy["ingress"] for p in rule["ports"] if "endPort" in p]
    assert [(p["port"], p["endPort"]) for p in opened] == [(first, last)]


def test_a_controller_id_per_pod_and_a_broker_id_per_ordinal(tmp_path: Path) -> None:
    """The pods' shell lines, run with a stand-in ``reassignd`` that prints what it got."""
    (tmp_path / "reassignd").write_text('#!/bin/sh\necho "$REASSIGND_CONTROLLER_ID $*"\n')
    (tmp_path / "reassignd").chmod(0o755)
    python = Path(shutil.which("python3") or "python3")
    (tmp_path / "python").symlink_to(python)
    path = f"{tmp_path}:{os.environ['PATH']}"

    def run(container: Doc, env: dict[str, str]) -> str:
        assert container["command"] == ["/bin/sh", "-c"]
        done = subprocess.run(
            ["/bin/sh", "-c", *container["args"]],
            env={"PATH": path, **env},
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout.strip()

    [controller] = one("Deployment", "reassignd-controller")["spec"]["template"]["spec"]["containers"]
    assert run(controller, {"POD_IP": "10.1.2.3"}) == "9515 controller"  # 9000 + 2 * 256 + 3
    assert run(controller, {"POD_IP": "fd00::7"}) == "9007 controller"
    statefulset = one("StatefulSet", "reassignd-broker-r0")
    [broker] = statefulset["spec"]["template"]["spec"]["containers"]
    env = env_of(broker, CONFIG)
    assert run(broker, {"BROKER_ID_BASE": env["BROKER_ID_BASE"], "POD_INDEX": "2"}) == "broker --id 3"


def test_the_agents_take_their_rack_and_ordinal_from_the_downward_api() -> None:
    statefulset = one("StatefulSet", "reassignd-broker-r0")
    template = statefulset["spec"]["template"]
    [container] = template["spec"]["containers"]
    refs = {v["name"]: v["valueFrom"]["fieldRef"]["fieldPath"] for v in container["env"] if "valueFrom" in v}
    assert refs["POD_INDEX"] == "metadata.labels['apps.kubernetes.io/pod-index']"
    assert refs["REASSIGND_RACK"] == "metadata.labels['reassignd.io/rack']"
    assert refs["REASSIGND_HOST"] == "status.podIP"
    assert template["metadata"]["labels"]["reassignd.io/rack"] == "r0"
    assert statefulset["spec"]["serviceName"] == one("Service", "reassignd-broker")["metadata"]["name"]
    assert one("Service", "reassignd-broker")["spec"]["clusterIP"] == "None"


def selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_services_budgets_and_policies_select_the_pods() -> None:
    controller_labels = one("Deployment", "reassignd-controller")["spec"]["template"]["metadata"]["labels"]
    broker_labels = one("StatefulSet", "reassignd-broker-r0")["spec"]["template"]["metadata"]["labels"]
    feeder_labels = one("Job", "reassignd-feed")["spec"]["template"]["metadata"]["labels"]
    service = one("Service", "reassignd-controller")
    assert selects(service["spec"]["selector"], controller_labels)
    assert {p["targetPort"] for p in service["spec"]["ports"]} == {"http", "kafka"}
    assert selects(
        one("PodDisruptionBudget", "reassignd-controller")["spec"]["selector"]["matchLabels"],
        controller_labels,
    )
    assert selects(
        one("PodDisruptionBudget", "reassignd-broker")["spec"]["selector"]["matchLabels"], broker_labels
    )
    policy = one("NetworkPolicy", "reassignd-controller")["spec"]
    assert selects(policy["podSelector"]["matchLabels"], controller_labels)
    allowed = [peer["podSelector"]["matchLabels"] for rule in policy["ingress"] for peer in rule["from"]]
    assert any(selects(a, feeder_labels) for a in allowed)  # the feeder reaches the controllers
    assert not any(selects(a, broker_labels) for a in allowed)
    brokers = one("NetworkPolicy", "reassignd-broker")["spec"]
    assert selects(brokers["podSelector"]["matchLabels"], broker_labels)


def test_the_feeder_job_plans_then_runs_on_a_shared_volume() -> None:
    spec = one("Job", "reassignd-feed")["spec"]["template"]["spec"]
    [plan] = spec["initContainers"]
    [run] = spec["containers"]
    assert plan["args"][0] == "plan" and run["args"][:2] == ["run", "/plan"]
    out = plan["args"][plan["args"].index("--out") + 1]
    assert out == "/plan" and {m["mountPath"] for m in plan["volumeMounts"]} >= {out}
    assert {m["mountPath"] for m in run["volumeMounts"]} >= {out}
    assert spec["restartPolicy"] == "Never"
    for container, verb in ((plan, "plan"), (run, "run")):
        env = env_of(container, {})
        assert (
            "secretKeyRef"
            in next(v for v in container["env"] if v["name"] == "REASSIGND_AUTH_TOKEN")["valueFrom"]
        )
        flags: dict[str, object] = {"plan": "/plan"} if verb == "run" else {}
        values = opt.merge(BY_NAME[f"feed {verb}"].options, flags, env, {})
        assert values["bootstrap-controller"] == "http://reassignd-controller:8080"
    planned = opt.merge(BY_NAME["feed plan"].options, {}, env_of(plan, {}), {})
    assert planned["goal"] == (parse_goal("rebalance:bytes"),)


def dockerfile(name: str) -> str:
    return (ROOT / name).read_text()


def test_the_images_leave_the_demo_out() -> None:
    """The demo runs from a checkout (scripts/demo.sh); both images copy reassignd/ without it."""
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    assert "reassignd/demo" in ignored
    for name in ("Dockerfile", "Dockerfile.feeder"):
        assert "COPY reassignd ./reassignd" in dockerfile(name)


def test_the_controller_image_has_no_java_and_the_feeder_image_has() -> None:
    controller, feeder = dockerfile("Dockerfile"), dockerfile("Dockerfile.feeder")
    base = re.findall(r"^FROM (\S+)", controller, re.M)
    assert base == re.findall(r"^FROM (\S+)", feeder, re.M) and ":" in base[0] and "latest" not in base[0]
    assert "jre" not in controller and "java" not in controller.lower().replace("# ", "")
    assert "openjdk-17-jre-headless" in feeder and 'pip install ".[feeder]"' in feeder
    assert 'ENTRYPOINT ["reassignd", "feed"]' in feeder and 'ENTRYPOINT ["reassignd"]' in controller
    for text in (controller, feeder):
        assert "useradd --system --uid 10001" in text and "\nUSER reassignd\n" in text


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("directory", [KUBERNETES, KUBERNETES / "feeder"], ids=["base", "feeder"])
def test_the_kustomize_output_validates(directory: Path) -> None:
    done = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60, check=True
    )
    rendered = [d for d in yaml.safe_load_all(done.stdout) if d is not None]
    assert len(rendered) == sum(
        len(documents(p)) for p in directory.glob("*.yaml") if p.name != "kustomization.yaml"
    )
    for doc in rendered:
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "reassignd"
        assert kubernetes_validate.validate(doc, VERSIONS[-1], strict=True)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_uncommenting_the_component_in_the_base_secures_every_pod(tmp_path: Path) -> None:
    """What the base kustomization tells the operator to do: uncomment its ``components:``."""
    copy = tmp_path / "kubernetes"
    shutil.copytree(KUBERNETES, copy)
    text = (copy / "kustomization.yaml").read_text()
    uncommented = re.sub(r"^# (components:\n)# (  - secured-zookeeper\n)", r"\1\2", text, flags=re.M)
    assert uncommented != text, "the base kustomization has no commented components: line"
    (copy / "kustomization.yaml").write_text(uncommented)
    done = subprocess.run(
        ["kubectl", "kustomize", str(copy)], capture_output=True, text=True, timeout=60, check=True
    )
    rendered = [d for d in yaml.safe_load_all(done.stdout) if d is not None]
    [config] = [d for d in rendered if d["kind"] == "ConfigMap"]
    assert config["data"] == CONFIG | SECURED_CONFIG["data"]
    for doc in rendered:
        assert kubernetes_validate.validate(doc, VERSIONS[-1], strict=True)
