"""Every command on a secured cluster (SASL_SSL, SCRAM, ACLs on): the session's ``secure_cluster``.

* the main path: collect (also to the samples topic), ``pipeline --from-kafka`` (a real SparkSession, the
  read-only user), plan, ``execute --yes`` verified against the cluster;
* a consumer group of ``group_worker`` processes with our ``balanced`` assignor: produced = consumed;
* the bad-security cases (wrong password, unknown mechanism, untrusted certificate, unreadable file,
  unsupported property): exit 2, one line and a hint, within ``--timeout``, no traceback;
* least privilege: the read-only user cannot execute (ALTER on the cluster), a user without DESCRIBE on
  the cluster cannot collect; nothing changes;
* client certificates from PKCS12, JKS and PEM stores;
* the secret check: no password and no key material in any file written or any output stream, including
  kafka-python's own DEBUG log.
"""

from __future__ import annotations

import base64
import io
import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest

from kafka_balancer.cli.main import main
from kafka_balancer.collect.admin import connect_admin
from kafka_balancer.consumer import group_worker
from kafka_balancer.errors import InputError
from kafka_balancer.security.clients import kafka_kwargs, spark_options
from kafka_balancer.security.settings import load_settings

pytestmark = [pytest.mark.kafka]

SAMPLES_TOPIC = "__kb_samples_secure"


def _run(capfd: pytest.CaptureFixture[str], argv: list[str], streams: list[str] | None = None) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capfd.readouterr()
    if streams is not None:
        streams += [out, err]
    return rc, out, err


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def _with(props: Path, dest: Path, **changes: str) -> Path:
    """A copy of a client.properties with some keys replaced (None-like '' removes)."""
    lines = [ln for ln in props.read_text().splitlines() if ln and not ln.startswith("#")]
    kv = dict(ln.split("=", 1) for ln in lines)
    for k, v in changes.items():
        key = k.replace("_", ".")
        if v == "":
            kv.pop(key, None)
        else:
            kv[key] = v
    return _write(dest, "".join(f"{k}={v}\n" for k, v in kv.items()))


def _assert_no_secrets(secrets: Iterable[str], files_under: Iterable[Path], streams: Iterable[str]) -> int:
    """No secret in any file under the folders nor in any captured stream; returns the files checked."""
    needles = [s.encode() for s in secrets if s]
    assert needles
    checked = 0
    for root in files_under:
        for f in [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()):
            data = f.read_bytes()
            checked += 1
            for n in needles:
                assert n not in data, f"a secret is in {f}"
    for s in streams:
        for n in needles:
            assert n.decode() not in s, "a secret is in an output stream"
    return checked


def _key_material(p12: Path, password: str) -> list[str]:
    """The private key of a PKCS12 store as the strings a leak would show: PEM body, DER as latin-1 and hex."""
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

    key = pkcs12.load_pkcs12(p12.read_bytes(), password.encode()).key
    assert key is not None
    der = key.private_bytes(Encoding.DER, PrivateFormat.PKCS8, NoEncryption())
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    body = "".join(pem.splitlines()[1:-1])
    return [body[:64], body[-64:], der.hex(), der[-32:].decode("latin-1")]


