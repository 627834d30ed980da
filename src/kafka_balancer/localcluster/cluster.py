"""A real local Apache Kafka (KRaft) cluster on 127.0.0.1, started from the cached Maven jars.

Used by ``kafka-balancer local-cluster``, the test fixture and the demo::

    cluster = LocalCluster(Path("out/local-cluster"), ClusterSpec(brokers=6))
    cluster.up()                 # format storage, start 6 JVMs, wait until all brokers registered
    cluster.bootstrap            # "127.0.0.1:19092,127.0.0.1:19093,..."
    cluster.kill_broker(4)       # SIGKILL
    cluster.start_broker(4)      # same data dir, waits until it registered again
    cluster.down()               # stops only the processes recorded in the state dir

State directory layout: ``cluster.json`` (cluster id, spec, ports, pids) and ``node-<id>/`` with
``server.properties``, ``jmx-exporter.yaml``, ``log4j2.properties``, ``data/`` and ``logs/``.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_balancer.collect.admin import connect_admin, quiet_kafka_logs, retried
from kafka_balancer.errors import ClusterError, InputError
from kafka_balancer.files.outputs import resolve_path
from kafka_balancer.localcluster import processes, secure
from kafka_balancer.localcluster.spec import (
    JMX_EXPORTER_CONFIG,
    LOG4J2_CONFIG,
    ClusterSpec,
    NodeSpec,
    jvm_command,
    plan_nodes,
    ports_from_base,
    server_properties,
    storage_format_command,
)
from kafka_balancer.model.fileio import read_input_bytes
from kafka_balancer.validate.local_state import LocalState, parse_local_state

if TYPE_CHECKING:
    from kafka_balancer.security.settings import SecuritySettings

STATE_FILE = "cluster.json"
DEFAULT_BASE_PORT = 19092
AGENT_PREFIX = "jmx_prometheus_javaagent"


@dataclass(frozen=True)
class NodeStatus:
    """One node as ``status`` reports it."""

    node: NodeSpec
    pid: int | None
    running: bool


def default_state_dir() -> Path:
    return Path("out") / "local-cluster"


def _new_cluster_id() -> str:
    # Like Kafka's own random ids, never one that starts with '-': kafka-storage would read it as an option
    # ("argument --cluster-id/-t: expected one argument"), one cluster start in 64.
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def _jars() -> tuple[list[Path], Path]:
    from kafka_balancer.jvm.artifacts import set_jars

    jars = set_jars("kafka")
    agents = [j for j in jars if j.name.startswith(AGENT_PREFIX)]
    if not agents:
        raise InputError("the JMX exporter agent jar is missing from the kafka artifact set",
                         hint="run `kafka-balancer setup-jvm --force`")
    return [j for j in jars if j not in agents], agents[0]


class LocalCluster:
    """A local KRaft cluster whose processes, ports and logs live in ``state_dir``."""

    def __init__(
        self,
        state_dir: Path,
        spec: ClusterSpec | None = None,
        base_port: int | None = DEFAULT_BASE_PORT,
        java: str = "java",
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.state_dir = resolve_path(state_dir, "--state-dir")  # a link loop is one line naming the flag
        self.java = java
        self._log = log or (lambda _msg: None)
        self.base_port = base_port
        self.cluster_id: str | None = None
        self.nodes: list[NodeSpec] = []
        self.pids: dict[int, int | None] = {}
        self._pending_spec: ClusterSpec | None = None
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        stored = self._read_state()
        if stored is not None:
            self._adopt(stored, spec)
        else:
            self.spec = spec or ClusterSpec()
            self.spec.validate()

    # ---- state file -------------------------------------------------------------------------
    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE

    def _read_state(self) -> LocalState | None:
        """The state file, validated (:mod:`kafka_balancer.validate.local_state`); None when there is none."""
        if self.state_dir.exists() and not self.state_dir.is_dir():
            raise InputError(f"--state-dir {self.state_dir} is a file, not a folder",
                             hint="pass the folder `local-cluster up` used (default out/local-cluster)")
        if not self.state_file.exists() and not self.state_file.is_symlink():
            return None
        return parse_local_state(read_input_bytes(self.state_file, "the local cluster's state file"),
                                 str(self.state_file))

    def _adopt(self, stored_state: LocalState, spec: ClusterSpec | None) -> None:
        stored = stored_state.spec
        if spec is not None and (spec.brokers, spec.controllers, spec.brokers_per_host, spec.security) != (
            stored.brokers, stored.controllers, stored.brokers_per_host, stored.security
        ):
            self._pending_spec = spec
        self.spec = stored if spec is None else replace(stored, heap_mb=spec.heap_mb)
        self.cluster_id = stored_state.cluster_id
        self.nodes = list(stored_state.nodes)
        self.pids = dict(stored_state.pids)

    def _write_state(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        data = {
            "version": 1,
            "cluster_id": self.cluster_id,
            "spec": {**asdict(self.spec), "overrides": [list(kv) for kv in self.spec.overrides]},
            "bootstrap": self.bootstrap,
            "nodes": [{"node": asdict(n), "pid": self.pids.get(n.node_id)} for n in self.nodes],
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        tmp.replace(self.state_file)

    # ---- accessors --------------------------------------------------------------------------
    @property
    def exists(self) -> bool:
        return bool(self.nodes)

    @property
    def bootstrap(self) -> str:
        """All broker listeners, comma-separated (any one is enough to bootstrap a client)."""
        return ",".join(n.bootstrap for n in self.nodes)

    @property
    def running_bootstrap(self) -> str:
        """The listeners of the nodes running now: a client's first requests may go to any address it was
        given, and a stopped node's refuses them."""
        return ",".join(n.bootstrap for n in self.nodes if self.is_running(n.node_id))

    @property
    def broker_ids(self) -> list[int]:
        return [n.node_id for n in self.nodes]

    def node(self, node_id: int) -> NodeSpec:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise InputError(
            f"broker {node_id} is not part of the local cluster in {self.state_dir}",
            hint=f"its brokers are {', '.join(map(str, self.broker_ids)) or 'none (run `up` first)'}",
        )

    def node_dir(self, node_id: int) -> Path:
        return self.state_dir / f"node-{node_id}"

    def hosts(self) -> dict[int, str]:
        """Broker id -> simulated host label (= its ``broker.rack``)."""
        return {n.node_id: n.rack for n in self.nodes}

    def metrics_urls(self) -> dict[int, str]:
        """Broker id -> its JMX exporter endpoint."""
        return {n.node_id: f"http://127.0.0.1:{n.metrics_port}/metrics" for n in self.nodes}

    def _marker(self, node_id: int) -> str:
        return str(self.node_dir(node_id) / "server.properties")

    def is_running(self, node_id: int) -> bool:
        proc = self._procs.get(node_id)
        if proc is not None and proc.pid == self.pids.get(node_id):
            return proc.poll() is None  # our child: the exit status is authoritative
        return processes.pid_runs(self.pids.get(node_id), self._marker(node_id))

    def status(self) -> list[NodeStatus]:
        return [NodeStatus(n, self.pids.get(n.node_id), self.is_running(n.node_id)) for n in self.nodes]

    @property
    def secured(self) -> bool:
        return self.spec.security != "plaintext"

    def client_properties(self, user: str = "admin") -> Path | None:
        """The ``client.properties`` of ``admin`` or ``reader`` of a secured cluster (None if plaintext)."""
        return self.state_dir / f"{user}.properties" if self.secured else None

    def security(self, user: str = "admin") -> SecuritySettings | None:
        """The security settings of ``user`` (None for a plaintext cluster)."""
        path = self.client_properties(user)
        if path is None:
            return None
        from kafka_balancer.security.settings import load_settings

        return load_settings(path, flag=f"local cluster {user} properties")

    def admin(self, timeout_s: float = 15.0, user: str = "admin") -> Any:
        """A kafka-python ``KafkaAdminClient`` on this cluster (caller closes it)."""
        if not self.exists:
            raise InputError(f"no local cluster in {self.state_dir}",
                             hint="run `kafka-balancer local-cluster up`")
        return connect_admin(self.bootstrap, timeout_s=timeout_s, security=self.security(user))

    # ---- lifecycle --------------------------------------------------------------------------
    def up(self, fresh: bool = False, timeout_s: float = 180.0) -> float:
        """Start every node that is not running (formatting storage for a new cluster) and wait until
        all brokers are registered and every metrics endpoint answers. Returns seconds taken."""
        t0 = time.monotonic()
        if fresh and self.exists:
            self.down(wipe=True)
        if self.exists and self._pending_spec is not None:
            raise InputError(
                f"{self.state_dir} holds a {self.spec.brokers}-broker cluster, not the one asked for",
                hint="add --fresh to replace it, or use another --state-dir",
            )
        classpath, agent = _jars()
        if not self.exists:
            self._create(classpath)
        todo = [n for n in self.nodes if not self.is_running(n.node_id)]
        if todo:
            processes.require_free([p for n in todo for p in self._ports(n)])
        for n in todo:
            self._start_node(n, classpath, agent)
        self._write_state()
        self.wait_ready(self.broker_ids, timeout_s=max(1.0, timeout_s - (time.monotonic() - t0)))
        if self.secured:
            self._grant_reader()
        return time.monotonic() - t0

    def _grant_reader(self) -> None:
        from kafka_balancer.localcluster.secure import grant_reader_acls

        admin = self.admin()
        try:
            with quiet_kafka_logs():
                grant_reader_acls(admin)
        finally:
            with quiet_kafka_logs():
                admin.close()

    @staticmethod
    def _ports(n: NodeSpec) -> list[int]:
        return [n.broker_port, n.metrics_port] + ([n.controller_port] if n.controller_port else [])

    def _create(self, classpath: list[Path]) -> None:
        if self.base_port is None:
            ports = processes.free_ports(self.spec.ports_needed)
        else:
            ports = ports_from_base(self.spec, self.base_port)
            processes.require_free(ports)
        nodes = plan_nodes(self.spec, ports)
        shutil.rmtree(self.state_dir, ignore_errors=True)
        self.cluster_id = _new_cluster_id()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        sec = secure.SecretsSet.new() if self.secured else None
        tls = None
        if sec is not None:
            self._log(f"creating a throwaway CA and certificates ({self.spec.security})")
            tls = secure.make_tls(self.state_dir, sec)
            secure.write_client_files(self.state_dir, self.spec.security, tls, sec)
        for n in nodes:
            d = self.node_dir(n.node_id)
            (d / "logs").mkdir(parents=True, exist_ok=True)
            extra = (secure.server_security(self.spec.security, n.is_controller, tls, sec)
                     if sec is not None and tls is not None else None)
            secure.write_private(d / "server.properties", server_properties(self.spec, n, nodes, d / "data", extra))
            (d / "jmx-exporter.yaml").write_text(JMX_EXPORTER_CONFIG)
            (d / "log4j2.properties").write_text(LOG4J2_CONFIG)
        self._log(f"formatting storage of {len(nodes)} nodes (cluster id {self.cluster_id})")
        from kafka_balancer.localcluster.assignor import plugin_classpath

        classpath = [*classpath, *plugin_classpath(self.spec)]  # StorageTool loads the configured assignors
        procs = [self._format(n, classpath, sec) for n in nodes]
        for n, p in zip(nodes, procs, strict=True):
            out, _ = p.communicate()
            if p.returncode != 0:
                raise ClusterError(
                    f"kafka.tools.StorageTool format failed for node {n.node_id} (exit {p.returncode}): "
                    + " | ".join(out.strip().splitlines()[-3:]),
                    hint=f"see {self.node_dir(n.node_id)}; `local-cluster up --fresh` starts over",
                )
            (self.node_dir(n.node_id) / "format.args").unlink(missing_ok=True)
        self.nodes = nodes
        self.pids = {n.node_id: None for n in nodes}
        self._pending_spec = None
        self._write_state()

    def _format(self, n: NodeSpec, classpath: list[Path], sec: secure.SecretsSet | None) -> subprocess.Popen[str]:
        """Start ``kafka-storage format`` for one node; SCRAM users of a SASL cluster go in a 0600 argument
        file (``java @file``), so no password shows in a process list."""
        cmd = storage_format_command(self.cluster_id or "", classpath, self.node_dir(n.node_id), self.java)
        if sec is not None and self.spec.security == "sasl_ssl":
            at = cmd.index("-cp")
            args = secure.write_private(self.node_dir(n.node_id) / "format.args",
                                        secure.argfile(cmd[at:] + secure.scram_arguments(sec)))
            cmd = [*cmd[:at], f"@{args}"]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def _start_node(self, n: NodeSpec, classpath: list[Path], agent: Path) -> None:
        d = self.node_dir(n.node_id)
        (d / "logs").mkdir(parents=True, exist_ok=True)
        from kafka_balancer.localcluster.assignor import plugin_classpath

        classpath = [*classpath, *plugin_classpath(self.spec)]
        with (d / "logs" / "stdout.log").open("ab") as out:
            proc = subprocess.Popen(
                jvm_command(self.spec, n, classpath, agent, d, self.java),
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, cwd=d,
            )
        self.pids[n.node_id] = proc.pid
        self._procs[n.node_id] = proc
        self._log(f"started node {n.node_id} ({n.roles}, rack {n.rack}) pid {proc.pid} on {n.bootstrap}")

    def wait_ready(self, broker_ids: Iterable[int], timeout_s: float = 120.0) -> None:
        """Wait until the given brokers are registered and unfenced, and their metrics endpoints answer."""
        want = set(broker_ids)
        deadline = time.monotonic() + timeout_s
        last = "no answer yet"
        admin = None
        try:
            while True:
                for nid in want:
                    if not self.is_running(nid):
                        log = self.node_dir(nid) / "logs"
                        proc = self._procs.get(nid)
                        code = proc.poll() if proc is not None else None
                        raise ClusterError(
                            f"local Kafka node {nid} exited while starting (exit code {code}): "
                            + (processes.tail(log / "stdout.log", 3)
                               or processes.tail(log / "server.log", 3)),
                            hint=f"see {log}/server.log",
                        )
                try:
                    if admin is None:
                        admin = connect_admin(self.bootstrap, timeout_s=5.0, security=self.security())
                    with quiet_kafka_logs():
                        info = admin.describe_cluster()
                    ready = {int(b["broker_id"]) for b in info["brokers"] if not b.get("is_fenced")}
                    missing = want - ready
                    if not missing and all(self._serving(nid) and self._metrics_up(nid) for nid in want):
                        return
                    last = f"brokers not yet registered: {sorted(missing)}" if missing else "metrics not up"
                except ClusterError as exc:
                    last = exc.message
                except Exception as exc:  # kafka-python raises many kinds while nodes come up
                    last = f"{type(exc).__name__}: {exc}"
                if time.monotonic() > deadline:
                    raise ClusterError(
                        f"local cluster not ready after {timeout_s:.0f} s ({last})",
                        hint=f"see the node logs under {self.state_dir}",
                    )
                time.sleep(0.5)
        finally:
            if admin is not None:
                with quiet_kafka_logs():
                    admin.close()

    def wait_fenced(self, broker_ids: Iterable[int], timeout_s: float = 60.0) -> None:
        """Wait until the controller lists none of these (stopped) brokers as unfenced, so that no metadata a
        client reads sends it to them."""
        gone = set(broker_ids)
        deadline = time.monotonic() + timeout_s
        admin = connect_admin(self.running_bootstrap, timeout_s=15.0, security=self.security())
        try:
            while True:
                info = retried(admin.describe_cluster)
                if not gone & {int(b["broker_id"]) for b in info["brokers"] if not b.get("is_fenced")}:
                    return
                if time.monotonic() > deadline:
                    raise ClusterError(f"brokers {sorted(gone)} still unfenced {timeout_s:.0f} s after they stopped",
                                       hint=f"see the controller logs under {self.state_dir}")
                time.sleep(0.5)
        finally:
            with quiet_kafka_logs():
                admin.close()

    def _serving(self, node_id: int) -> bool:
        """The broker answers requests on its own listener (a broker opens request processing only
        after it caught up with the metadata log and was unfenced, so a just-restarted broker that the
        controller still lists from before its kill does not count)."""
        try:
            probe = connect_admin(self.node(node_id).bootstrap, timeout_s=3.0, security=self.security())
        except (ClusterError, InputError):
            return False
        with quiet_kafka_logs():
            probe.close()
        return True

    def _metrics_up(self, node_id: int) -> bool:
        try:
            with urllib.request.urlopen(self.metrics_urls()[node_id], timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    def down(self, wipe: bool = False, timeout_s: float = 20.0) -> list[int]:
        """Stop the nodes this state dir started: brokers-only nodes first (they need the controllers
        for a controlled shutdown), then the controllers, each group at once with SIGTERM and SIGKILL
        after ``timeout_s``. ``wipe`` also deletes the state dir. Returns the ids that were stopped."""
        stopped: list[int] = []
        for group in ([n for n in self.nodes if not n.is_controller], [n for n in self.nodes if n.is_controller]):
            targets = {n.node_id: self.pids.get(n.node_id) for n in group}
            signalled = set(processes.stop_many(
                [(pid, self._marker(nid)) for nid, pid in targets.items() if pid], timeout_s=timeout_s))
            for nid, pid in targets.items():
                if pid in signalled:
                    stopped.append(nid)
                    self._log(f"stopped node {nid} (pid {pid})")
                self.pids[nid] = None
        if wipe:
            shutil.rmtree(self.state_dir, ignore_errors=True)
            self.nodes, self.pids, self.cluster_id = [], {}, None
        elif self.exists:
            self._write_state()
        return sorted(stopped)

    def kill_broker(self, node_id: int) -> None:
        """SIGKILL one node (fault injection)."""
        n = self.node(node_id)
        pid = self.pids.get(n.node_id)
        if not pid or not processes.stop_pid(pid, self._marker(node_id), hard=True):
            raise InputError(f"broker {node_id} is not running",
                             hint="`local-cluster status` lists the nodes")
        self.pids[node_id] = None
        self._write_state()
        self._log(f"killed broker {node_id} (pid {pid}, SIGKILL)")

    def start_broker(self, node_id: int, timeout_s: float = 120.0) -> float:
        """Start one stopped node again on its data and wait until it registered. Returns seconds."""
        n = self.node(node_id)
        t0 = time.monotonic()
        if self.is_running(node_id):
            raise InputError(f"broker {node_id} is already running (pid {self.pids.get(node_id)})")
        classpath, agent = _jars()
        processes.require_free(self._ports(n), wait_s=10.0)
        self._start_node(n, classpath, agent)
        self._write_state()
        self.wait_ready([node_id], timeout_s=timeout_s)
        return time.monotonic() - t0


def open_cluster(state_dir: Path, flag: str = "--state-dir") -> LocalCluster:
    """The cluster recorded in ``state_dir``; InputError naming ``flag`` if there is none."""
    try:
        c = LocalCluster(state_dir)
    except InputError as exc:
        if flag == "--state-dir" or not exc.message.startswith("--state-dir "):
            raise
        hint = exc.hint.replace("--state-dir", flag) if exc.hint else exc.hint
        raise InputError(flag + exc.message[len("--state-dir"):], hint=hint) from None
    if not c.exists:
        raise InputError(
            f"{'' if flag == '--state-dir' else flag + ': '}no local cluster in {Path(state_dir).resolve()}",
            hint=f"start one with `kafka-balancer local-cluster up` (or pass {flag})",
        )
    return c


__all__ = ["DEFAULT_BASE_PORT", "LocalCluster", "NodeStatus", "default_state_dir", "open_cluster"]
