"""Opening a kafka-python client on a secured cluster, with one-line errors within the timeout.

:func:`open_secured` first probes TLS (:func:`.probe.connection_probe`), then lets the client bootstrap in
attempts of growing length (3 s, 6 s, ... up to what is left of the timeout), keeping kafka-python's
failure messages: a rejected password or mechanism stops at the first attempt that shows it, instead
of being retried until the timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from kafka_balancer.errors import ClusterError
from kafka_balancer.security.clients import kafka_kwargs
from kafka_balancer.security.probe import capture_kafka_failures, connection_probe, definitive, sasl_failure
from kafka_balancer.security.settings import SecuritySettings

T = TypeVar("T")
FIRST_ATTEMPT_S = 3.0


def open_secured(make: Callable[[dict[str, Any], int], T], bootstrap: str, timeout_s: float,
                 settings: SecuritySettings) -> T:
    """``make(security_kwargs, bootstrap_timeout_ms)`` builds the client; errors become one line."""
    from kafka.errors import KafkaError

    kwargs = kafka_kwargs(settings)  # loads stores and keys: InputError on a bad one
    deadline = time.monotonic() + timeout_s
    connection_probe(settings, kwargs.get("ssl_context"), bootstrap, timeout_s)
    attempt = FIRST_ATTEMPT_S
    while True:
        left = deadline - time.monotonic()
        this = max(0.5, min(left, attempt))
        with capture_kafka_failures() as failures:
            try:
                return make(kwargs, int(this * 1000))
            except (KafkaError, OSError) as exc:
                error: Exception = exc
        if settings.uses_sasl:
            bad = sasl_failure(failures.messages, settings)
            if bad is not None and (definitive(failures.messages) or left - this <= 0.05):
                raise bad from None
        if deadline - time.monotonic() <= 0.05:
            raise ClusterError(
                f"cannot reach Kafka at {bootstrap} within {timeout_s:g} s as {settings.who} over "
                f"{settings.protocol} ({type(error).__name__})",
                hint="check --bootstrap host:port, that the brokers run, and that the port is the "
                f"{settings.protocol} listener") from None
        attempt *= 2
