"""security/: the client.properties reader, the JAAS line, validation, redaction, the client translations
and TLS contexts from PEM, PKCS12 and JKS stores (no broker needed; certificates made here with openssl)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.security.clients import RedactedStr, java_properties, kafka_kwargs, spark_options
from kafka_balancer.security.jaas import JaasSyntaxError, parse_jaas
from kafka_balancer.security.properties import PropertiesSyntaxError, format_properties, parse_properties
from kafka_balancer.security.settings import Secret, load_settings, settings_from_properties
from kafka_balancer.security.tls import ssl_context

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
PASSWORD = "pa ss\"w=rd:42"


def _jaas(module: str = SCRAM, user: str = "alice", password: str = "s3cret") -> str:
    pw = password.replace("\\", "\\\\").replace('"', '\\"')
    return f'{module} required username="{user}" password="{pw}";'


# ---- the properties format -------------------------------------------------------------------------------------
def test_properties_separators_comments_and_blanks() -> None:
    text = ("# comment\n! also a comment\n\n   a=1\nb : 2\nc 3\nd\te\nempty=\nkey.only\n"
            "  spaced   =   value with spaces  \n")
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "e", "empty": "", "key.only": "",
                                      "spaced": "value with spaces  "}


def test_properties_escapes_and_continuations() -> None:
    text = ("path=C:\\\\kafka\\\\ca.pem\nkey\\=with\\:seps=v\\=1\nuni=caf\\u00e9\ntabs=a\\tb\n"
            "long=first \\\n     second \\\n\tthird\nodd=ends with backslash\\\\\nnext=1\n"
            "# comment \\\nnot.continued=yes\r\nwin=crlf\r\n")
    got = parse_properties(text)
    assert got["path"] == "C:\\kafka\\ca.pem"
    assert got["key=with:seps"] == "v=1"
    assert got["uni"] == "café" and got["tabs"] == "a\tb"
    assert got["long"] == "first second third"
    assert got["odd"] == "ends with backslash\\" and got["next"] == "1"
    assert got["not.continued"] == "yes" and got["win"] == "crlf"


def test_properties_last_duplicate_wins_and_bad_unicode_escape() -> None:
    assert parse_properties("a=1\na=2\n") == {"a": "2"}
    with pytest.raises(PropertiesSyntaxError, match="line 2"):
        parse_properties("ok=1\nbad=\\u12x4\n")


def test_format_properties_reads_back() -> None:
    props = {"a b": " lead", "k=:": "v=:#!", "jaas": _jaas(password=PASSWORD), "nl": "x\ny", "u": "é\\"}
    assert parse_properties(format_properties(props)) == props


# ---- JAAS ------------------------------------------------------------------------------------------------------
def test_jaas_as_kafka_writes_it() -> None:
    m = parse_jaas(_jaas(password=PASSWORD))
    assert (m.module, m.flag, m.options) == (SCRAM, "required", {"username": "alice", "password": PASSWORD})
    assert PASSWORD not in repr(m)
    m = parse_jaas(f"  {PLAIN}   REQUIRED\n username=bob /* c */ password=\"x\" ; ")
    assert m.flag == "required" and m.options == {"username": "bob", "password": "x"}


@pytest.mark.parametrize("text", ["", f"{SCRAM} username=\"a\";", f'{SCRAM} required username="a"',
                                  f'{SCRAM} required username="a;', f'{SCRAM} required username;',
                                  f'{SCRAM} required username="a"; {PLAIN} required;'])
def test_jaas_malformed(text: str) -> None:
    with pytest.raises(JaasSyntaxError):
        parse_jaas(text)


# ---- validation ------------------------------------------------------------------------------------------------
def test_sasl_settings_and_redaction() -> None:
    s = settings_from_properties({"security.protocol": "sasl_plaintext", "sasl.mechanism": "plain",
                                  "sasl.jaas.config": _jaas(PLAIN, password=PASSWORD), "client.id": "x"})
    assert (s.protocol, s.mechanism, s.username) == ("SASL_PLAINTEXT", "PLAIN", "alice")
    assert isinstance(s.password, Secret) and s.password.reveal() == PASSWORD
    for text in (repr(s), str(s), s.describe(), s.who, repr(s.properties)):
        assert PASSWORD not in text and "pa ss" not in text
    kw = kafka_kwargs(s)
    assert kw["security_protocol"] == "SASL_PLAINTEXT" and kw["sasl_mechanism"] == "PLAIN"
    assert isinstance(kw["sasl_plain_password"], RedactedStr) and kw["sasl_plain_password"] == PASSWORD
    assert PASSWORD not in repr(kw) and PASSWORD not in f"{kw}"
    assert "ssl_context" not in kw


def test_plaintext_is_the_default() -> None:
    s = settings_from_properties({})
    assert s.protocol == "PLAINTEXT" and kafka_kwargs(s) == {} and kafka_kwargs(None) == {}
    assert spark_options(None) == {}


@pytest.mark.parametrize(("props", "message"), [
    ({"security.protocol": "TLS"}, "security.protocol: 'TLS' is not a security protocol"),
    ({"security.protocol": "SASL_SSL"}, "needs sasl.mechanism"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "mechanism 'GSSAPI' is not supported"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-1"}, "mechanism 'SCRAM-SHA-1' is not supported"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}, "needs sasl.jaas.config"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": _jaas(SCRAM)},
     "does not go with sasl.mechanism=PLAIN"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": f"{SCRAM} required;"},
     "needs both username"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
      "sasl.jaas.config": f'{SCRAM} required username="a" password="b" tokenauth="true";'},
     "tokenauth are not supported"),
    ({"ssl.cipher.suites": "X"}, "ssl.cipher.suites: this property is not supported"),
    ({"sasl.login.callback.handler.class": "X"}, "this property is not supported"),
    ({"bootstrap.servers": "x:1"}, "bootstrap.servers: unknown or unsupported property"),
    ({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"}, "'ldap' is not supported"),
    ({"security.protocol": "SSL", "ssl.enabled.protocols": "TLSv1.1"}, "only TLSv1.2 and TLSv1.3"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/nonexistent/ca.jks"}, "cannot read /nonexistent"),
    ({"security.protocol": "SSL", "ssl.truststore.certificates": "X", "ssl.truststore.type": "JKS"},
     "need ssl.truststore.type=PEM"),
    ({"security.protocol": "SSL", "ssl.keystore.key": "X", "ssl.keystore.type": "PEM"},
     "needs both ssl.keystore.key and ssl.keystore.certificate.chain"),
])
def test_bad_properties_name_the_property(props: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as info:
        settings_from_properties(props)
    assert message in info.value.message and info.value.hint
    assert "s3cret" not in info.value.message


def test_load_settings_names_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "client.properties"
    f.write_text("# x\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-1\n")
    with pytest.raises(InputError, match=r"client.properties line 3: sasl.mechanism"):
        load_settings(f)
    with pytest.raises(InputError, match="cannot read it"):
        load_settings(tmp_path / "missing.properties")
    with pytest.raises(InputError, match="is a directory"):
        load_settings(tmp_path)


def test_hostname_verification_on_by_default_off_when_empty(tmp_path: Path) -> None:
    assert settings_from_properties({"security.protocol": "SSL"}).check_hostname
    s = settings_from_properties({"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": ""})
    assert not s.check_hostname and "hostname verification OFF" in s.describe()


def test_spark_and_java_translations(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
             "sasl.jaas.config": _jaas(password=PASSWORD), "ssl.truststore.type": "PEM",
             "ssl.truststore.location": str(ca), "request.timeout.ms": "30000"}
    s = settings_from_properties(props)
    opts = spark_options(s)
    assert opts == {f"kafka.{k}": v for k, v in props.items()}
    assert parse_properties(java_properties(s)) == props


# ---- TLS contexts from real stores -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")

    def run(*cmd: str, env: dict[str, str] | None = None) -> None:
        subprocess.run(list(cmd), check=True, capture_output=True, env=env)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("openssl", "req", "-x509", *ec, "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"), "-days", "2",
        "-subj", "/CN=test-ca")
    run("openssl", "req", *ec, "-keyout", str(d / "c.key"), "-out", str(d / "c.csr"), "-subj", "/CN=client")
    run("openssl", "x509", "-req", "-in", str(d / "c.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
        "-CAcreateserial", "-out", str(d / "c.crt"), "-days", "2")
    env = {"PW": "storepw", "PATH": "/usr/bin:/bin"}
    run("openssl", "pkcs12", "-export", "-in", str(d / "c.crt"), "-inkey", str(d / "c.key"), "-out",
        str(d / "c.p12"), "-passout", "env:PW", "-name", "client", env=env)
    run("openssl", "pkcs8", "-topk8", "-in", str(d / "c.key"), "-out", str(d / "c.key.enc"), "-v2", "aes-256-cbc",
        "-passout", "env:PW", env=env)
    (d / "c.pem").write_text((d / "c.key.enc").read_text() + (d / "c.crt").read_text())
    keytool = shutil.which("keytool")
    if keytool:
        run(keytool, "-importkeystore", "-noprompt", "-srckeystore", str(d / "c.p12"), "-srcstoretype", "PKCS12",
            "-srcstorepass:env", "PW", "-destkeystore", str(d / "c.jks"), "-deststoretype", "JKS",
            "-deststorepass:env", "PW", env=env)
        run(keytool, "-importcert", "-noprompt", "-file", str(d / "ca.pem"), "-alias", "ca", "-keystore",
            str(d / "trust.jks"), "-storetype", "JKS", "-storepass:env", "PW", env=env)
    return d


def _ca_subjects(ctx: ssl.SSLContext) -> list[str]:
    return [dict(x[0] for x in c["subject"])["commonName"] for c in ctx.get_ca_certs()]


@pytest.mark.parametrize("variant", ["pem", "pem-inline", "pkcs12", "jks"])
def test_ssl_context_from_each_store_kind(pki: Path, variant: str) -> None:
    if variant == "jks" and not (pki / "c.jks").exists():
        pytest.skip("no keytool")
    base = {"security.protocol": "SSL"}
    trust = {"pem": {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki / "ca.pem")},
             "pem-inline": {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": (pki / "ca.pem").read_text()},
             "pkcs12": {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki / "ca.pem")},
             "jks": {"ssl.truststore.type": "JKS", "ssl.truststore.location": str(pki / "trust.jks"),
                     "ssl.truststore.password": "storepw"}}[variant]
    key = {"pem": {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki / "c.pem"),
                   "ssl.key.password": "storepw"},
           "pem-inline": {"ssl.keystore.type": "PEM", "ssl.key.password": "storepw",
                          "ssl.keystore.key": (pki / "c.key.enc").read_text(),
                          "ssl.keystore.certificate.chain": (pki / "c.crt").read_text()},
           "pkcs12": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki / "c.p12"),
                      "ssl.keystore.password": "storepw"},
           "jks": {"ssl.keystore.type": "JKS", "ssl.keystore.location": str(pki / "c.jks"),
                   "ssl.keystore.password": "storepw"}}[variant]
    s = settings_from_properties({**base, **trust, **key})
    ctx = ssl_context(s)
    assert ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2
    assert _ca_subjects(ctx) == ["test-ca"]
    assert "storepw" not in repr(s)


def test_wrong_store_password_is_one_line(pki: Path) -> None:
    s = settings_from_properties({"security.protocol": "SSL", "ssl.keystore.type": "PKCS12",
                                  "ssl.keystore.location": str(pki / "c.p12"), "ssl.keystore.password": "nope"})
    with pytest.raises(InputError, match="cannot open the PKCS12 store"):
        ssl_context(s)
    s = settings_from_properties({"security.protocol": "SSL", "ssl.keystore.type": "PEM",
                                  "ssl.keystore.location": str(pki / "c.pem"), "ssl.key.password": "nope"})
    with pytest.raises(InputError, match="cannot load the client key"):
        ssl_context(s)
