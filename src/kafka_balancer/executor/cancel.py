"""Undo what an execution left running: cancel its in-flight reassignments and clear the throttle.

With a journal, only that execution's partitions and the throttle it recorded are touched. Without
one, every ongoing reassignment is cancelled and throttle configs are removed wherever they are set.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_balancer.executor.journal import Journal
from kafka_balancer.executor.kafka_adapter import KafkaAdapter
from kafka_balancer.executor.throttle import ThrottleConfigs
from kafka_balancer.executor.view import TP


@dataclass(frozen=True)
class CancelResult:
    cancelled: list[TP]
    refused: dict[TP, str]
    throttle_cleared_on: list[str]


def cancel_execution(adapter: KafkaAdapter, journal: Journal | None) -> CancelResult:
    st = journal.state() if journal is not None else None
    view = adapter.view(None if st is None or not st.started else {tp[0] for tp, _ in st.plan},
                        with_sizes=False)
    ours = set(view.reassigning)
    if st is not None and st.started:
        ours &= {tp for tp, _ in st.plan}
    refused = adapter.cancel(sorted(ours))
    cfg: ThrottleConfigs | None = st.throttle if st is not None and st.started else None
    if cfg is None:
        cfg = adapter.throttled_now(view.alive, view.topics())
    if not cfg.empty:
        adapter.clear_throttle(cfg)
    if journal is not None and st is not None and st.started:
        journal.append("throttle_cleared")
        journal.append("cancelled", tps=[list(tp) for tp in sorted(ours)])
    where = [f"broker {b}" for b in sorted(cfg.brokers)] + [f"topic {t}" for t in sorted(cfg.topics)]
    return CancelResult(sorted(set(ours) - set(refused)), refused, where)
