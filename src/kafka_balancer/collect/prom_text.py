"""Read the few series the collector needs out of a Prometheus text exposition (JMX exporter ``/metrics``).

    >>> text = '''# HELP process_cpu_seconds_total x
    ... process_cpu_seconds_total 12.5
    ... os_available_processors 2.0
    ... kafka_server_brokertopicmetrics_bytesinpersec_total{topic="orders",} 1.5E7
    ... kafka_server_brokertopicmetrics_messagesinpersec_total{topic="orders"} 300.0
    ... '''
    >>> m = parse_broker_metrics(text)
    >>> m.cpu_seconds, m.cpu_cores, m.topics["orders"]
    (12.5, 2, TopicCounters(bytes_in=15000000.0, bytes_out=0.0, messages_in=300.0))
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_BROKER_TOTALS = {
    "kafka_server_brokertopicmetrics_bytesinpersec_total": "bytes_in",
    "kafka_server_brokertopicmetrics_bytesoutpersec_total": "bytes_out",
    "kafka_server_brokertopicmetrics_replicationbytesinpersec_total": "replication_bytes_in",
    "kafka_server_brokertopicmetrics_replicationbytesoutpersec_total": "replication_bytes_out",
}
_TOPIC_SERIES = {
    "kafka_server_brokertopicmetrics_bytesinpersec_total": "bytes_in",
    "kafka_server_brokertopicmetrics_bytesoutpersec_total": "bytes_out",
    "kafka_server_brokertopicmetrics_messagesinpersec_total": "messages_in",
}


@dataclass(frozen=True)
class TopicCounters:
    bytes_in: float = 0.0
    bytes_out: float = 0.0
    messages_in: float = 0.0


@dataclass
class BrokerMetrics:
    cpu_seconds: float | None = None
    cpu_cores: int | None = None
    topics: dict[str, TopicCounters] = field(default_factory=dict)
    # broker-wide counters (no topic label): bytes_in/out and replication_bytes_in/out
    totals: dict[str, float] = field(default_factory=dict)


def parse_broker_metrics(text: str) -> BrokerMetrics:
    """CPU counter, core count and per-topic BrokerTopicMetrics counters; unknown lines are ignored."""
    out = BrokerMetrics()
    per_topic: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = _LINE.match(line)
        if not m:
            continue
        name, labels, raw = m.group(1), m.group(2) or "", m.group(3)
        try:
            value = float(raw)
        except ValueError:
            continue
        if math.isnan(value):
            continue
        if name == "process_cpu_seconds_total":
            out.cpu_seconds = value
        elif name == "os_available_processors":
            out.cpu_cores = int(value)
        elif name in _TOPIC_SERIES or name in _BROKER_TOTALS:
            topic = dict(_LABEL.findall(labels)).get("topic")
            if topic and name in _TOPIC_SERIES:
                per_topic.setdefault(topic, {})[_TOPIC_SERIES[name]] = value
            elif not topic and name in _BROKER_TOTALS:
                out.totals[_BROKER_TOTALS[name]] = value
    out.topics = {t: TopicCounters(**v) for t, v in sorted(per_topic.items())}
    return out
