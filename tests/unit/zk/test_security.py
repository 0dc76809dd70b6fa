"""The ZooKeeper SASL and ACL options: where the credentials come from (flag, variable, config file,
password file, a Kafka JAAS file), the combinations refused, and the password kept out of sight."""

from __future__ import annotations

from pathlib import Path

import pytest

from reassignd.config import ConfigError, load_command, resolve
from reassignd.zk.security import ZkSecurity, jaas_client_credentials
from reassignd.zk.values import SaslCredentials

KAFKA_JAAS = """
// the file Kafka's brokers run with (KAFKA_OPTS=-Djava.security.auth.login.config=...)
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin" password="admin-secret";
};
Client {
    /* ZooKeeper */
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="a \\"quoted\\" pw;#x";
};
"""


def test_the_client_section_of_a_kafka_jaas_file_gives_the_credentials() -> None:
    assert jaas_client_credentials(KAFKA_JAAS) == SaslCredentials("kafka", 'a "quoted" pw;#x')


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ("KafkaServer { x required; };", "no Client section"),
        (
            "Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };",
            "Kerberos",
        ),
        (
            'Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="u"; };',
            "needs username and password",
        ),
    ],
)
def test_an_unusable_jaas_file_says_why(document: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        jaas_client_credentials(document)


def test_the_password_comes_from_the_first_line_of_its_file(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_text("s3cret\n")
    security = ZkSecurity(zk_sasl_user="kafka", zk_sasl_password_file=str(path))
    assert security.credentials() == SaslCredentials("kafka", "s3cret")
    assert ZkSecurity().credentials() is None


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"zk_sasl_user": "u"}, "needs a password"),
        ({"zk_sasl_password": "p"}, "without --zk-sasl-user"),
        ({"zk_set_acl": True}, "--zk-set-acl needs SASL credentials"),
        ({"zk_jaas_config": "f", "zk_sasl_user": "u", "zk_sasl_password": "p"}, "not both"),
        ({"zk_sasl_user": "u", "zk_sasl_password": "p", "zk_sasl_password_file": "f"}, "not both"),
    ],
)
def test_incomplete_or_conflicting_credentials_are_refused(kwargs: dict[str, object], reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        ZkSecurity(**kwargs)  # type: ignore[arg-type]


def test_every_zookeeper_role_takes_the_options_and_the_variable_holds_the_password() -> None:
    env = {"REASSIGND_ZK_SASL_PASSWORD": "hunter2"}
    flags: dict[str, object] = {"zk": "127.0.0.1:2181", "zk-sasl-user": "kafka", "zk-set-acl": True}
    controller = resolve("controller", flags, env, {})
    broker = resolve("broker", {**flags, "id": "1"}, env, {})
    cluster = resolve("cluster", {**flags, "brokers": "2"}, env, {})
    for security in (
        controller.settings.zk_security,  # type: ignore[union-attr]
        broker.settings.zk_security,  # type: ignore[union-attr]
        *(agent.zk_security for agent in cluster.settings),  # type: ignore[union-attr]
    ):
        assert security.credentials() == SaslCredentials("kafka", "hunter2")
        assert security.zk_set_acl
    assert "hunter2" not in repr(controller)
    assert "hunter2" not in repr(cluster)


def test_the_config_file_and_the_jaas_flag(tmp_path: Path) -> None:
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(KAFKA_JAAS)
    config = tmp_path / "reassignd.toml"
    config.write_text(f'zk = "127.0.0.1:2181"\nzk-jaas-config = "{jaas}"\nzk-set-acl = true\n')
    command = load_command(["controller", "--config", str(config)], {})
    settings = command.settings  # type: ignore[union-attr]
    assert settings.zk_security.credentials() == SaslCredentials("kafka", 'a "quoted" pw;#x')  # type: ignore[union-attr]
    settings_zk = settings.zk_security.zk_settings("h:1/c", 6.0, 10.0, role="controller")  # type: ignore[union-attr]
    assert settings_zk.set_acl and settings_zk.sasl == SaslCredentials("kafka", 'a "quoted" pw;#x')


def test_a_missing_password_file_is_a_configuration_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match=r"--zk-sasl-password-file .*cannot read it"):
        load_command(
            [
                "broker",
                "--zk",
                "h:1",
                "--id",
                "1",
                "--zk-sasl-user",
                "u",
                "--zk-sasl-password-file",
                str(missing),
            ],
            {},
        )


def test_tls_to_zookeeper_needs_usable_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="both --zk-tls-cert and --zk-tls-key"):
        ZkSecurity(zk_tls_cert="c.pem")
    assert ZkSecurity().tls() is None
    not_a_ca = tmp_path / "ca.pem"
    not_a_ca.write_text("not a certificate")
    with pytest.raises(ConfigError, match=r"cannot load the ZooKeeper TLS files \(--zk-tls-ca "):
        load_command(["controller", "--zk", "h:1", "--zk-tls-ca", str(not_a_ca)], {})
