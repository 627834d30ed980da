"""Which Prometheus series give which sample field, and how a series is tied to a broker id.

The default mapping (``default_mapping.json`` next to this module, documented in docs/prometheus.md)
lists, per *kind* of series, the metric names the common JMX-exporter rule sets produce; a mapping file
(``--prometheus-mapping FILE``) overrides any part of it: the keys it has replace the default's.

    >>> m = load_mapping(None)
    >>> m.kinds["bytes_in"].metrics[0]
    'kafka_server_brokertopicmetrics_bytesinpersec_total'
    >>> m.broker_of({"pod": "my-cluster-kafka-2", "instance": "10.0.0.7:9404"}, {}, {})
    2
"""

from __future__ import annotations

import re
from collections.abc import Mapping as TMapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from kafka_balancer.errors import InputError

# kind -> (what it gives, essential, per-what)
KINDS: dict[str, tuple[str, bool, str]] = {
    "cpu_seconds": ("broker CPU seconds counter (broker.cpu_seconds)", False, "broker"),
    "cpu_cores": ("broker core count (broker.cpu_cores)", False, "broker"),
    "bytes_in": ("bytes produced per topic and broker (topic_broker.bytes_in)", True, "topic"),
    "bytes_out": ("bytes fetched by consumers per topic and broker (topic_broker.bytes_out)", False, "topic"),
    "messages_in": ("messages produced per topic and broker (topic_broker.messages_in)", False, "topic"),
    "log_size": ("replica size history (replica.size)", False, "replica"),
    "log_end_offset": ("log end offset history (partition.log_end_offset)", True, "replica"),
    "log_start_offset": ("log start offset history (partition.log_start_offset)", False, "replica"),
    "group_committed": ("consumer-group committed offset history (group_offset.committed)", False, "group"),
}


@dataclass(frozen=True)
class Kind:
    name: str
    metrics: tuple[str, ...]
    default: float | None = None  # a constant used when no series exists (cpu_cores only)

    @property
    def essential(self) -> bool:
        return KINDS[self.name][1]

    @property
    def what(self) -> str:
        return KINDS[self.name][0]

    @property
    def per(self) -> str:
        return KINDS[self.name][2]


@dataclass(frozen=True)
class BrokerLabel:
    label: str
    regex: re.Pattern[str]


@dataclass(frozen=True)
class Mapping:
    kinds: dict[str, Kind]
    selector: str  # extra label matchers for every query, e.g. 'job="kafka"'
    broker_labels: tuple[BrokerLabel, ...]
    labels: dict[str, str]  # topic, partition, group, instance -> label name
    source: str  # "default" or the file's path

    def broker_of(self, labels: TMapping[str, str], instances: TMapping[str, int],
                  hosts: TMapping[str, int]) -> int | None:
        """The broker id of a series: its instance among the known exporter endpoints, then the
        mapping's broker-id labels in order, then its instance's host when exactly one broker has it."""
        inst = labels.get(self.labels["instance"], "")
        if inst in instances:
            return instances[inst]
        for bl in self.broker_labels:
            v = labels.get(bl.label)
            if v is not None:
                m = bl.regex.search(v)
                if m:
                    return int(m.group(1))
        host = inst.rsplit(":", 1)[0] if ":" in inst else inst
        return hosts.get(host)


def _fail(source: str, what: str) -> InputError:
    return InputError(f"--prometheus-mapping {source}: {what}",
                      hint="see docs/prometheus.md for the mapping file's keys; the default is "
                      "src/kafka_balancer/collect/prometheus/default_mapping.json")


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise _fail(str(path), f"cannot read it as JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise _fail(str(path), "must be a JSON object")
    return doc


def _default_doc() -> dict[str, Any]:
    text = resources.files("kafka_balancer.collect.prometheus").joinpath("default_mapping.json").read_bytes()
    doc: dict[str, Any] = orjson.loads(text)
    return doc


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """The override's keys replace the base's; ``series`` and ``labels`` merge one level deeper.

        >>> merge({"series": {"a": 1, "b": 2}, "selector": ""}, {"series": {"b": 3}, "selector": "x"})
        {'series': {'a': 1, 'b': 3}, 'selector': 'x'}
    """
    out = dict(base)
    for k, v in override.items():
        if k in ("series", "labels") and isinstance(v, dict) and isinstance(base.get(k), dict):
            out[k] = {**base[k], **v}
        else:
            out[k] = v
    return out


_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def parse_mapping(doc: dict[str, Any], source: str) -> Mapping:
    unknown = set(doc) - {"about", "selector", "broker_id_labels", "series", "labels"}
    if unknown:
        raise _fail(source, f"unknown key {sorted(unknown)[0]!r}")
    series = doc.get("series", {})
    if not isinstance(series, dict):
        raise _fail(source, "'series' must be an object of kind -> {\"metrics\": [...]}")
    kinds: dict[str, Kind] = {}
    for name, spec in series.items():
        if name not in KINDS:
            raise _fail(source, f"unknown series kind {name!r}; kinds are {', '.join(KINDS)}")
        if not isinstance(spec, dict) or not isinstance(spec.get("metrics", []), list):
            raise _fail(source, f"series {name}: expected {{\"metrics\": [names...]}}")
        metrics = tuple(spec.get("metrics", []))
        for m in metrics:
            if not isinstance(m, str) or not _NAME.match(m):
                raise _fail(source, f"series {name}: {m!r} is not a Prometheus metric name")
        default = spec.get("default")
        if default is not None and (isinstance(default, bool) or not isinstance(default, int | float)
                                    or default <= 0):
            raise _fail(source, f"series {name}: default must be a positive number or null, got {default!r}")
        kinds[name] = Kind(name, metrics, float(default) if default is not None else None)
    for name in KINDS:
        kinds.setdefault(name, Kind(name, ()))
    selector = doc.get("selector", "")
    if not isinstance(selector, str) or any(c in selector for c in "{}"):
        raise _fail(source, f"'selector' must be label matchers without braces, e.g. job=\"kafka\"; got {selector!r}")
    blabels: list[BrokerLabel] = []
    for i, bl in enumerate(doc.get("broker_id_labels", [])):
        if not isinstance(bl, dict) or not isinstance(bl.get("label"), str) or not isinstance(bl.get("regex"), str):
            raise _fail(source, f"broker_id_labels[{i}]: expected {{\"label\": ..., \"regex\": ...}}")
        try:
            rx = re.compile(bl["regex"])
        except re.error as exc:
            raise _fail(source, f"broker_id_labels[{i}]: bad regex {bl['regex']!r} ({exc})") from None
        if rx.groups < 1:
            raise _fail(source, f"broker_id_labels[{i}]: regex {bl['regex']!r} needs a group capturing the id")
        blabels.append(BrokerLabel(bl["label"], rx))
    labels = {"topic": "topic", "partition": "partition", "group": "consumergroup", "instance": "instance"}
    given = doc.get("labels", {})
    if not isinstance(given, dict) or set(given) - set(labels) or not all(isinstance(v, str) for v in given.values()):
        raise _fail(source, f"'labels' must map some of {', '.join(labels)} to label names")
    labels.update(given)
    return Mapping(kinds, selector.strip(), tuple(blabels), labels, source)


def load_mapping(path: Path | None) -> Mapping:
    """The default mapping, with ``path``'s keys on top when given."""
    doc = _default_doc()
    if path is None:
        return parse_mapping(doc, "default")
    return parse_mapping(merge(doc, _read(path)), str(path))
