"""``collect.admin.retried``: a request refused by a broker that died is tried again (on another node, by
kafka-python's choice), a fresh client before the last try, and the last error is the caller's."""

from __future__ import annotations

import pytest
from kafka.errors import KafkaConnectionError, TopicAuthorizationFailedError, UnknownBrokerIdError

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


def test_a_broker_the_client_never_saw_gets_a_fresh_client_at_once_and_once() -> None:
    log: list[str] = []
    clients = iter(["old", "fresh"])
    client = [next(clients)]

    def call() -> str:
        log.append(f"call {client[0]}")
        if client[0] == "old":
            raise UnknownBrokerIdError("4")
        return "offsets"

    def renew() -> None:
        log.append("renew")
        client[0] = next(clients)

    assert admin.retried(call, renew=renew) == "offsets"
    assert log == ["call old", "renew", "call fresh"]  # no sleep and no second try on the old client
    log.clear()

    def always() -> str:
        log.append("call")
        raise UnknownBrokerIdError("4")

    with pytest.raises(UnknownBrokerIdError):
        admin.retried(always, renew=lambda: log.append("renew"))
    assert log == ["call", "renew", "call"]  # a fresh client that fails too: the error is the caller's
    log.clear()
    with pytest.raises(UnknownBrokerIdError):
        admin.retried(always)  # nothing to renew
    assert log == ["call"]
