"""What a local KRaft cluster looks like: nodes, roles, racks, ports, and the files each node needs.

Pure: nothing here starts a process or touches the disk. :mod:`.cluster` does that.

Layout (defaults follow seed 001's testbed: 3 physical hosts with 2 brokers each): node ids are
``1..brokers``; the first ``controllers`` nodes are combined ``broker,controller`` nodes, the rest are
brokers only; node ``i`` sits on simulated host ``host-k`` with ``k = (i-1) // brokers_per_host`` and
``broker.rack`` = that host label::

    >>> spec = ClusterSpec(brokers=6, controllers=3, brokers_per_host=2)
    >>> [(n.node_id, n.roles, n.rack) for n in plan_nodes(spec, list(range(9000, 9018)))][2:4]
    [(3, 'broker,controller', 'host-1'), (4, 'broker', 'host-1')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_balancer.errors import InputError

LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class ClusterSpec:
    """The shape of a local cluster."""

    brokers: int = 6
    controllers: int = 3
    brokers_per_host: int = 2
    heap_mb: int = 320
    # Extra server.properties entries, applied last (override the defaults below).
    overrides: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    # plaintext (default), ssl or sasl_ssl: see localcluster/secure.py
    security: str = "plaintext"

    def validate(self) -> None:
        if self.brokers < 1:
            raise InputError(f"--brokers must be at least 1, got {self.brokers}")
        if not 1 <= self.controllers <= self.brokers:
            raise InputError(
                f"--controllers must be between 1 and --brokers ({self.brokers}), got {self.controllers}",
                hint="controllers are combined broker+controller nodes, so there cannot be more than brokers",
            )
        if self.brokers_per_host < 1:
            raise InputError(f"--brokers-per-host must be at least 1, got {self.brokers_per_host}")
        if self.heap_mb < 128:
            raise InputError(f"--heap-mb must be at least 128 (Kafka needs it), got {self.heap_mb}")
        if self.security not in ("plaintext", "ssl", "sasl_ssl"):
            raise InputError(f"--security {self.security!r} is not a mode", hint="use plaintext, ssl or sasl_ssl")

    @property
    def ports_needed(self) -> int:
        """Ports per cluster: one broker listener and one metrics port per node, plus controller listeners."""
        return 2 * self.brokers + self.controllers


@dataclass(frozen=True)
class NodeSpec:
    """One Kafka process."""

    node_id: int
    roles: str  # "broker" or "broker,controller"
    rack: str
    broker_port: int
    metrics_port: int
    controller_port: int | None

    @property
    def is_controller(self) -> bool:
        return self.controller_port is not None

    @property
    def bootstrap(self) -> str:
        return f"{LOOPBACK}:{self.broker_port}"


def plan_nodes(spec: ClusterSpec, ports: Sequence[int]) -> list[NodeSpec]:
    """Assign ids, roles, racks and ports. ``ports`` must hold ``spec.ports_needed`` distinct ports:
    broker listeners first, then metrics ports, then controller listeners."""
    spec.validate()
    if len(ports) < spec.ports_needed or len(set(ports)) != len(ports):
        raise InputError(f"need {spec.ports_needed} distinct ports, got {len(set(ports))}")
    n, c = spec.brokers, spec.controllers
    nodes = []
    for i in range(n):
        nodes.append(
            NodeSpec(
                node_id=i + 1,
                roles="broker,controller" if i < c else "broker",
                rack=f"host-{i // spec.brokers_per_host}",
                broker_port=ports[i],
                metrics_port=ports[n + i],
                controller_port=ports[2 * n + i] if i < c else None,
            )
        )
    return nodes


def ports_from_base(spec: ClusterSpec, base: int) -> list[int]:
    """Deterministic ports from ``--base-port``: brokers at base+0.., metrics at base+100.., controllers
    at base+200.. (node id order)."""
    n, c = spec.brokers, spec.controllers
    if n > 100:
        raise InputError("--base-port layout supports at most 100 brokers")
    if base < 1024 or base + 200 + c > 65535:
        raise InputError(f"--base-port {base} is out of range", hint="use a port between 1024 and 65000")
    brokers = [base + i for i in range(n)]
    return brokers + [base + 100 + i for i in range(n)] + [base + 200 + i for i in range(c)]


def quorum_voters(nodes: Sequence[NodeSpec]) -> str:
    """``controller.quorum.voters`` (static quorum): ``id@host:port`` of every controller."""
    return ",".join(f"{n.node_id}@{LOOPBACK}:{n.controller_port}" for n in nodes if n.is_controller)


LISTENER_NAMES = {"plaintext": "PLAINTEXT", "ssl": "SSL", "sasl_ssl": "SASL_SSL"}


def server_properties(spec: ClusterSpec, node: NodeSpec, nodes: Sequence[NodeSpec], data_dir: Path,
                      security: dict[str, str] | None = None) -> str:
    """The ``server.properties`` of one node (KRaft, loopback only; plaintext unless ``spec.security`` says
    otherwise, in which case ``security`` holds the TLS/SASL/ACL entries of localcluster/secure.py)."""
    rf = min(3, spec.brokers)
    name = LISTENER_NAMES.get(spec.security, "PLAINTEXT")
    listeners = [f"{name}://{LOOPBACK}:{node.broker_port}"]
    if node.controller_port is not None:
        listeners.append(f"CONTROLLER://{LOOPBACK}:{node.controller_port}")
    props: dict[str, str] = {
        "process.roles": node.roles,
        "node.id": str(node.node_id),
        "controller.quorum.voters": quorum_voters(nodes),
        "listeners": ",".join(listeners),
        "advertised.listeners": f"{name}://{LOOPBACK}:{node.broker_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "broker.rack": node.rack,
        "log.dirs": str(data_dir),
        "num.partitions": "3",
        "default.replication.factor": str(rf),
        "min.insync.replicas": "1",
        "offsets.topic.replication.factor": str(rf),
        "offsets.topic.num.partitions": "6",
        "transaction.state.log.replication.factor": str(rf),
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": str(rf),
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # The tool decides where leaders go; Kafka's own periodic preferred-leader election would
        # undo skew between measurements and race with the executor.
        "auto.leader.rebalance.enable": "false",
        # Few threads: six brokers share two cores with Spark.
        "num.network.threads": "2",
        "num.io.threads": "2",
        "num.replica.fetchers": "1",
        "background.threads": "2",
        "log.cleaner.enable": "false",
        "log.segment.bytes": str(16 * 1024 * 1024),
        "log.retention.check.interval.ms": "60000",
    }
    props.update(security or {})
    for k, v in spec.overrides:
        props[k] = v
    if security:  # passwords and JAAS lines: write them escaped as a properties file must be
        from kafka_balancer.security.properties import format_properties

        return format_properties(props)
    return "".join(f"{k}={v}\n" for k, v in props.items())


# JMX exporter rules: only what the collector reads (the exporter's own process/JVM metrics such as
# process_cpu_seconds_total come on top), so a scrape stays small and cheap.
JMX_EXPORTER_CONFIG = """\
# Prometheus JMX exporter config for kafka-balancer's local cluster (written by local-cluster up).
lowercaseOutputName: true
includeObjectNames:
  - "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=*"
  - "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,topic=*"
  - "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=*"
  - "kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec"
  - "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec"
  - "kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesInPerSec"
  - "kafka.server:type=BrokerTopicMetrics,name=ReplicationBytesOutPerSec"
  - "java.lang:type=OperatingSystem"
  - "kafka.log:type=Log,name=Size,*"
  - "kafka.log:type=Log,name=LogEndOffset,*"
  - "kafka.log:type=Log,name=LogStartOffset,*"
