"""Shared pytest set-up. Fixtures that start real servers live in their own plug-in modules:

- ``fixtures_kafka``: a session-scoped real local Kafka cluster (marker ``kafka``), and a secured one;
- ``fixtures_spark``: one session-scoped local SparkSession (marker ``spark``).

``./dev test`` runs the suite on two pytest-xdist workers. Tests that share a cluster are one unit of
work, run on one worker in collection order, so each cluster starts once: the session's plain cluster
(``kafka_cluster``), the secured one (``secure_cluster``) and the service's own (``test_serve_live.py``).
Every other test, the Spark ones included, is a unit of its own and goes to whichever worker is free. The
xdist controller sees only test ids, so the units are named by file (``_UNITS``), and collection checks
the table against each test's fixtures. A plain ``pytest`` run (no ``-n``) has no workers and no units.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest_plugins = ["fixtures_kafka", "fixtures_spark"]

_SECURED = "secured cluster"
_UNITS = {
    "tests/kafka/test_security.py": _SECURED,
    "tests/kafka/test_prometheus_secured.py": _SECURED,
    "tests/kafka/test_serve_live.py": "the service's cluster",
}
_PLAIN = "session cluster"  # every other file of tests/kafka


def _unit(nodeid: str) -> str:
    """The unit of work of a test: the tests of one unit run on one worker, in collection order."""
    path = nodeid.split("::", 1)[0]
    return _UNITS.get(path) or (_PLAIN if path.startswith("tests/kafka/") else nodeid)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        unit = _unit(item.nodeid)
        names = set(getattr(item, "fixturenames", ()))
        wrong = ("kafka_cluster" in names and unit != _PLAIN) or ("secure_cluster" in names and unit != _SECURED)
        if wrong or (item.get_closest_marker("kafka") and unit == item.nodeid):
            raise pytest.UsageError(f"tests/conftest.py: {item.nodeid} is in the unit of work {unit!r}, which "
                                    "does not match the cluster it uses; list its file in _UNITS")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The units above for xdist's default distribution; another ``--dist`` given by hand is xdist's."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByCluster(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    return ByCluster(config, log)
