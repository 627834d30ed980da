"""The balancer's own Prometheus metrics, read from the service at each scrape (prometheus_client).

``kafka_balancer_sigma{resource}``, ``kafka_balancer_eta``, ``kafka_balancer_utilisation{broker,resource}``,
``kafka_balancer_anomalies{type,state}``, ``kafka_balancer_executions_total{state}``,
``kafka_balancer_bytes_moved_total``, ``kafka_balancer_execution_running``, ``kafka_balancer_paused``,
``kafka_balancer_under_replicated_partitions``, ``kafka_balancer_sampling_rounds_total``,
``kafka_balancer_broker_history{broker,kind}`` (1 for each broker removed or demoted through the API that
every plan keeps so: an alert can ask why a broker is still demoted a week later).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from kafka_balancer.model.snapshot import RESOURCES
from kafka_balancer.serve.anomaly import AnomalyState
from kafka_balancer.serve.config import ANOMALY_TYPES

if TYPE_CHECKING:
    from kafka_balancer.serve.service import Service

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class ServiceCollector(Collector):
    def __init__(self, service: Service) -> None:
        self.service = service

    def collect(self) -> Iterator[Metric]:
        s = self.service
        with s.lock:
            m = s.model.metrics
            snap = s.model.snap
            anomalies = list(s.book.by_id.values())
            execs = list(s.executions.values())
            obs = s.obs
            paused = s.paused
            rounds = s.rounds
        sigma = GaugeMetricFamily("kafka_balancer_sigma", "σ of broker utilisation shares (seed 001)",
                                  labels=["resource"])
        util = GaugeMetricFamily("kafka_balancer_utilisation", "broker utilisation B(j) in the load model",
                                 labels=["broker", "resource"])
        if m is not None and snap is not None:
            for r in RESOURCES:
                sigma.add_metric([r], m.resources[r].sigma)
            live = [int(b) for i, b in enumerate(snap.broker_ids) if snap.alive[i]]
            for r in RESOURCES:
                for b, u in zip(live, m.resources[r].util, strict=True):
                    util.add_metric([str(b), r], float(u))
            yield GaugeMetricFamily("kafka_balancer_eta", "η = ε / live brokers", value=m.eta)
        yield sigma
        yield util
        counts = Counter((a.type, a.state.value) for a in anomalies)
        an = GaugeMetricFamily("kafka_balancer_anomalies", "anomalies kept, by type and state",
                               labels=["type", "state"])
        for t in ANOMALY_TYPES:
            for ast in AnomalyState:
                an.add_metric([t, ast.value], counts.get((t, ast.value), 0))
        yield an
        ex = CounterMetricFamily("kafka_balancer_executions", "executions by state", labels=["state"])
        for st, n in sorted(Counter(str(e.get("state")) for e in execs).items()):
            ex.add_metric([st], n)
        yield ex
        yield CounterMetricFamily("kafka_balancer_bytes_moved", "bytes moved by finished executions",
                                  value=sum(float(e.get("bytes_moved") or 0) for e in execs))
        yield GaugeMetricFamily("kafka_balancer_execution_running", "1 while an execution runs",
                                value=1.0 if s.runner.busy else 0.0)
        yield GaugeMetricFamily("kafka_balancer_paused", "1 while self-healing is paused", value=1.0 if paused else 0.0)
        yield GaugeMetricFamily("kafka_balancer_under_replicated_partitions", "partitions with ISR < replicas",
                                value=len(obs.under_replicated()) if obs else 0)
        yield CounterMetricFamily("kafka_balancer_sampling_rounds", "sampling rounds taken", value=rounds)
        held = GaugeMetricFamily("kafka_balancer_broker_history", "1 per broker kept removed or demoted by every "
                                 "plan (serve/broker_history.py)", labels=["broker", "kind"])
        for e in s.history.listing(time.time()):
            held.add_metric([str(e["broker"]), e["kind"]], 1.0)
        yield held


def metrics_text(service: Service) -> tuple[bytes, str]:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ServiceCollector(service))
    return generate_latest(reg), CONTENT_TYPE
