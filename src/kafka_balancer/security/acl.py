"""Least privilege: refuse, before anything changes, an action the user's ACLs do not allow.

The brokers say what the connected principal may do: ``DescribeCluster`` returns the cluster's
authorized operations and ``Metadata`` each topic's (KIP-430); neither changes anything. A broker that
does not answer them (no authorizer answers "everything") leaves the check to the action itself.

Operations each command needs are listed in docs/security.md; they are the ``NEEDS_*`` tables below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka_balancer.errors import InputError

# operation on the cluster -> what it is needed for
COLLECT_CLUSTER = {"DESCRIBE": "read replica sizes (DescribeLogDirs) and ongoing reassignments"}
EXECUTE_CLUSTER = {"DESCRIBE": "read replica sizes and ongoing reassignments",
                   "ALTER": "reassign partitions and elect leaders"}
THROTTLE_CLUSTER = {"ALTER_CONFIGS": "set the brokers' replication throttle"}
THROTTLE_TOPIC = {"ALTER_CONFIGS": "set the topics' throttled replicas"}
CANCEL_CLUSTER = {"ALTER": "cancel reassignments"}


def _ops(entry: Mapping[str, Any]) -> set[str] | None:
    ops = entry.get("authorized_operations")
    if ops is None:
        return None
    have = {str(getattr(o, "name", o)).upper() for o in ops}
    return have


def cluster_operations(admin: Any) -> set[str] | None:
    """What the principal may do on the cluster, or None when the broker does not say."""
    from kafka_balancer.collect.admin import retried

    return _ops(retried(admin.describe_cluster))  # (retried keeps kafka-python's logs quiet)


def topic_operations(admin: Any, topics: Iterable[str]) -> dict[str, set[str] | None]:
    from kafka_balancer.collect.admin import retried

    names = sorted(set(topics))
    if not names:
        return {}
    described = retried(lambda: admin.describe_topics(names))
    return {t["name"]: _ops(t) for t in described if t.get("error_code", 0) == 0}


def _grant_hint(who: str, op: str, resource: str) -> str:
    principal = who.split("'")[1] if "'" in who else "<principal>"
    return (f"ask an administrator: kafka-acls --bootstrap-server ... --command-config admin.properties --add "
            f"--allow-principal User:{principal} --operation {op} {resource}  (docs/security.md lists what "
            "each command needs)")


def require_cluster(admin: Any, needs: Mapping[str, str], action: str, who: str) -> None:
    """InputError naming the first missing cluster operation (nothing has been changed yet)."""
    have = cluster_operations(admin)
    if have is None or "ALL" in have:
        return
    for op, why in needs.items():
        if op not in have:
            raise InputError(f"{who} may not {action}: {op} on the cluster is not granted (needed to {why}); "
                             "nothing was changed", hint=_grant_hint(who, op, "--cluster"))


def require_topics(admin: Any, topics: Iterable[str], needs: Mapping[str, str], action: str, who: str) -> None:
    """InputError naming the first topic lacking one of ``needs`` (unknown topics are left to validation)."""
    for topic, have in sorted(topic_operations(admin, topics).items()):
        if have is None or "ALL" in have:
            continue
        for op, why in needs.items():
            if op not in have:
                raise InputError(f"{who} may not {action}: {op} on topic {topic!r} is not granted (needed to "
                                 f"{why}); nothing was changed", hint=_grant_hint(who, op, f"--topic {topic}"))


WORKLOAD_TOPIC = {"WRITE": "produce to it", "READ": "consume from it"}


def check_workload_rights(admin: Any, existing: Iterable[str], new_topics: list[Any], who: str) -> None:
    """``workload``: WRITE and READ on the topics that exist; creating the others is tried with
    ``validate_only`` first, which checks CREATE without creating anything."""
    from kafka.errors import KafkaError

    require_topics(admin, existing, WORKLOAD_TOPIC, "run the workload", who)
    if not new_topics:
        return
    try:
        admin.create_topics(new_topics, validate_only=True)
    except KafkaError as exc:
        if "AUTHORIZATION" in type(exc).__name__.upper() or "Authorization" in str(exc):
            raise InputError(f"{who} may not create the workload's topics: CREATE is not granted "
                             f"({type(exc).__name__}); nothing was changed",
                             hint=_grant_hint(who, "CREATE", "--cluster")) from None
        if "TopicAlreadyExists" not in type(exc).__name__:
            raise


def check_execute_rights(admin: Any, topics: Iterable[str], throttle: bool, who: str) -> None:
    """``execute --yes``: ALTER (and DESCRIBE) on the cluster; with a throttle, ALTER_CONFIGS on the cluster
    and on every topic of the plan."""
    needs = dict(EXECUTE_CLUSTER)
    if throttle:
        needs.update(THROTTLE_CLUSTER)
    require_cluster(admin, needs, "execute this plan", who)
    if throttle:
        require_topics(admin, topics, THROTTLE_TOPIC, "execute this plan with a throttle", who)
