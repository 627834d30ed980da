"""Typed security settings read from a Kafka ``client.properties`` (``--command-config FILE``).

    >>> s = settings_from_properties({
    ...     "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
    ...     "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
    ...                         'username="admin" password="s3cr3t";'})
    >>> s.protocol, s.mechanism, s.username, s.check_hostname
    ('SASL_SSL', 'SCRAM-SHA-512', 'admin', True)
    >>> "s3cr3t" in repr(s) or "s3cr3t" in str(s)
    False

Secrets (passwords, inline keys, the JAAS line) are :class:`Secret` values: their ``repr`` and ``str`` are
``<redacted>``, so a settings object can be printed or logged without leaking them. Only the client
builders in :mod:`.clients` and :mod:`.tls` call :meth:`Secret.reveal`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafka_balancer.errors import InputError
from kafka_balancer.security.jaas import PLAIN_MODULE, SCRAM_MODULE, JaasSyntaxError, parse_jaas
from kafka_balancer.security.properties import (
    PropertiesSyntaxError,
    key_lines,
    parse_properties,
    read_properties_bytes,
)

Bad = Callable[[str | None, str, str], InputError]
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
STORE_TYPES = ("PEM", "PKCS12", "JKS")
TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")

SUPPORTED = frozenset({
    "security.protocol", "sasl.mechanism", "sasl.jaas.config",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.key", "ssl.keystore.certificate.chain",
    "ssl.endpoint.identification.algorithm", "ssl.protocol", "ssl.enabled.protocols",
})
# Client tuning keys a Kafka tool's client.properties often carries. They change neither who we are nor
# whom we trust; our Python clients use their own timeouts, and the JVM consumers (Spark) get them as given.
IGNORED = frozenset({
    "client.id", "client.dns.lookup", "request.timeout.ms", "default.api.timeout.ms", "retries",
    "retry.backoff.ms", "retry.backoff.max.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "connections.max.idle.ms", "metadata.max.age.ms", "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
})
SECRET_KEYS = frozenset({
    "sasl.jaas.config", "ssl.truststore.password", "ssl.keystore.password", "ssl.key.password", "ssl.keystore.key",
})


class Secret:
    """A secret string: shown as ``<redacted>``; :meth:`reveal` gives the value to the code that needs it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<redacted>"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


@dataclass(frozen=True)
class TrustStore:
    """Whom we trust: a CA file or store, or inline PEM certificates (public, not secret)."""

    type: str
    location: Path | None = None
    password: Secret | None = None
    certificates: str | None = None


@dataclass(frozen=True)
class KeyStore:
    """Our client certificate and key (mutual TLS): a store file, or an inline PEM key and chain."""

    type: str
    location: Path | None = None
    password: Secret | None = None
    key_password: Secret | None = None
    key: Secret | None = None
    certificate_chain: str | None = None


