"""localcluster/secure.py and the secured server.properties: listeners, SASL, ACLs, client files (pure)."""

from __future__ import annotations

from pathlib import Path

from kafka_balancer.localcluster import secure
from kafka_balancer.localcluster.spec import ClusterSpec, plan_nodes, server_properties
from kafka_balancer.security.properties import parse_properties
from kafka_balancer.security.settings import settings_from_properties

PW = secure.SecretsSet("store-pw", "broker-pw", "admin-pw", "reader-pw")


def _props(mode: str) -> dict[str, str]:
    spec = ClusterSpec(brokers=3, controllers=3, brokers_per_host=1, security=mode)
    nodes = plan_nodes(spec, list(range(30000, 30009)))
    extra = secure.server_security(mode, True, Path("/x/tls"), PW)
    return parse_properties(server_properties(spec, nodes[0], nodes, Path("/x/data"), extra))


def test_sasl_ssl_broker_settings() -> None:
    p = _props("sasl_ssl")
    assert p["listeners"] == "SASL_SSL://127.0.0.1:30000,CONTROLLER://127.0.0.1:30006"
    assert p["advertised.listeners"] == "SASL_SSL://127.0.0.1:30000"
    assert p["listener.security.protocol.map"] == "SASL_SSL:SASL_SSL,CONTROLLER:SSL"
    assert p["inter.broker.listener.name"] == "SASL_SSL"
    assert p["sasl.mechanism.inter.broker.protocol"] == "SCRAM-SHA-512"
    assert p["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert p["allow.everyone.if.no.acl.found"] == "false" and p["super.users"] == "User:broker;User:admin"
    assert p["listener.name.sasl_ssl.ssl.client.auth"] == "requested"
    assert p["listener.name.controller.ssl.client.auth"] == "required"
    assert 'password="broker-pw"' in p["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"]
    assert 'user_reader="reader-pw"' in p["listener.name.sasl_ssl.plain.sasl.jaas.config"]


def test_ssl_broker_settings() -> None:
    p = _props("ssl")
    assert p["listeners"].startswith("SSL://127.0.0.1:30000")
    assert p["ssl.client.auth"] == "required" and "sasl.enabled.mechanisms" not in p
    assert p["ssl.principal.mapping.rules"] == "RULE:^CN=([^,]+)$/$1/,DEFAULT"


def test_client_properties_parse_as_our_settings(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("x")
    (tmp_path / "admin.p12").write_bytes(b"x")
    (tmp_path / "reader.p12").write_bytes(b"x")
    admin = settings_from_properties(secure.client_properties("sasl_ssl", "admin", tmp_path, PW))
    reader = settings_from_properties(secure.client_properties("sasl_ssl", "reader", tmp_path, PW))
    assert (admin.mechanism, admin.username, reader.mechanism, reader.username) == (
        "SCRAM-SHA-512", "admin", "SCRAM-SHA-256", "reader")
    assert admin.password is not None and admin.password.reveal() == "admin-pw"
    assert admin.keystore is not None and admin.keystore.type == "PKCS12"
    ssl_only = settings_from_properties(secure.client_properties("ssl", "reader", tmp_path, PW))
    assert ssl_only.protocol == "SSL" and not ssl_only.uses_sasl and ssl_only.keystore is not None


def test_scram_users_go_in_a_private_argument_file(tmp_path: Path) -> None:
    args = secure.scram_arguments(PW)
    assert args.count("--add-scram") == 6 and "SCRAM-SHA-256=[name=reader,password=reader-pw]" in args
    f = secure.write_private(tmp_path / "format.args", secure.argfile(["-cp", "a b.jar", 'q"x', *args]))
    assert f.stat().st_mode & 0o777 == 0o600
    assert '"a b.jar"' in f.read_text() and '"q\\"x"' in f.read_text()
    assert "reader-pw" not in repr(PW)
