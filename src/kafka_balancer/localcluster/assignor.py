"""``local-cluster up --assignor``: the brokers run our server-side consumer assignor (KIP-848).

The plugin jar (artifact set ``assignor``) joins the brokers' classpath and ``group.consumer.assignors``
lists Kafka's two built-in assignors by their short names (``uniform``, the default because it comes
first, and ``range``) plus ours, so a client picks one with ``group.remote.assignor``. The setting is
stored with the cluster's spec, so a restarted broker keeps it.

    >>> dict(ASSIGNOR_OVERRIDES)["group.consumer.assignors"].split(",")[:2]
    ['uniform', 'range']
    >>> uses_plugin(ClusterSpec(overrides=ASSIGNOR_OVERRIDES))
    True
"""

from __future__ import annotations

from pathlib import Path

from kafka_balancer.localcluster.spec import ClusterSpec

ASSIGNOR_CLASS = "io.github.kafkabalancer.assignor.KafkaBalancerAssignor"
ASSIGNORS_KEY = "group.consumer.assignors"
ASSIGNOR_OVERRIDES: tuple[tuple[str, str], ...] = ((ASSIGNORS_KEY, f"uniform,range,{ASSIGNOR_CLASS}"),)

# Faster failure detection for consumer-protocol groups (Kafka's defaults: 45 s session, 5 s heartbeat,
# and the same as minimums). Used by the test fixture and the benchmarks, not by `--assignor` itself.
FAST_CONSUMER_GROUP_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("group.consumer.min.session.timeout.ms", "6000"),
    ("group.consumer.session.timeout.ms", "10000"),
    ("group.consumer.min.heartbeat.interval.ms", "500"),
    ("group.consumer.heartbeat.interval.ms", "1000"),
)


def uses_plugin(spec: ClusterSpec) -> bool:
    """True when the spec's ``group.consumer.assignors`` names our class."""
    return any(k == ASSIGNORS_KEY and ASSIGNOR_CLASS in v for k, v in spec.overrides)


def plugin_classpath(spec: ClusterSpec) -> list[Path]:
    """The plugin's jars when the spec uses it (InputError with a setup hint if not built), else []."""
    if not uses_plugin(spec):
        return []
    from kafka_balancer.jvm.artifacts import set_jars

    return set_jars("assignor")


def with_assignor(spec: ClusterSpec) -> ClusterSpec:
    """The spec with our assignor's broker settings added (later entries win over earlier ones)."""
    from dataclasses import replace

    return replace(spec, overrides=(*spec.overrides, *ASSIGNOR_OVERRIDES))