def _wait(cond: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _topic(admin: Any, name: str, parts: int, assignment: dict[int, list[int]] | None = None) -> None:
    from kafka.admin import NewTopic

    if assignment is None:
        admin.create_topics([NewTopic(name, parts, 2)])
    else:
        admin.create_topics([NewTopic(name, replica_assignments=assignment)])
    admin.wait_for_topics([name], timeout_ms=30000)


# ---- the main path --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.timeout(1200)  # Spark streaming: 2-4 min alone, up to 9 min on a 2-core machine under load 25+
def test_collect_stream_plan_execute_on_a_secured_cluster(secure_cluster: Any, spark: Any, tmp_path: Path,
                                                          capfd: pytest.CaptureFixture[str]) -> None:
    from kafka import KafkaProducer
    from kafka_balancer.pipeline import streaming
    from kafka_balancer.pipeline.config import PipelineConfig
    from kafka_balancer.pipeline.session import connector_jars

    admin_props, reader_props = secure_cluster.properties("admin"), secure_cluster.properties("reader")
    admin_settings = load_settings(admin_props)
    store_pw = admin_settings.keystore.password.reveal() if admin_settings.keystore and \
        admin_settings.keystore.password else ""
    key_material = _key_material(secure_cluster.tls_dir / "admin.p12", store_pw)
    admin = connect_admin(secure_cluster.bootstrap, security=admin_settings)
    secure_cluster._admins.append(admin)
    topic = "sec-skewed"
    _topic(admin, topic, 6, {p: [1, 2] if p % 2 == 0 else [2, 1] for p in range(6)})  # broker 3 holds nothing

    # kafka-python's own DEBUG log is kept too: it prints whole client configurations
    debug_log = io.StringIO()
    handler = logging.StreamHandler(debug_log)
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    stop, started = threading.Event(), threading.Event()

    def produce() -> None:
        prod = KafkaProducer(bootstrap_servers=secure_cluster.bootstrap, acks=1, linger_ms=5,
                             **kafka_kwargs(admin_settings))
        started.set()
        while not stop.is_set():
            for p in range(6):
                for _ in range(6 - p):
                    prod.send(topic, b"v" * 2000, partition=p)
            time.sleep(0.05)
        prod.flush()
        prod.close()

    streams: list[str] = []
    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    # the producer logs its start before collect's connection probe routes the kafka logger elsewhere
    assert started.wait(60), "the producer did not start"
    try:
        from kafka.admin import KafkaAdminClient

        # kafka-python logs an admin client's whole configuration at DEBUG, password included unless redacted
        KafkaAdminClient(bootstrap_servers=secure_cluster.bootstrap, **kafka_kwargs(admin_settings)).close()
        time.sleep(2)
        samples, metrics = tmp_path / "samples", secure_cluster.cluster.metrics_urls()
        rc, out, err = _run(capfd, [
            "collect", "--bootstrap", secure_cluster.bootstrap, "--command-config", str(admin_props),
            "--metrics", ",".join(f"{b}={u}" for b, u in metrics.items()), "--interval", "1s", "--rounds", "10",
            "--out", str(samples), "--topic", SAMPLES_TOPIC], streams)
        assert rc == 0, err
        assert "10 rounds" in out
    finally:
        stop.set()
        producer.join(30)
        root.removeHandler(handler)
        root.setLevel(old_level)
    streams.append(debug_log.getvalue())
    logged = debug_log.getvalue()
    assert "Starting Kafka producer" in logged  # kafka-python's DEBUG log was captured ...
    assert "Starting KafkaAdminClient with configuration" in logged and "'<redacted>'" in logged  # ... redacted

    # pipeline --from-kafka: the Spark Kafka source with the read-only user's kafka.* options
    if not connector_jars():
        pytest.skip("the spark_kafka jars are not in the cache (run `kafka-balancer setup-jvm`)")
    reader = load_settings(reader_props)
    opts = spark_options(reader)
    assert opts["kafka.security.protocol"] == "SASL_SSL" and opts["kafka.sasl.mechanism"] == "SCRAM-SHA-256"
    cfg = PipelineConfig(window_ms=3_000, windows=2, min_valid_ratio=0.5)
    source = streaming.kafka_source(spark, secure_cluster.bootstrap, SAMPLES_TOPIC, options=opts)
    job = streaming.start(spark, source, cfg, tmp_path / "state", lateness_ms=0, trigger={"availableNow": True})
    job.await_all(300)
    emitted = streaming.emit_ready_windows(spark, tmp_path / "state", tmp_path / "stream", cfg)
    assert emitted, "no window came out of the Kafka stream"
    snap_path = tmp_path / "stream" / f"snapshot-{emitted[-1]}.json"
    snap = orjson.loads(snap_path.read_bytes())
    loads = {p["partition"]: p["load"]["leader"]["nw_in"] for p in snap["partitions"] if p["topic"] == topic}
    assert set(loads) == set(range(6)) and loads[0] > loads[5] > 0  # the skew that was produced

    # plan, then execute --yes with the admin's settings; verified against the cluster
    plan_path = tmp_path / "plan.json"
    rc, out, err = _run(capfd, ["plan", "--snapshot", str(snap_path), "--out", str(plan_path),
                                "--time-limit", "10"], streams)
    assert rc == 0, err
    plan = orjson.loads(plan_path.read_bytes())["partitions"]
    assert any(3 in e["replicas"] for e in plan), "the plan should use the empty broker 3"
    journal = tmp_path / "executor" / "journal.jsonl"
    rc, out, err = _run(capfd, ["execute", "--plan", str(plan_path), "--bootstrap", secure_cluster.bootstrap,
                                "--command-config", str(admin_props), "--journal", str(journal), "--yes",
                                "--no-progress", "--poll", "0.5"], streams)
    assert rc == 0, err
    assert out.startswith("verified"), out
    described = {(t["name"], p["partition_index"]): [int(b) for b in p["replica_nodes"]]
                 for t in admin.describe_topics(sorted({e["topic"] for e in plan})) for p in t["partitions"]}
    for e in plan:
        assert described[(e["topic"], e["partition"])] == e["replicas"]

    # the secret check: every file written (samples, stream state and tables, snapshot, report, plan,
    # journal) and every output stream, kafka-python's DEBUG log included
    written = [tmp_path]
    checked = _assert_no_secrets(secure_cluster.secrets() + key_material, written, streams)
    assert checked > 10


# ---- a consumer group with our assignor --------------------------------------------------------------------------
def test_balanced_group_consumes_everything_produced(secure_cluster: Any, tmp_path: Path) -> None:
    from kafka import KafkaProducer

    admin_props = secure_cluster.properties("admin")
    settings = load_settings(admin_props)
    admin = connect_admin(secure_cluster.bootstrap, security=settings)
    secure_cluster._admins.append(admin)
    topic, group = "sec-group", "sec-group-balanced"
    _topic(admin, topic, 4)
    outs = [tmp_path / f"w{i}.log" for i in range(2)]
    procs = [group_worker.spawn(secure_cluster.bootstrap, group, topic, o, "balanced", command_config=admin_props)
             for o in outs]
    try:
        try:
            _wait(lambda: all(o.exists() and "# assigned" in o.read_text() for o in outs), 120, "2 workers assigned")
        except AssertionError:
            for o in outs:
                print(o, group_worker.err_path(o).read_text()[-3000:])
            raise
        producer = KafkaProducer(bootstrap_servers=secure_cluster.bootstrap, acks="all", **kafka_kwargs(settings))
        total = 0
        for p in range(4):
            for i in range(50 * (p + 1)):
                producer.send(topic, value=str(i).encode(), partition=p)
                total += 1
        producer.flush()
        producer.close()

        def consumed() -> set[tuple[int, int]]:
            seen: set[tuple[int, int]] = set()
            for o in outs:
                for line in o.read_text().splitlines():
                    if line.strip() and not line.startswith("#"):
                        p, off = line.split()[:2]
                        seen.add((int(p), int(off)))
            return seen

        _wait(lambda: len(consumed()) >= total, 90, "the group to consume everything")
        assert len(consumed()) == total
        assigned = [ln for o in outs for ln in o.read_text().splitlines() if ln.startswith("# assigned")]
        assert len(assigned) >= 2
    finally:
        group_worker.stop(procs)
    errs = [group_worker.err_path(o).read_text() for o in outs]
    _assert_no_secrets(secure_cluster.secrets(), [tmp_path], errs)


# ---- the balancer service ------------------------------------------------------------------------------------------
def test_the_service_samples_and_executes_on_a_secured_cluster(secure_cluster: Any, tmp_path: Path) -> None:
    """``serve --command-config``: the sampler and the executor with the admin's SASL_SSL settings; an
    operator's demotion of broker 1 (the session's other topics excluded: whether a rebalance finds anything
    to move depends on what the earlier tests left on the shared cluster, a demotion of the broker that leads
    half of this test's topic always does) runs and is verified; no secret in the state directory, the
    service's log lines or its API."""
    import urllib.error
    import urllib.request

    from kafka import KafkaProducer
    from kafka_balancer.serve.config import ServeConfig
    from kafka_balancer.serve.runtime import start

    admin_props = secure_cluster.properties("admin")
    settings = load_settings(admin_props)
    admin = connect_admin(secure_cluster.bootstrap, security=settings)
    secure_cluster._admins.append(admin)
    topic = "sec-serve"
    _topic(admin, topic, 4, {p: [1, 2] if p % 2 == 0 else [2, 1] for p in range(4)})  # nothing on broker 3
    producer = KafkaProducer(bootstrap_servers=secure_cluster.bootstrap, acks="all", **kafka_kwargs(settings))
    for i in range(400):
        producer.send(topic, value=b"s" * 2500, partition=i % 4)
    producer.flush()
    producer.close()
    said: list[str] = []
    cfg = ServeConfig(bootstrap=secure_cluster.bootstrap, command_config=admin_props, state_dir=tmp_path / "serve",
                      interval_s=1.0, window_s=4.0, token="sec-tok", eps=0.1,
                      capacity={"cpu": 100.0, "disk": 1e7, "nw_in": 1e6, "nw_out": 1e6})
    s = start(cfg, model_source="sizes", port=0, say=said.append)

    def api(path: str, body: dict[str, Any] | None = None) -> Any:
        req = urllib.request.Request(s.http.url + path, data=orjson.dumps(body) if body is not None else None,
                                     method="POST" if body is not None else "GET",
                                     headers={"Authorization": "Bearer sec-tok", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return orjson.loads(r.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{path}: HTTP {e.code} {e.read().decode()}") from None

    try:
        _wait(lambda: s.service.rounds >= 2 and s.service.model.snap is not None, 60, "two sampling rounds")
        state = api("/api/state")
        assert state["brokers_alive"] == [1, 2, 3] and state["sample_errors"] == 0, state
        # operators' requests wait while partitions are under-replicated (a guard), as after the earlier tests'
        # executions on this shared cluster they briefly may be
        _wait(lambda: api("/api/state")["under_replicated"] == 0, 60, "no under-replicated partition")
        r = api("/api/demote-brokers", {"brokers": [1], "dry_run": False, "excluded_topics": f"(?!{topic}$).*"})
        moves = r["proposal"]["moves"]
        assert len(moves) == 2 and all(m["topic"] == topic and m["to"] == [2, 1] for m in moves), moves
        _wait(lambda: bool(s.service.executions.get(r["execution"], {}).get("ended")), 120, "the execution")
        ex = s.service.executions[r["execution"]]
        assert ex["state"] == "finished" and ex["verified"], ex
        (t,) = admin.describe_topics([topic])
        lead = {p["partition_index"]: (int(p["leader_id"]), [int(b) for b in p["replica_nodes"]])
                for p in t["partitions"]}
        assert all(lead[p] == (2, [2, 1]) for p in range(4)), lead  # broker 1 leads none of them now
        streams = [*said, orjson.dumps(api("/api/state")).decode(), orjson.dumps(api("/api/executions")).decode()]
    finally:
        s.stop()
    _assert_no_secrets(secure_cluster.secrets(), [tmp_path], streams)


# ---- bad security settings -------------------------------------------------------------------------------------
def _other_ca(tmp_path: Path) -> Path:
    ca = tmp_path / "other-ca.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(tmp_path / "other-ca.key"), "-out", str(ca), "-days", "2", "-subj", "/CN=other"],
                   check=True, capture_output=True)
    return ca


def test_bad_security_settings_fail_in_one_line(secure_cluster: Any, tmp_path: Path,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    reader = secure_cluster.properties("reader")
    jaas = load_settings(reader)
    password = jaas.password.reveal() if jaas.password else ""
    wrong = reader.read_text().replace(f'password="{password}"', 'password="not-the-password"')
    cases = {
        "wrong password": (_write(tmp_path / "wrong.properties", wrong), "SASL authentication failed"),
        "unknown mechanism": (_with(reader, tmp_path / "mech.properties", sasl_mechanism="SCRAM-SHA-1"),
                              "mechanism 'SCRAM-SHA-1' is not supported"),
        "untrusted certificate": (_with(reader, tmp_path / "ca.properties",
                                        ssl_truststore_location=str(_other_ca(tmp_path))), "is not trusted"),
        "unreadable file": (tmp_path / "missing.properties", "cannot read it"),
        "no client certificate": (_with(reader, tmp_path / "nocert.properties", ssl_keystore_type="",
                                        ssl_keystore_location="", ssl_keystore_password=""),
                                  "requires a client certificate"),
        "unsupported property": (_with(reader, tmp_path / "prop.properties",
                                       ssl_cipher_suites="TLS_AES_128_GCM_SHA256"),
                                 "ssl.cipher.suites: this property is not supported"),
    }
    streams: list[str] = []
    timeout = 6.0
    for name, (props, expected) in cases.items():
        t0 = time.monotonic()
        rc, _out, err = _run(capfd, ["collect", "--bootstrap", secure_cluster.bootstrap, "--command-config",
                                    str(props), "--rounds", "1", "--out", str(tmp_path / "s"),
                                    "--timeout", str(timeout)], streams)
        took = time.monotonic() - t0
        errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
        assert rc == 2, (name, err)
        assert len(errors) == 1 and expected in errors[0], (name, err)
        assert "  hint: " in err and "Traceback" not in err, (name, err)
        assert took < timeout + 3, (name, took)
    # the same settings on other commands: the shared option, the same errors
    for argv in (["consumers", "advise", "--group", "g", "--bootstrap", secure_cluster.bootstrap],
                 ["group", "locate", "--group", "g", "--bootstrap", secure_cluster.bootstrap],
                 ["execute", "--plan", str(tmp_path / "p.json"), "--bootstrap", secure_cluster.bootstrap],
                 ["cancel", "--all", "--bootstrap", secure_cluster.bootstrap]):
        # (a plan that moves something: an empty one is said without contacting the cluster)
        (tmp_path / "p.json").write_text('{"version": 1, "partitions": [{"topic": "t", "partition": 0, '
                                         '"replicas": [0]}]}')
        rc, _, err = _run(capfd, [*argv, "--command-config", str(cases["wrong password"][0]), "--timeout", "6"],
                          streams)
        assert rc == 2 and "SASL authentication failed" in err, (argv, err)
    _assert_no_secrets([password, "not-the-password"], [tmp_path / "s"] if (tmp_path / "s").exists() else [],
                       streams)


# ---- least privilege -------------------------------------------------------------------------------------------
def test_missing_acls_are_named_before_anything_changes(secure_cluster: Any, tmp_path: Path,
                                                       capfd: pytest.CaptureFixture[str]) -> None:
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePattern,
        ResourceType,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin_settings = load_settings(secure_cluster.properties("admin"))
    admin = connect_admin(secure_cluster.bootstrap, security=admin_settings)
    secure_cluster._admins.append(admin)
    topic = "sec-acl"
    _topic(admin, topic, 2, {0: [1, 2], 1: [2, 3]})
    before = {p["partition_index"]: p["replica_nodes"] for p in admin.describe_topics([topic])[0]["partitions"]}
    plan = _write(tmp_path / "plan.json", orjson.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [3, 1]}]}).decode())
    journal = tmp_path / "j" / "journal.jsonl"
    streams: list[str] = []

    # the read-only user may look (collect, dry run) but not execute: ALTER on the cluster is named
    reader = secure_cluster.properties("reader")
    rc, _, err = _run(capfd, ["collect", "--bootstrap", secure_cluster.bootstrap, "--command-config", str(reader),
                                "--rounds", "1", "--out", str(tmp_path / "s")], streams)
    assert rc == 0, err
    rc, _, err = _run(capfd, ["execute", "--plan", str(plan), "--bootstrap", secure_cluster.bootstrap,
                                "--command-config", str(reader), "--journal", str(journal), "--yes"], streams)
    assert rc == 2, err
    assert "ALTER on the cluster is not granted" in err and "user 'reader'" in err, err
    assert not journal.exists()
    rc, _, err = _run(capfd, ["cancel", "--all", "--bootstrap", secure_cluster.bootstrap,
                                "--command-config", str(reader)], streams)
    assert rc == 2 and "ALTER on the cluster" in err, err
    after = {p["partition_index"]: p["replica_nodes"] for p in admin.describe_topics([topic])[0]["partitions"]}
    assert after == before

    # a user with DESCRIBE on topics only cannot collect: DESCRIBE on the cluster is named
    admin.alter_user_scram_credentials([UserScramCredentialUpsertion("peek", ScramMechanism.SCRAM_SHA_256,
                                                                     "peek-password-1234")])
    admin.create_acls([ACL("User:peek", "*", ACLOperation.DESCRIBE, ACLPermissionType.ALLOW,
                           ResourcePattern(ResourceType.TOPIC, "*", ACLResourcePatternType.LITERAL))])
    peek = _with(reader, tmp_path / "peek.properties", sasl_jaas_config=(
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="peek" '
        'password="peek-password-1234";'))
    deadline = time.monotonic() + 30
    while True:  # SCRAM credentials reach every broker through the metadata log
        rc, _out, err = _run(capfd, ["collect", "--bootstrap", secure_cluster.bootstrap, "--command-config",
                                    str(peek), "--rounds", "1", "--out", str(tmp_path / "s2"), "--timeout", "6"],
                            streams)
        if "SASL authentication failed" not in err or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert rc == 2, err
    assert "DESCRIBE on the cluster is not granted" in err and "user 'peek'" in err, err
    assert not any((tmp_path / "s2").glob("samples-*")) if (tmp_path / "s2").exists() else True


