"""Why a secured connection fails, in one line: a TLS probe, and kafka-python's bootstrap failures.

kafka-python retries a failed bootstrap until its timeout and then says only "Unable to bootstrap".
So before the client starts, :func:`tls_probe` opens one TLS connection to a bootstrap server with the
same context and sends an ``ApiVersions`` request (allowed before SASL): an untrusted certificate, a
host name the certificate does not list, a required client certificate, or a listener that does not
speak TLS become an :class:`InputError` at once. For SASL, :class:`FailureLog` keeps what kafka-python
logs about each failed attempt, and :func:`sasl_failure` turns a rejected password or mechanism into an
:class:`InputError`.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager

from kafka_balancer.errors import InputError
from kafka_balancer.security.settings import SecuritySettings


def _hosts(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for part in bootstrap.split(","):
        host, _, port = part.strip().rpartition(":")
        out.append((host.strip("[]"), int(port)))
    return out


def _tls_error(exc: ssl.SSLError, host: str, port: int, settings: SecuritySettings) -> InputError:
    where = f"{host}:{port}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = exc.verify_message or str(exc)
        if "mismatch" in reason.lower():
            return InputError(
                f"TLS: the broker certificate at {where} does not name {host!r} ({reason})",
                hint="connect with a host name the certificate lists (its SAN), or have the broker's certificate "
                "reissued; an empty ssl.endpoint.identification.algorithm= disables the check (not advised)")
        return InputError(
            f"TLS: the broker certificate at {where} is not trusted ({reason})",
            hint="set ssl.truststore.location (and ssl.truststore.type) to the CA that signed the brokers' "
            "certificates")
    text = f"{exc.reason or ''} {exc}".lower()
    refused = any(a in text for a in ("certificate required", "bad certificate", "certificate unknown",
                                      "handshake failure", "unknown ca"))
    if refused and settings.keystore is None:
        return InputError(f"TLS: the broker at {where} requires a client certificate (mutual TLS)",
                          hint="set ssl.keystore.location (and ssl.keystore.type/password) to your client "
                          "certificate and key")
    if refused:
        return InputError(f"TLS: the broker at {where} rejected our client certificate ({exc.reason})",
                          hint="use a client certificate signed by a CA the brokers trust")
    if isinstance(exc, ssl.SSLEOFError) or any(
            m in text for m in ("wrong version number", "record layer failure", "packet length", "eof")):
        return InputError(f"TLS: {where} does not speak TLS or closed the handshake "
                          f"(security.protocol={settings.protocol})",
                          hint="this listener may be PLAINTEXT or SASL_PLAINTEXT; check the port and "
                          "security.protocol")
    return InputError(f"TLS handshake with {where} failed: {exc.reason or exc}",
                      hint="check ssl.* settings against the broker's listener")


def _frame(api_key: int, version: int, corr: int, body: bytes) -> bytes:
    msg = struct.pack(">hhih", api_key, version, corr, 8) + b"kb-probe" + body
    return struct.pack(">i", len(msg)) + msg


def _read_frame(sock: socket.socket) -> bytes:
    def exact(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return buf

    (size,) = struct.unpack(">i", exact(4))
    return exact(size)[4:]  # drop the correlation id


def _string(b: bytes, at: int) -> tuple[str | None, int]:
    (n,) = struct.unpack_from(">h", b, at)
    if n < 0:
        return None, at + 2
    return b[at + 2:at + 2 + n].decode(errors="replace"), at + 2 + n


def _sasl_exchange(sock: socket.socket, settings: SecuritySettings, host: str, where: str) -> None:
    """SaslHandshake v1 and SaslAuthenticate v1 with kafka-python's own mechanism (PLAIN or SCRAM)."""
    from kafka.net.sasl import get_sasl_mechanism

    from kafka_balancer.security.clients import kafka_kwargs

    mech = settings.mechanism or ""
    name = mech.encode()
    sock.sendall(_frame(17, 1, 1, struct.pack(">h", len(name)) + name))
    resp = _read_frame(sock)
    (err,) = struct.unpack_from(">h", resp, 0)
    (count,) = struct.unpack_from(">i", resp, 2)
    at, offered = 6, []
    for _ in range(max(count, 0)):
        m, at = _string(resp, at)
        offered.append(m or "")
    if err != 0 or mech not in offered:
        raise InputError(f"SASL: the broker at {where} does not enable sasl.mechanism={mech} "
                         f"(it offers {', '.join(offered) or 'none'})",
                         hint="set sasl.mechanism to one the brokers offer")
    kw = {k: v for k, v in kafka_kwargs(settings).items() if k != "ssl_context"}
    mechanism = get_sasl_mechanism(mech)(host=host, **kw)
    corr = 2
    while not mechanism.is_done():
        token = mechanism.auth_bytes()
        sock.sendall(_frame(36, 1, corr, struct.pack(">i", len(token)) + token))
        corr += 1
        resp = _read_frame(sock)
        (err,) = struct.unpack_from(">h", resp, 0)
        message, at = _string(resp, 2)
        if err != 0:
            raise InputError(
                f"SASL authentication failed for {settings.who} at {where}"
                + (f": {message}" if message else ""),
                hint="check username=\"...\" password=\"...\" in sasl.jaas.config, and that the user has "
                "credentials for this mechanism")
        (n,) = struct.unpack_from(">i", resp, at)
        try:
            mechanism.receive(resp[at + 4:at + 4 + max(n, 0)])
        except ValueError:
            raise InputError(f"SASL: the broker at {where} failed to prove it knows {settings.who}'s "
                             "credentials (SCRAM server signature)", hint="check --bootstrap") from None


