"""A secured local cluster (``local-cluster up --security ssl|sasl_ssl``): certificates, users, ACLs.

At creation, in ``STATE_DIR/tls`` (mode 0700), ``openssl`` makes a throwaway CA (its key is deleted once
it has signed), one broker certificate (CN=broker, SAN ``IP:127.0.0.1``, ``DNS:localhost``, so hostname
verification passes) and client certificates for ``admin`` and ``reader``. Every password is random per
cluster. The brokers get:

* ``ssl``: one ``SSL`` listener for clients and brokers with ``ssl.client.auth=required``; the principal is
  the certificate's CN (``ssl.principal.mapping.rules``);
* ``sasl_ssl``: one ``SASL_SSL`` listener with ``SCRAM-SHA-256``, ``SCRAM-SHA-512`` and ``PLAIN``,
  ``ssl.client.auth=requested`` (a client may show a certificate; the JVM ignores one it cannot verify;
  override it to ``required`` for mutual TLS on top of SASL, as the test cluster does); brokers talk
  to each other with SCRAM-SHA-512 as ``broker``; SCRAM users are created by ``kafka-storage format
  --add-scram`` (passed in a 0600 argument file, not on the command line);
* in both, the KRaft controller listener is TLS with a required client certificate, and ACLs are on
  (``StandardAuthorizer``, ``allow.everyone.if.no.acl.found=false``, ``super.users`` = ``broker``, ``admin``).

The cluster dir gets ``admin.properties`` and ``reader.properties`` (mode 0600), Kafka client.properties
files for ``--command-config``; :data:`READER_ACLS` are what the read-only user is granted after start-up.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.security.jaas import PLAIN_MODULE, SCRAM_MODULE, quote
from kafka_balancer.security.properties import format_properties

MODES = ("plaintext", "ssl", "sasl_ssl")
USERS = ("broker", "admin", "reader")
TLS_DIR = "tls"
CA_NAME = "kafka-balancer local CA"

# (resource type, name, pattern, operation) the read-only user gets: enough to collect, plan, advise and
# stream samples, nothing that changes the cluster or a group.
READER_ACLS: tuple[tuple[str, str, str, str], ...] = (
    ("CLUSTER", "kafka-cluster", "LITERAL", "DESCRIBE"),
    ("CLUSTER", "kafka-cluster", "LITERAL", "DESCRIBE_CONFIGS"),
    ("TOPIC", "*", "LITERAL", "DESCRIBE"),
    ("TOPIC", "*", "LITERAL", "DESCRIBE_CONFIGS"),
    ("TOPIC", "*", "LITERAL", "READ"),
    ("GROUP", "*", "LITERAL", "DESCRIBE"),
)


@dataclass(frozen=True)
class SecretsSet:
    """Random passwords of one secured cluster (never logged)."""

    store: str
    broker: str
    admin: str
    reader: str

    @classmethod
    def new(cls) -> SecretsSet:
        return cls(*(secrets.token_hex(16) for _ in range(4)))

    def __repr__(self) -> str:
        return "SecretsSet(<redacted>)"

    def of(self, user: str) -> str:
        return str(getattr(self, user))


def validate_mode(mode: str) -> str:
    m = mode.strip().lower()
    if m not in MODES:
        raise InputError(f"--security {mode!r} is not a mode", hint="use plaintext (default), ssl or sasl_ssl")
    return m


def _run(cmd: Sequence[str], what: str, env: dict[str, str] | None = None) -> None:
    try:
        res = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False,
                             env={**os.environ, **(env or {})})
    except FileNotFoundError:
        raise ClusterError(f"{what}: `{cmd[0]}` is not installed",
                           hint="install openssl (apt-get install openssl)") from None
    if res.returncode != 0:
        raise ClusterError(f"{what} failed (exit {res.returncode}): "
                           + " | ".join((res.stderr or res.stdout).strip().splitlines()[-2:]))


def make_tls(state_dir: Path, pw: SecretsSet) -> Path:
    """CA, broker and client certificates under ``state_dir/tls`` (0700); returns that folder."""
    d = state_dir / TLS_DIR
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    env = {"KB_STORE_PW": pw.store}
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _run(["openssl", "req", "-x509", *ec, "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"),
          "-days", "30", "-subj", f"/CN={CA_NAME}", "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign"], "creating the local CA")
    ext = d / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n")
    for name in USERS:
        key, csr, crt = d / f"{name}.key", d / f"{name}.csr", d / f"{name}.crt"
        _run(["openssl", "req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={name}"],
             f"creating the {name} key")
        _run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
              "-CAcreateserial", "-out", str(crt), "-days", "30", "-extfile", str(ext)],
             f"signing the {name} certificate")
        _run(["openssl", "pkcs12", "-export", "-in", str(crt), "-inkey", str(key), "-certfile", str(d / "ca.pem"),
              "-name", name, "-out", str(d / f"{name}.p12"), "-passout", "env:KB_STORE_PW"],
             f"writing the {name} PKCS12 store", env)
        # Kafka's PEM key store: encrypted PKCS#8 key, then the certificate chain
        enc = d / f"{name}.key.enc"
        _run(["openssl", "pkcs8", "-topk8", "-in", str(key), "-out", str(enc), "-v2", "aes-256-cbc",
              "-passout", "env:KB_STORE_PW"], f"encrypting the {name} key", env)
        (d / f"{name}.pem").write_text(enc.read_text() + crt.read_text() + (d / "ca.pem").read_text())
        for f in (key, csr, enc):
            f.unlink()
    for f in (d / "ca.key", d / "ca.srl", ext):
        f.unlink(missing_ok=True)  # a throwaway CA signs nothing else
    for f in d.iterdir():
        os.chmod(f, 0o644 if f.name in ("ca.pem",) or f.suffix == ".crt" else 0o600)
    return d


def server_security(mode: str, node_has_controller: bool, tls: Path, pw: SecretsSet) -> dict[str, str]:
    """server.properties entries for ``mode`` (added to and overriding the plaintext ones)."""
    listener = "SSL" if mode == "ssl" else "SASL_SSL"
    props = {
        "listener.security.protocol.map": f"{listener}:{listener},CONTROLLER:SSL",
        "inter.broker.listener.name": listener,
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(tls / "broker.p12"),
        "ssl.keystore.password": pw.store,
        "ssl.key.password": pw.store,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tls / "ca.pem"),
        # for SASL_SSL, Kafka reads only the listener-prefixed setting (KIP-684)
        "ssl.client.auth" if mode == "ssl" else "listener.name.sasl_ssl.ssl.client.auth":
            "required" if mode == "ssl" else "requested",
        "listener.name.controller.ssl.client.auth": "required",
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,DEFAULT",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "false",
        "super.users": "User:broker;User:admin",
    }
    if mode == "sasl_ssl":
        scram_broker = f"{SCRAM_MODULE} required username={quote('broker')} password={quote(pw.broker)};"
        plain_users = " ".join(f"user_{u}={quote(pw.of(u))}" for u in USERS)
        props.update({
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": scram_broker,
            "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": scram_broker,
            "listener.name.sasl_ssl.plain.sasl.jaas.config":
                f"{PLAIN_MODULE} required username={quote('broker')} password={quote(pw.broker)} {plain_users};",
        })
    return props


def scram_arguments(pw: SecretsSet) -> list[str]:
    """``kafka-storage format`` arguments creating the SCRAM users (broker and admin: SHA-512 and SHA-256;
    reader: SHA-256 and SHA-512)."""
    out = []
    for user in USERS:
        for mech in ("SCRAM-SHA-512", "SCRAM-SHA-256"):
            out += ["--add-scram", f"{mech}=[name={user},password={pw.of(user)}]"]
    return out


def client_properties(mode: str, user: str, tls: Path, pw: SecretsSet) -> dict[str, str]:
    """The client.properties of ``user``: its client certificate (a PKCS12 store), trusting the local CA, and
    with ``sasl_ssl`` SCRAM on top (admin SHA-512, reader SHA-256), which then names the principal."""
    props = {"security.protocol": "SSL" if mode == "ssl" else "SASL_SSL",
             "ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls / "ca.pem"),
             "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(tls / f"{user}.p12"),
             "ssl.keystore.password": pw.store}
    if mode == "sasl_ssl":
        mech = "SCRAM-SHA-512" if user == "admin" else "SCRAM-SHA-256"
        props.update({"sasl.mechanism": mech,
                      "sasl.jaas.config": f"{SCRAM_MODULE} required username={quote(user)} "
                                          f"password={quote(pw.of(user))};"})
    return props


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` with mode 0600 from the start (replacing it)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="latin-1") as fh:
        fh.write(text)
    return path


def write_client_files(state_dir: Path, mode: str, tls: Path, pw: SecretsSet) -> dict[str, Path]:
    out = {}
    for user in ("admin", "reader"):
        text = f"# {user} of the local {mode} cluster in {state_dir} (generated; random passwords)\n"
        text += format_properties(client_properties(mode, user, tls, pw))
        out[user] = write_private(state_dir / f"{user}.properties", text)
    return out


def argfile(tokens: Sequence[str]) -> str:
    """A ``java @file`` argument file holding ``tokens`` (each quoted)."""
    return "\n".join('"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"' for t in tokens) + "\n"


def grant_reader_acls(admin: object) -> None:
    """Create :data:`READER_ACLS` for ``User:reader`` with an admin client (idempotent)."""
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePattern,
        ResourceType,
    )

    acls = [ACL("User:reader", "*", ACLOperation[op], ACLPermissionType.ALLOW,
                ResourcePattern(ResourceType[rtype], name, ACLResourcePatternType[pattern]))
            for rtype, name, pattern, op in READER_ACLS]
    res = admin.create_acls(acls)  # type: ignore[attr-defined]
    failed = res.get("failed", []) if isinstance(res, dict) else []
    if failed:
        raise ClusterError(f"creating the read-only user's ACLs failed: {failed[0][1]}")
