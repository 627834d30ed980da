"""The liveness probe (serve/liveness.py): real sockets on loopback, and how the service dates a dead broker's
first sign from the probe and the rounds."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from kafka_balancer.serve import liveness
from kafka_balancer.serve.config import ServeConfig
from kafka_balancer.serve.liveness import LivenessProbe, Target, first_sign, reachable, targets
from kafka_balancer.serve.observation import Observation, Replicas
from kafka_balancer.serve.service import Service


def listening() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s


def test_a_listening_port_is_reachable_and_a_closed_one_is_not() -> None:
    s = listening()
    port = s.getsockname()[1]
    try:
        assert reachable(Target("127.0.0.1", port), 1.0)
    finally:
        s.close()
    assert not reachable(Target("127.0.0.1", port), 1.0)


def test_the_probe_dates_a_refusal_once_and_forgets_it_when_the_broker_answers_again() -> None:
    s = listening()
    port = s.getsockname()[1]
    clock = iter([10.0, 11.0, 12.0, 13.0])
    probe = LivenessProbe(clock=lambda: next(clock))
    probe.aim({7: Target("127.0.0.1", port)})
    probe.probe_once()
    assert probe.down_since() == {}
    s.close()
    probe.probe_once()
    probe.probe_once()
    assert probe.down_since() == {7: 11.0}  # the first refusal of the streak
    again = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        again.bind(("127.0.0.1", port))
    except OSError:
        pytest.skip("the port was taken by another process meanwhile")
    again.listen(8)
    try:
        probe.probe_once()
        assert probe.down_since() == {}
    finally:
        again.close()


def test_the_probe_thread_runs_until_stopped_and_a_re_aimed_broker_is_forgotten() -> None:
    seen: list[int] = []

    def refuse(t: Target, _timeout: float) -> bool:
        seen.append(t.port)
        return False

    probe = LivenessProbe(period_s=0.01, check=refuse)
    probe.aim({1: Target("h", 1), 2: Target("h", 2)})
    stop = threading.Event()
    thread = threading.Thread(target=probe.run, args=(stop,))
    thread.start()
    try:
        for _ in range(500):
            if len(seen) >= 6:
                break
            stop.wait(0.01)
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive() and {1, 2} <= set(seen)
    assert set(probe.down_since()) == {1, 2}  # every check refused
    probe.aim({2: Target("h", 2)})
    assert set(probe.down_since()) == {2}


def test_targets_prefer_the_exporter_and_take_a_listener_only_on_a_plaintext_cluster() -> None:
    listeners = {1: ("h1", 9092), 2: ("h2", 9093)}
    urls = {1: "http://e1:7071/metrics", 3: "not a url"}
    assert targets([1, 2, 3], listeners, urls, plaintext=True) == {1: Target("e1", 7071), 2: Target("h2", 9093)}
    assert targets([1, 2, 3], listeners, urls, plaintext=False) == {1: Target("e1", 7071)}


@pytest.mark.parametrize(
    ("listed", "unreachable", "scraped", "refused_at", "expected"),
    [
        (True, False, False, None, None),  # listed, nothing wrong
        (True, False, False, 95.0, 95.0),  # refusing, not yet fenced
        (True, True, False, None, 100.0),  # the round's scrape failed
        (True, True, False, 97.0, 97.0),  # both: the earlier
        (False, False, False, None, 100.0),  # fenced
        (False, False, False, 91.0, 91.0),  # fenced, refused before
        (True, False, True, 95.0, None),  # the exporter answered a read begun after the refusal
        (True, False, False, 100.0 - liveness.TRUST_S - 1, None),  # refused for long yet listed: not dying
        (False, False, False, 100.0 - liveness.TRUST_S - 1, 100.0 - liveness.TRUST_S - 1),  # gone: kept
    ],
)
def test_first_sign(listed: bool, unreachable: bool, scraped: bool, refused_at: float | None,
                    expected: float | None) -> None:
    assert first_sign(100.0, listed, unreachable, scraped, refused_at) == expected


class _Refusing(LivenessProbe):
    def __init__(self, refused: dict[int, float]) -> None:
        super().__init__()
        self.refused = refused
        self.aimed: dict[int, Target] = {}

    def aim(self, new: object) -> None:
        self.aimed = dict(new)  # type: ignore[call-overload]

    def down_since(self) -> dict[int, float]:
        return dict(self.refused)


def test_the_service_dates_a_dead_brokers_grace_from_the_probes_refusal(tmp_path: Path) -> None:
    svc = Service(ServeConfig(bootstrap="127.0.0.1:1", state_dir=tmp_path / "s", token="t", grace_s=15.0),
                  model_source="sizes")
    parts = {("t", 0): Replicas((1, 2), 1, (1, 2)), ("t", 1): Replicas((2, 3), 2, (2, 3))}
    listeners = {1: ("127.0.0.1", 9001), 2: ("127.0.0.1", 9002), 3: ("127.0.0.1", 9003)}
    probe = _Refusing({})
    svc.liveness = probe
    svc.on_round(Observation(1000.0, frozenset({1, 2, 3}), {}, parts, listeners=listeners), {})
    assert set(probe.aimed) == {1, 2, 3} and svc.dead_since == {}
    probe.refused = {3: 1001.0}  # killed: the probe sees it at once, the controller still lists it
    svc.on_round(Observation(1002.0, frozenset({1, 2, 3}), {}, parts, listeners=listeners), {})
    assert svc.dead_since == {3: 1001.0}
    svc.on_round(Observation(1010.0, frozenset({1, 2}), {}, parts, listeners={1: listeners[1], 2: listeners[2]}), {})
    assert svc.dead_since == {3: 1001.0} and set(probe.aimed) == {1, 2, 3}  # its last listener is still probed
    svc.on_round(Observation(1016.5, frozenset({1, 2}), {}, parts), {})
    (a,) = [a for a in svc.anomalies(10) if a["type"] == "broker_failure"]
    assert a["key"] == "broker-3" and a["first_seen"] == 1001.0 and a["state"] != "waiting"  # 15.5 s of grace
    probe.refused = {}
    svc.on_round(Observation(1020.0, frozenset({1, 2, 3}), {}, parts, listeners=listeners), {})
    assert svc.dead_since == {}
    probe.refused = {1: 1021.0}  # refused, but its exporter answers a round read after that: the probe is wrong
    svc.on_round(Observation(1022.0, frozenset({1, 2, 3}), {}, parts, answered=frozenset({1, 2, 3})), {})
    assert svc.dead_since == {}
    svc.on_round(Observation(1024.0, frozenset({1, 2, 3}), {}, parts), {})  # no exporter read: the probe counts
    assert svc.dead_since == {1: 1021.0}