# ---- client certificates ---------------------------------------------------------------------------------------
def test_client_certificates_from_pkcs12_jks_and_pem(secure_cluster: Any, tmp_path: Path) -> None:
    admin_props, tls = secure_cluster.properties("admin"), secure_cluster.tls_dir
    ks = load_settings(admin_props).keystore
    assert ks is not None and ks.password is not None
    pw = ks.password.reveal()
    keytool = shutil.which("keytool")
    assert keytool, "the JDK's keytool is needed"
    jks = tmp_path / "admin.jks"
    subprocess.run([keytool, "-importkeystore", "-noprompt", "-srckeystore", str(tls / "admin.p12"),
                    "-srcstoretype", "PKCS12", "-srcstorepass:env", "PW", "-destkeystore", str(jks),
                    "-deststoretype", "JKS", "-deststorepass:env", "PW"],
                   check=True, capture_output=True, env={"PW": pw, "PATH": "/usr/bin:/bin"})
    truststore_jks = tmp_path / "trust.jks"
    subprocess.run([keytool, "-importcert", "-noprompt", "-file", str(tls / "ca.pem"), "-alias", "ca",
                    "-keystore", str(truststore_jks), "-storetype", "JKS", "-storepass:env", "PW"],
                   check=True, capture_output=True, env={"PW": pw, "PATH": "/usr/bin:/bin"})
    variants = {
        "pkcs12": dict(ssl_keystore_type="PKCS12", ssl_keystore_location=str(tls / "admin.p12"),
                       ssl_keystore_password=pw),
        "jks": dict(ssl_keystore_type="JKS", ssl_keystore_location=str(jks), ssl_keystore_password=pw,
                    ssl_truststore_type="JKS", ssl_truststore_location=str(truststore_jks),
                    ssl_truststore_password=pw),
        "pem": dict(ssl_keystore_type="PEM", ssl_keystore_location=str(tls / "admin.pem"), ssl_key_password=pw,
                    ssl_keystore_password=""),
    }
    for name, changes in variants.items():
        props = _with(admin_props, tmp_path / f"{name}.properties", **changes)
        settings = load_settings(props)
        assert settings.keystore is not None and settings.keystore.type == name.upper()
        admin = connect_admin(secure_cluster.bootstrap, timeout_s=10, security=settings)
        try:
            assert len(admin.describe_cluster()["brokers"]) == 3
        finally:
            admin.close()
    # a certificate from a CA the brokers do not trust is refused by the listener (it verifies what is shown)
    other_key, other_crt = tmp_path / "o.key", tmp_path / "o.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(other_key), "-out", str(other_crt), "-days", "2", "-subj", "/CN=intruder"],
                   check=True, capture_output=True)
    pem = _write(tmp_path / "intruder.pem", other_key.read_text() + other_crt.read_text())
    props = _with(admin_props, tmp_path / "intruder.properties", ssl_keystore_type="PEM",
                  ssl_keystore_location=str(pem), ssl_keystore_password="")
    with pytest.raises(InputError) as info:
        connect_admin(secure_cluster.bootstrap, timeout_s=6, security=load_settings(props)).close()
    assert "rejected our client certificate" in info.value.message, info.value.message
    key_body = "".join(other_key.read_text().splitlines()[1:-1])
    assert base64.b64decode(key_body)  # the key material checked below is real
    _assert_no_secrets([pw, key_body], [], [str(info.value), repr(load_settings(props))])
