"""``collect.admin.retried``: a request refused by a broker that died is tried again (on another node, by
kafka-python's choice), a fresh client before the last try, and the last error is the caller's."""

from __future__ import annotations

import pytest
from kafka.errors import KafkaConnectionError, TopicAuthorizationFailedError

from kafka_balancer.collect import admin


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admin.time, "sleep", lambda _s: None)


def flaky(failures: int, log: list[str]) -> object:
    def call() -> str:
        log.append("call")
        if log.count("call") <= failures:
            raise KafkaConnectionError("111 ECONNREFUSED")
        return "topics"

    return call


def test_a_refused_connection_is_tried_again() -> None:
    log: list[str] = []
    assert admin.retried(flaky(2, log), renew=lambda: log.append("renew")) == "topics"
    assert log == ["call", "call", "call"]  # no fresh client while tries are left over


def test_the_last_try_is_on_a_fresh_client_and_its_error_is_raised() -> None:
    log: list[str] = []
    with pytest.raises(KafkaConnectionError):
        admin.retried(flaky(9, log), attempts=3, renew=lambda: log.append("renew"))
    assert log == ["call", "call", "renew", "call"]


def test_other_errors_are_not_retried() -> None:
    log: list[str] = []

    def call() -> None:
        log.append("call")
        raise TopicAuthorizationFailedError("not allowed")

    with pytest.raises(TopicAuthorizationFailedError):
        admin.retried(call)
    assert log == ["call"]
