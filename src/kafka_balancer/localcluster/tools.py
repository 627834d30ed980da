"""Kafka's own command-line tools (artifact set ``kafka_tools``) against a cluster: independent witnesses.

``kafka_tool("consumer-groups", "--describe", "--group", "g", bootstrap=...)`` runs
``org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server ... --describe --group g``
on the JVM and returns the completed process (stdout/stderr as text). Tools: see :data:`TOOLS`.

    >>> tool_command("leader-election", ["--election-type", "PREFERRED", "--all-topic-partitions"],
    ...              "127.0.0.1:9092", classpath="CP")[-6:]
    ['org.apache.kafka.tools.LeaderElectionCommand', '--bootstrap-server', '127.0.0.1:9092', '--election-type', 'PREFERRED', '--all-topic-partitions']
"""  # noqa: E501

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from kafka_balancer.errors import InputError

TOOLS: dict[str, str] = {
    "console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "topics": "org.apache.kafka.tools.TopicCommand",
}


def tools_classpath() -> str:
    from kafka_balancer.jvm.artifacts import set_jars

    return ":".join(str(p) for p in set_jars("kafka_tools"))


def tool_command(tool: str, args: Sequence[str], bootstrap: str, *, classpath: str | None = None,
                 java: str = "java") -> list[str]:
    """The java command line of one tool (every tool here takes ``--bootstrap-server``)."""
    if tool not in TOOLS:
        raise InputError(f"unknown Kafka tool {tool!r}", hint="choose one of: " + ", ".join(TOOLS))
    return [java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dlog4j2.level=WARN",
            "-cp", classpath or tools_classpath(), TOOLS[tool], "--bootstrap-server", bootstrap, *args]


def kafka_tool(tool: str, *args: str, bootstrap: str, timeout_s: float = 120.0, input_text: str | None = None,
               java: str = "java") -> subprocess.CompletedProcess[str]:
    """Run one of Kafka's tools to completion (no exception on a non-zero exit: check ``returncode``)."""
    return subprocess.run(tool_command(tool, args, bootstrap, java=java), input=input_text, capture_output=True,
                          text=True, timeout=timeout_s, check=False)


def start_tool(tool: str, *args: str, bootstrap: str, java: str = "java",
               stdout: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
    """Start a long-running tool (e.g. the console consumer); the caller stops it."""
    return subprocess.Popen(tool_command(tool, args, bootstrap, java=java), stdout=stdout,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
