"""group locate (Java String.hashCode, Utils.abs) and group doctor, and consumers advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_balancer.cli.main import main
from kafka_balancer.consumer.advice import divisor_counts, lag_trend, throughput_count
from kafka_balancer.consumer.group_doctor import diagnose
from kafka_balancer.consumer.group_locate import (
    java_string_hashcode,
    offsets_partition_for,
    seed004_partition_for,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("test-group", 627841412),  # seed 004's example
    ("", 0), ("a", 97), ("hello", 99162322), ("Hello World", -862545276),
    ("polygenelubricants", -2147483648),  # Integer.MIN_VALUE
    ("é€𝄞", 16751501),  # UTF-16 units 233, 8364, 0xD834, 0xDD1E: ((233*31+8364)*31+55348)*31+56606
])
def test_java_string_hashcode(text: str, expected: int) -> None:
    assert java_string_hashcode(text) == expected


def test_seed004_example_and_min_value_edge() -> None:
    assert offsets_partition_for("test-group", 50) == 12
    # Kafka: Utils.abs(MIN_VALUE) = 0 -> partition 0; seed 004's Math.abs(h % 50) gives 48
    assert offsets_partition_for("polygenelubricants", 50) == 0
    assert seed004_partition_for("polygenelubricants", 50) == 48
    for g in ("a", "orders", "Hello World", "x" * 40):  # identical for every other hash
        assert offsets_partition_for(g, 50) == seed004_partition_for(g, 50)


def test_locate_cli_offline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["group", "locate", "--group", "test-group", "--partitions", "50"]) == 0
    assert "partition 12 of 50" in capsys.readouterr().out


def test_doctor_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    levels = {f.rule: f.level for f in diagnose({"session.timeout.ms": "6000", "heartbeat.interval.ms": "2000",
                                                 "group.instance.id": "web-1"}, processing_ms=100)}
    assert levels == {"session-vs-heartbeat": "ok", "session-in-broker-range": "ok", "poll-interval": "ok",
                      "static-membership": "ok"}
    bad = {f.rule: f.level for f in diagnose({"session.timeout.ms": "5000", "heartbeat.interval.ms": "3000",
                                              "max.poll.interval.ms": "1000"}, per_record_ms=5)}
    assert bad == {"session-vs-heartbeat": "error", "session-in-broker-range": "error", "poll-interval": "error",
                   "static-membership": "warn"}
    slow_restart = diagnose({"group.instance.id": "a"}, restart_ms=60000)
    assert [f.level for f in slow_restart if f.rule == "static-membership"] == ["warn"]
    cfg = tmp_path / "c.properties"
    cfg.write_text("# comment\nsession.timeout.ms = 6000\nheartbeat.interval.ms: 3000\n")
    assert main(["group", "doctor", "--config", str(cfg)]) == 1
    assert "heartbeat.interval.ms <= 2000" in capsys.readouterr().out


def test_doctor_names_misspelt_and_damaged_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a misspelt key is ignored by the consumer: the rules judge the default, and the doctor says so
    found = diagnose({"sesion.timeout.ms": "6000", "group.instanceid": "a", "client.id": "x"})
    typos = [f.message for f in found if f.rule == "misspelt-key"]
    assert typos == ["group.instanceid is not a consumer setting; did you mean group.instance.id?",
                     "sesion.timeout.ms is not a consumer setting; did you mean session.timeout.ms?"]
    assert "the default 45000 is used" in next(f.explanation for f in found if f.message.startswith("sesion"))
    # the sweep's seed 2311: a NUL inside a key passed as a config with no group.id problem at all
    cfg = tmp_path / "c.properties"
    cfg.write_bytes(b"gro\x00up.id=g\nsession.timeout.ms=45000\n")
    assert main(["group", "doctor", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --config {cfg}:1: the key 'gro\\x00up.id' holds a control character"), err


def test_advice() -> None:
    assert divisor_counts(12, 5) == (4, 6)
    assert divisor_counts(7, 3) == (1, 7)
    count, hottest = throughput_count([100.0] * 10, per_consumer=300.0, target_util=0.7)
    assert count == 5 and hottest == pytest.approx(1 / 3)
    assert throughput_count([500.0, 1.0], per_consumer=100.0)[1] == 5.0
    assert lag_trend([(0, 10.0), (1, 8.0), (2, 6.0)]) == pytest.approx(-2.0)


def test_a_connection_error_that_outlasts_the_retries_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # a cluster that stops answering mid-command is the cluster's state, not a bug: one line and a hint,
    # exit 1 (before, "internal error: KafkaConnectionError ... this is a bug")
    from kafka.errors import KafkaConnectionError

    import kafka_balancer.cli.cmd_group as cmd_group

    def lost(args: object) -> int:
        raise KafkaConnectionError("111 ECONNREFUSED")

    monkeypatch.setattr(cmd_group, "run_locate", lost)
    assert main(["group", "locate", "--group", "g", "--bootstrap", "127.0.0.1:9"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: the cluster stopped answering: KafkaConnectionError: 111 ECONNREFUSED"
    assert len(err) == 2 and err[1].startswith("  hint: check that the brokers in --bootstrap run")