rules:
  - pattern: "kafka.server<type=BrokerTopicMetrics, \\
      name=(BytesInPerSec|BytesOutPerSec|MessagesInPerSec), topic=(.+)><>Count"
    name: kafka_server_brokertopicmetrics_$1_total
    type: COUNTER
    labels:
      topic: "$2"
  - pattern: "kafka.server<type=BrokerTopicMetrics, \\
      name=(BytesInPerSec|BytesOutPerSec|ReplicationBytesInPerSec|ReplicationBytesOutPerSec)><>Count"
    name: kafka_server_brokertopicmetrics_$1_total
    type: COUNTER
  - pattern: 'java.lang<type=OperatingSystem><>AvailableProcessors'
    name: os_available_processors
    type: GAUGE
  # per-replica log gauges, for history read back from Prometheus (collect --prometheus)
  - pattern: "kafka.log<type=Log, name=(Size|LogEndOffset|LogStartOffset), topic=(.+), partition=(.+)><>Value"
    name: kafka_log_log_$1
    type: GAUGE
    labels:
      topic: "$2"
      partition: "$3"
"""

LOG4J2_CONFIG = """\
# log4j2 config for kafka-balancer's local cluster: one file per node, INFO, state changes at WARN.
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.state.name = state.change.logger
logger.state.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
"""


def jvm_command(
    spec: ClusterSpec,
    node: NodeSpec,
    classpath: Sequence[Path],
    agent_jar: Path,
    node_dir: Path,
    java: str = "java",
) -> list[str]:
    """The ``java`` command line of one node (``kafka.Kafka server.properties``)."""
    return [
        java,
        f"-Xms{spec.heap_mb}m",
        f"-Xmx{spec.heap_mb}m",
        "-XX:MaxDirectMemorySize=128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xss512k",
        "-Djava.awt.headless=true",
        f"-Dkafka.logs.dir={node_dir / 'logs'}",
        f"-Dlog4j2.configurationFile={node_dir / 'log4j2.properties'}",
        f"-javaagent:{agent_jar}={LOOPBACK}:{node.metrics_port}:{node_dir / 'jmx-exporter.yaml'}",
        "-cp",
        ":".join(str(p) for p in classpath),
        "kafka.Kafka",
        str(node_dir / "server.properties"),
    ]


def storage_format_command(
    cluster_id: str, classpath: Sequence[Path], node_dir: Path, java: str = "java"
) -> list[str]:
    """``kafka.tools.StorageTool format`` for one node (static quorum: no --standalone needed)."""
    return [
        java,
        "-Xmx128m",
        "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC",
        f"-Dkafka.logs.dir={node_dir / 'logs'}",
        f"-Dlog4j2.configurationFile={node_dir / 'log4j2.properties'}",
        "-cp",
        ":".join(str(p) for p in classpath),
        "kafka.tools.StorageTool",
        "format",
        "--cluster-id",
        cluster_id,
        "--config",
        str(node_dir / "server.properties"),
        "--ignore-formatted",
    ]
