"""Security settings turned into what each kind of client takes.

* :func:`kafka_kwargs`: kafka-python 3.x keyword arguments (``security_protocol``, ``ssl_context``,
  ``sasl_mechanism``, ``sasl_plain_username``/``sasl_plain_password``) for admin clients, consumers and
  producers. The password is a ``str`` whose ``repr`` is redacted, because kafka-python logs its whole
  configuration at DEBUG level.
* :func:`spark_options`: the Spark Kafka source's ``kafka.*`` options (the JVM client reads PEM, PKCS12
  and JKS stores itself).
* :func:`java_properties`: the same settings as a properties text for a Kafka tool (``--command-config``);
  :func:`write_java_properties` writes it readable by its owner only.
"""

from __future__ import annotations

import functools
import os
import ssl
from pathlib import Path
from typing import Any

from kafka_balancer.security.properties import format_properties
from kafka_balancer.security.settings import Secret, SecuritySettings


class RedactedStr(str):
    """A ``str`` that shows as ``'<redacted>'`` in ``repr`` (so in logged dicts); its value is intact."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'<redacted>'"


@functools.lru_cache(maxsize=16)
def _context(settings: SecuritySettings) -> ssl.SSLContext:
    from kafka_balancer.security.tls import ssl_context

    return ssl_context(settings)


def kafka_kwargs(settings: SecuritySettings | None) -> dict[str, Any]:
    """kafka-python keyword arguments for ``settings`` (empty for plaintext)."""
    if settings is None or settings.protocol == "PLAINTEXT":
        return {}
    out: dict[str, Any] = {"security_protocol": settings.protocol}
    if settings.uses_tls:
        out["ssl_context"] = _context(settings)
        out["ssl_check_hostname"] = settings.check_hostname
    if settings.uses_sasl:
        assert settings.password is not None
        out["sasl_mechanism"] = settings.mechanism
        out["sasl_plain_username"] = settings.username
        out["sasl_plain_password"] = RedactedStr(settings.password.reveal())
    return out


def _plain(settings: SecuritySettings) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in settings.properties:
        value = v.reveal() if isinstance(v, Secret) else v
        if k.endswith(".location") and value.strip():
            value = str(Path(value.strip()).expanduser().resolve())  # the JVM may run in another directory
        out[k] = value
    return out


def spark_options(settings: SecuritySettings | None) -> dict[str, str]:
    """``kafka.<property>`` options for ``spark.readStream.format("kafka")`` (empty for plaintext)."""
    if settings is None or not settings.properties:
        return {}
    return {f"kafka.{k}": v for k, v in _plain(settings).items()}


def java_properties(settings: SecuritySettings) -> str:
    """A client.properties text for a JVM Kafka client; it holds the secrets, so write it privately."""
    return format_properties(_plain(settings))


def write_java_properties(settings: SecuritySettings, path: Path) -> Path:
    """Write :func:`java_properties` to ``path`` with mode 0600 (replacing it)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="latin-1", errors="backslashreplace") as fh:
        fh.write(java_properties(settings))
    return path