def connection_probe(settings: SecuritySettings, ctx: ssl.SSLContext | None, bootstrap: str,
                     timeout_s: float) -> None:
    """One connection to the first bootstrap server that accepts it: the TLS handshake (``ctx``), then the
    SASL exchange, or an ApiVersions round trip without SASL. A TLS or SASL problem raises
    :class:`InputError` at once; unreachable or silent servers are left to the client and its timeout."""
    deadline = time.monotonic() + timeout_s
    for host, port in _hosts(bootstrap):
        left = deadline - time.monotonic()
        if left <= 0:
            return
        where = f"{host}:{port}"
        try:
            raw = socket.create_connection((host, port), timeout=min(left, 5.0))
        except OSError:
            continue
        try:
            sock: socket.socket = raw
            if ctx is not None:
                sock = ctx.wrap_socket(raw, server_hostname=host)
            sock.settimeout(max(0.5, min(deadline - time.monotonic(), 5.0)))
            if settings.uses_sasl:
                _sasl_exchange(sock, settings, host, where)
            else:
                sock.sendall(_frame(18, 0, 1, b""))
                _read_frame(sock)
            sock.close()
            return
        except ssl.SSLError as exc:
            raise _tls_error(exc, host, port, settings) from None
        except (TimeoutError, ConnectionError, OSError, struct.error):
            return  # no (clear) answer in time: the client's own attempts and timeout will say so
        finally:
            raw.close()


class FailureLog(logging.Handler):
    """Collects kafka-python's warnings while it bootstraps (instead of printing them)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # a record that cannot be formatted is not evidence
            self.messages.append(record.getMessage())


@contextmanager
def capture_kafka_failures() -> Iterator[FailureLog]:
    """Route the ``kafka`` logger's warnings to a :class:`FailureLog` only, for the duration."""
    logger = logging.getLogger("kafka")
    handler = FailureLog()
    old_level, old_propagate, old_disabled = logger.level, logger.propagate, logger.disabled
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    logger.disabled = False
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate
        logger.disabled = old_disabled


def sasl_failure(messages: list[str], settings: SecuritySettings) -> InputError | None:
    """The SASL problem behind failed bootstrap attempts, if that is what they show."""
    for m in reversed(messages):
        if "UnsupportedSaslMechanismError" in m or ("does not support" in m and "sasl mechanism" in m):
            enabled = m.split("Enabled mechanisms:", 1)[-1].strip() if "Enabled mechanisms:" in m else "?"
            return InputError(f"SASL: the brokers do not enable sasl.mechanism={settings.mechanism} "
                              f"(they offer {enabled})", hint="set sasl.mechanism to one the brokers offer")
        if "SaslAuthenticationFailedError" in m or "Authentication failed" in m:
            return InputError(f"SASL authentication failed for {settings.who}: wrong username or password, "
                              "or the user does not exist for this mechanism",
                              hint="check username=\"...\" password=\"...\" in sasl.jaas.config and the "
                              "mechanism the user's credentials were created for")
        if "IllegalSaslStateError" in m:
            return InputError(f"SASL handshake refused for {settings.who}",
                              hint="the listener may not be SASL; check security.protocol and the port")
    return None


def definitive(messages: list[str]) -> bool:
    """Whether the captured messages show a failure retrying cannot fix (credentials, mechanism)."""
    return any(s in m for m in messages for s in ("SaslAuthenticationFailedError", "Authentication failed",
                                                   "UnsupportedSaslMechanismError", "IllegalSaslStateError"))