@dataclass(frozen=True)
class SecuritySettings:
    """Everything our clients need to connect to a secured cluster. ``PLAINTEXT`` is the default."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: Secret | None = None
    truststore: TrustStore | None = None
    keystore: KeyStore | None = None
    check_hostname: bool = True
    tls_versions: tuple[str, ...] = TLS_VERSIONS
    source: Path | None = None
    # every property as given, secrets wrapped; for JVM clients (Spark, Kafka tools) that read them natively
    properties: tuple[tuple[str, str | Secret], ...] = field(default=(), repr=False)

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def who(self) -> str:
        """The identity for messages: ``user 'admin' (SCRAM-SHA-512)``, ``the client certificate``, or anonymous."""
        if self.uses_sasl:
            return f"user {self.username!r} ({self.mechanism})"
        if self.keystore is not None:
            return "the client certificate"
        return "an anonymous client"

    def describe(self) -> str:
        """One line for progress output; never a secret."""
        parts = [self.protocol]
        if self.uses_sasl:
            parts.append(f"{self.mechanism} as {self.username}")
        if self.uses_tls:
            parts.append(f"trust {self.truststore.type if self.truststore else 'system CAs'}")
            if self.keystore is not None:
                parts.append(f"client certificate ({self.keystore.type})")
            if not self.check_hostname:
                parts.append("hostname verification OFF")
        return ", ".join(parts)


PLAINTEXT = SecuritySettings()


def _where(source: Path | None, lines: dict[str, int], key: str | None = None) -> str:
    if source is None:
        return "client properties" + (f": {key}" if key else "")
    line = f" line {lines[key]}" if key and key in lines else ""
    return f"{source}{line}" + (f": {key}" if key else "")


def settings_from_properties(props: dict[str, str], source: Path | None = None,
                             lines: dict[str, int] | None = None) -> SecuritySettings:
    """Validate ``props`` and build the settings; :class:`InputError` names the first bad property."""
    lines = lines or {}

    def bad(key: str | None, message: str, hint: str) -> InputError:
        return InputError(f"{_where(source, lines, key)}: {message}", hint=hint)

    for key in props:
        if key not in SUPPORTED and key not in IGNORED:
            return_hint = ("supported: security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.*, "
                           "ssl.keystore.*, ssl.key.password, ssl.endpoint.identification.algorithm, "
                           "ssl.protocol, ssl.enabled.protocols (docs/security.md); remove the line")
            if key.startswith("sasl.") or key.startswith("ssl.") or key == "security.providers":
                raise bad(key, "this property is not supported", return_hint)
            raise bad(key, "unknown or unsupported property", return_hint)

    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise bad("security.protocol", f"{props['security.protocol']!r} is not a security protocol",
                  "use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL")
    sasl = protocol.startswith("SASL_")
    tls = protocol.endswith("SSL")

    mechanism = username = None
    password = None
    if sasl:
        mechanism = props.get("sasl.mechanism", "").strip().upper() or None
        if mechanism is None:
            raise bad(None, f"security.protocol={protocol} needs sasl.mechanism (Kafka's default, GSSAPI, "
                      "is not supported)", "add sasl.mechanism=SCRAM-SHA-512 (or SCRAM-SHA-256, PLAIN)")
        if mechanism not in MECHANISMS:
            raise bad("sasl.mechanism", f"mechanism {props['sasl.mechanism'].strip()!r} is not supported",
                      "use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (GSSAPI, OAUTHBEARER are not supported)")
        jaas_text = props.get("sasl.jaas.config")
        if not jaas_text:
            raise bad(None, f"security.protocol={protocol} needs sasl.jaas.config",
                      'e.g. sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                      'username="alice" password="...";')
        try:
            jaas = parse_jaas(jaas_text)
        except JaasSyntaxError as exc:
            raise bad("sasl.jaas.config", f"does not parse: {exc}",
                      'write it as Kafka does: <LoginModule class> required username="..." password="...";') \
                from None
        want = PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE
        if jaas.module != want:
            raise bad("sasl.jaas.config", f"login module {jaas.module} does not go with sasl.mechanism={mechanism}",
                      f"sasl.mechanism={mechanism} takes {want}")
        unknown = sorted(set(jaas.options) - {"username", "password"})
        if unknown:
            raise bad("sasl.jaas.config", f"option(s) {', '.join(unknown)} are not supported",
                      "give only username=\"...\" and password=\"...\"")
        if not jaas.options.get("username") or "password" not in jaas.options:
            raise bad("sasl.jaas.config", "needs both username=\"...\" and password=\"...\"",
                      'e.g. ... required username="alice" password="...";')
        username = jaas.options["username"]
        password = Secret(jaas.options["password"])
    elif "sasl.mechanism" in props and props["sasl.mechanism"].strip().upper() not in MECHANISMS:
        raise bad("sasl.mechanism", f"mechanism {props['sasl.mechanism'].strip()!r} is not supported",
                  "use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")

    truststore = keystore = None
    check_hostname = True
    versions: tuple[str, ...] = TLS_VERSIONS
    if tls:
        truststore = _truststore(props, bad)
        keystore = _keystore(props, bad)
        alg = props.get("ssl.endpoint.identification.algorithm", "https").strip()
        if alg.lower() not in ("https", ""):
            raise bad("ssl.endpoint.identification.algorithm", f"{alg!r} is not supported",
                      "use https (the default: the certificate must name the host) or leave it empty to disable")
        check_hostname = alg != ""
        versions = _versions(props, bad)

    wrapped: list[tuple[str, str | Secret]] = [(k, Secret(v) if k in SECRET_KEYS else v) for k, v in props.items()]
    return SecuritySettings(protocol, mechanism, username, password, truststore, keystore, check_hostname,
                            versions, source, tuple(wrapped))


def _store_type(props: dict[str, str], key: str, bad: Bad) -> str:
    t = props.get(key, "JKS").strip().upper()
    if t not in STORE_TYPES:
        raise bad(key, f"store type {props[key].strip()!r} is not supported",
                  "use PEM, PKCS12 or JKS")
    return t


def _file(props: dict[str, str], key: str, bad: Bad) -> Path | None:
    loc = props.get(key, "").strip()
    if not loc:
        return None
    p = Path(loc).expanduser()  # a relative path is taken from the working directory, as Kafka's tools do
    try:
        with p.open("rb"):
            pass
    except OSError as exc:
        raise bad(key, f"cannot read {p} ({exc.strerror})",
                  "check the path and that this user may read it") from None
    return p


def _truststore(props: dict[str, str], bad: Bad) -> TrustStore | None:
    loc = _file(props, "ssl.truststore.location", bad)
    certs = props.get("ssl.truststore.certificates", "").strip() or None
    if loc is None and certs is None:
        return None  # the system's CAs, as a JVM would use its cacerts
    t = _store_type(props, "ssl.truststore.type", bad)
    if certs is not None and t != "PEM":
        raise bad("ssl.truststore.certificates", "inline certificates need ssl.truststore.type=PEM",
                  "add ssl.truststore.type=PEM")
    if loc is not None and certs is not None:
        raise bad("ssl.truststore.certificates", "give ssl.truststore.location or inline certificates, not both",
                  "remove one of the two")
    pw = props.get("ssl.truststore.password")
    return TrustStore(t, loc, Secret(pw) if pw else None, certs)


def _keystore(props: dict[str, str], bad: Bad) -> KeyStore | None:
    loc = _file(props, "ssl.keystore.location", bad)
    key = props.get("ssl.keystore.key", "").strip() or None
    chain = props.get("ssl.keystore.certificate.chain", "").strip() or None
    if loc is None and key is None and chain is None:
        return None
    t = _store_type(props, "ssl.keystore.type", bad)
    if (key is None) != (chain is None):
        raise bad("ssl.keystore.key" if key is None else "ssl.keystore.certificate.chain",
                  "an inline client key needs both ssl.keystore.key and ssl.keystore.certificate.chain",
                  "give both (PEM), or ssl.keystore.location instead")
    if key is not None and t != "PEM":
        raise bad("ssl.keystore.key", "an inline key needs ssl.keystore.type=PEM", "add ssl.keystore.type=PEM")
    if loc is not None and key is not None:
        raise bad("ssl.keystore.key", "give ssl.keystore.location or an inline key, not both", "remove one")
    if t in ("PKCS12", "JKS") and not props.get("ssl.keystore.password"):
        raise bad("ssl.keystore.password", f"a {t} key store needs its password", "add ssl.keystore.password=...")
    spw, kpw = props.get("ssl.keystore.password"), props.get("ssl.key.password")
    return KeyStore(t, loc, Secret(spw) if spw else None, Secret(kpw) if kpw else None,
                    Secret(key) if key else None, chain)


def _versions(props: dict[str, str], bad: Bad) -> tuple[str, ...]:
    enabled = props.get("ssl.enabled.protocols")
    if enabled is None:
        proto = props.get("ssl.protocol", "TLSv1.3").strip()
        if proto not in ("TLS", "TLSv1.2", "TLSv1.3"):
            raise bad("ssl.protocol", f"{proto!r} is not supported", "use TLSv1.3 (default), TLSv1.2 or TLS")
        return TLS_VERSIONS  # as in Kafka, TLSv1.3 preferred and TLSv1.2 accepted
    out = tuple(v.strip() for v in enabled.split(",") if v.strip())
    wrong = [v for v in out if v not in TLS_VERSIONS]
    if wrong or not out:
        raise bad("ssl.enabled.protocols", f"{', '.join(wrong) or 'empty'}: only TLSv1.2 and TLSv1.3 are supported",
                  "e.g. ssl.enabled.protocols=TLSv1.2,TLSv1.3")
    return out


def load_settings(path: str | os.PathLike[str], flag: str = "--command-config") -> SecuritySettings:
    """Read and validate a client.properties file; every problem is one :class:`InputError` line."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError:
        st = None  # reported by the read below, in its words
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        # a named pipe would be waited on for ever, a device read as the settings
        raise InputError(f"{flag} {p} is not a regular file (a named pipe, device or socket)",
                         hint="give the client.properties file")
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise InputError(f"{flag} {p} is a directory", hint="give the client.properties file") from None
    except OSError as exc:
        raise InputError(f"{flag} {p}: cannot read it ({exc.strerror})",
                         hint="check the path and that this user may read the file") from None
    text = read_properties_bytes(data)
    try:
        props = parse_properties(text)
    except PropertiesSyntaxError as exc:
        raise InputError(f"{flag} {p} {exc}", hint="write \\u followed by four hex digits, or \\\\") from None
    return settings_from_properties(props, p, key_lines(text))
