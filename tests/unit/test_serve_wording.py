"""The service's errors and notes name the API's fields and endpoints, not the plan command's flags."""

from __future__ import annotations

import doctest

import pytest

from kafka_balancer.serve import wording
from kafka_balancer.serve.wording import api_words, field_of

FIELDS = frozenset({"brokers", "excluded_topics", "max_moves", "max_bytes", "polish"})


def test_doctest() -> None:
    assert doctest.testmod(wording).failed == 0


@pytest.mark.parametrize(("cli", "api"), [
    ("--max-bytes 1.0 GB is below the 3.2 GB that must leave", "max_bytes 1.0 GB is below the 3.2 GB that must leave"),
    ("raise --max-moves, or remove fewer brokers", "raise max_moves, or remove fewer brokers"),
    ("--exclude-topics /x/ matches none of the 3 topic(s)", "excluded_topics /x/ matches none of the 3 topic(s)"),
    ("add brokers (--add-brokers) that can take it", "add brokers (/api/add-brokers) that can take it"),
    ("plan with --remove-brokers 3 to heal", "plan with /api/remove-brokers 3 to heal"),
    ("drop --leadership-only", "drop leadership_only"),
    ("--goals: unknown goal 'x'", "goals: unknown goal 'x'"),
    # flags without an API equivalent, and look-alikes, stay as they are
    ("--max-moves-per-hour 3", "--max-moves-per-hour 3"),
    ("see --polish", "see --polish"),
])
def test_api_words(cli: str, api: str) -> None:
    assert api_words(cli) == api


@pytest.mark.parametrize(("message", "field"), [
    ("max_moves 1 is below the 6 replica moves", "max_moves"),
    ("excluded_topics: 'pay(' is not a valid regular expression", "excluded_topics"),
    ("/api/add-brokers: broker 7 is down in the snapshot", "brokers"),
    ("no live broker is left", None),
    ("", None),
])
def test_field_of(message: str, field: str | None) -> None:
    assert field_of(message, FIELDS) == field
