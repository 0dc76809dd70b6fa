"""The compose files (``deploy/compose.yaml``, open, and ``deploy/compose.secured.yaml`` beside
it): with the second, ZooKeeper requires SASL and every reassignd service authenticates with the
password file of a compose secret and sets Kafka's ACLs — resolved by reassignd's own
configuration, as the containers resolve it. No password is in the repository: the secrets'
files are git-ignored, made by the commands the file gives."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from reassignd.config import BrokerCommand, ClusterCommand, ControllerCommand, resolve
from reassignd.zk.security import ZkSecurity

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
SECURED_TEXT = (DEPLOY / "compose.secured.yaml").read_text()
SECURED = yaml.safe_load(SECURED_TEXT)
REASSIGND_SERVICES = ("controller", "cluster")

Doc = dict[str, Any]


def merged(service: str) -> Doc:
    """A service as ``docker compose -f compose.yaml -f compose.secured.yaml`` merges it: the
    environment mappings merged, the secrets lists concatenated."""
    base: Doc = BASE["services"][service]
    extra: Doc = SECURED["services"].get(service, {})
    return {
        **base,
        "environment": {**base.get("environment", {}), **extra.get("environment", {})},
        "secrets": [*base.get("secrets", []), *extra.get("secrets", [])],
    }


def zk_security_of(service: Doc) -> ZkSecurity:
    """The ZooKeeper security the service's command gets, resolved as ``reassignd`` does."""
    args: list[str] = service["command"]
    flags: dict[str, object] = {}
    for flag, value in zip(args[1::2], args[2::2], strict=True):  # --brokers 3 --racks 3
        flags[flag.removeprefix("--")] = int(value)
    resolved = resolve(args[0], flags, {k: str(v) for k, v in service["environment"].items()}, {})
    if isinstance(resolved, ClusterCommand):
        return resolved.settings[0].zk_security
    assert isinstance(resolved, (ControllerCommand, BrokerCommand))
    return resolved.settings.zk_security


def secret_path(service: Doc, name: str) -> str:
    assert name in service["secrets"], f"the service does not get the secret {name}"
    assert name in SECURED["secrets"], f"the secret {name} is not declared"
    return f"/run/secrets/{name}"


@pytest.mark.parametrize("service", REASSIGND_SERVICES)
def test_compose_alone_runs_an_open_zookeeper(service: str) -> None:
    assert "secrets" not in BASE
    security = zk_security_of(BASE["services"][service])
    assert security.credentials() is None and not security.zk_set_acl


@pytest.mark.parametrize("service", REASSIGND_SERVICES)
def test_the_secured_override_authenticates_every_service_with_a_secret(service: str) -> None:
    merged_service = merged(service)
    security = zk_security_of(merged_service)
    assert security.zk_sasl_user == "kafka" and security.zk_set_acl is True
    assert security.zk_sasl_password_file == secret_path(merged_service, "zk_password")
    # the optional CA: commented out, a secret of its own
    [ca] = re.findall(r'^\s*# REASSIGND_ZK_TLS_CA: "/run/secrets/(\w+)"$', SECURED_TEXT, re.M)
    assert re.search(rf"^  # {ca}:$", SECURED_TEXT, re.M)


def test_the_zookeeper_requires_sasl_and_knows_the_services_user() -> None:
    zookeeper = merged("zookeeper")
    env = zookeeper["environment"]
    assert (
        "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider" in env["ZOO_CFG_EXTRA"]
    )
    [jaas] = re.findall(r"-Djava\.security\.auth\.login\.config=(\S+)", env["SERVER_JVMFLAGS"])
    assert jaas == secret_path(zookeeper, "zk_server_jaas")
    # the commands that make the secrets' files name the same user and files
    user = SECURED["services"]["controller"]["environment"]["REASSIGND_ZK_SASL_USER"]
    assert f'user_{user}="%s"' in SECURED_TEXT
    for name in ("zk_password", "zk_server_jaas"):
        file = SECURED["secrets"][name]["file"]
        assert file.startswith("./secrets/")
        assert f"> deploy/{file.removeprefix('./')}" in SECURED_TEXT


def test_no_password_is_in_the_repository() -> None:
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "deploy/secrets/" in ignored
    for secret in SECURED["secrets"].values():
        assert (DEPLOY / secret["file"]).resolve().is_relative_to(DEPLOY / "secrets")
    # the made files hold what is typed at the prompt, nothing from this file
    commands = [line.lstrip("# ") for line in SECURED_TEXT.splitlines() if "ZK_PASSWORD" in line]
    assert commands and all("read -rs ZK_PASSWORD" in c or '"$ZK_PASSWORD"' in c for c in commands)
    assert shlex.split(commands[0])[:2] == ["mkdir", "-p"]


def test_the_commands_given_make_the_secrets_files(tmp_path: Path) -> None:
    """Run as the header gives them (the password typed at the prompt): the password file reads
    back as reassignd reads it, and ZooKeeper's JAAS file knows the user with that password."""
    lines = [line.removeprefix("#").strip() for line in SECURED_TEXT.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("mkdir -p deploy/secrets"))
    end = next(i for i in range(start, len(lines)) if lines[i].endswith("deploy/secrets/zk-server-jaas.conf"))
    script = "\n".join(lines[start : end + 1])
    subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, input="s3cret pass\n", text=True, timeout=30, check=True
    )
    secrets = tmp_path / "deploy" / "secrets"
    credentials = ZkSecurity(
        zk_sasl_user="kafka", zk_sasl_password_file=str(secrets / "zk-password")
    ).credentials()
    assert credentials is not None and credentials.password == "s3cret pass"
    jaas = (secrets / "zk-server-jaas.conf").read_text()
    assert re.fullmatch(
        r'Server \{\n  org\.apache\.zookeeper\.server\.auth\.DigestLoginModule required\n  user_kafka="s3cret pass";\n\};\n',
        jaas,
    ), jaas
