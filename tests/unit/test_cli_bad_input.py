"""Bad input to every subcommand: exit 2 (input) or 1 (cluster), one clear line naming the offending
file, field, broker, partition or flag, and never a traceback.

Runs ``main(argv)`` in-process. Nothing here may start a cluster or Spark: those entry points are patched to
fail the test loudly if a case ever gets that far. The only network traffic is to 127.0.0.1:1 (closed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_balancer.cli.main import main

CLOSED = "127.0.0.1:1"

SNAP = {
    "version": 1,
    "brokers": [
        {"id": 0, "rack": None, "host": "h0", "alive": True,
         "capacity": {"cpu": 100.0, "disk": 1e12, "nw_in": 1e8, "nw_out": 1e8}},
        {"id": 1, "rack": None, "host": "h1", "alive": True,
         "capacity": {"cpu": 100.0, "disk": 1e12, "nw_in": 1e8, "nw_out": 1e8}},
    ],
    "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [0, 1], "leader": 0,
         "load": {"leader": {"cpu": 1.0, "disk": 1e9, "nw_in": 1e5, "nw_out": 2e5},
                  "follower": {"cpu": 0.5, "disk": 1e9, "nw_in": 1e5, "nw_out": 0.0}}},
    ],
}
GROUP = {"members": [{"id": "c1", "topics": ["t"]}, {"id": "c2", "topics": ["t"]}],
         "partitions": [{"topic": "t", "partition": 0, "load": 1.0}]}
PLAN = {"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 0]}]}


def _edit(doc: dict[str, Any], fn: Callable[[Any], None]) -> str:
    d = json.loads(json.dumps(doc))
    fn(d)
    return json.dumps(d)


FILES: dict[str, str | bytes] = {
    "empty.json": "",
    "bad.json": "{not json",
    "list.json": "[1, 2]",
    "obj.json": '{"a": 1}',
    "binary.json": b"\xff\xfe{",
    "snap.json": json.dumps(SNAP),
    "plan.json": json.dumps(PLAN),
    "group.json": json.dumps(GROUP),
    "regular": "x",
    "s_negcap.json": _edit(SNAP, lambda d: d["brokers"][0]["capacity"].__setitem__("cpu", -5)),
    "s_strcap.json": _edit(SNAP, lambda d: d["brokers"][1]["capacity"].__setitem__("disk", "big")),
    "s_nan.json": json.dumps(SNAP).replace('"cpu": 1.0', '"cpu": NaN'),
    "s_inf.json": json.dumps(SNAP).replace('"cpu": 1.0', '"cpu": 1e999'),
    "s_brokers_obj.json": _edit(SNAP, lambda d: d.__setitem__("brokers", {"0": {}})),
    "s_badreplica.json": _edit(SNAP, lambda d: d["partitions"][0].__setitem__("replicas", [0, 7])),
    "s_leader.json": _edit(SNAP, lambda d: d["partitions"][0].__setitem__("leader", 5)),
    "s_noload.json": _edit(SNAP, lambda d: d["partitions"][0].pop("load")),
    "s_bigpart.json": _edit(SNAP, lambda d: d["partitions"][0].__setitem__("partition", 2**40)),
    "s_name.json": _edit(SNAP, lambda d: d.__setitem__("name", 5)),
    "s_alldead.json": _edit(SNAP, lambda d: [b.__setitem__("alive", False) for b in d["brokers"]]),
    "g_start.json": _edit(GROUP, lambda d: d["members"][0].__setitem__("start_ms", "soon")),
    "g_cap.json": _edit(GROUP, lambda d: d["members"][0].__setitem__("capacity", "fast")),
    "g_caplist.json": _edit(GROUP, lambda d: d["members"][0].__setitem__("capacity", [1])),
    "g_owned.json": _edit(GROUP, lambda d: d["members"][0].__setitem__("owned", [["t", "x"]])),
    "g_loadneg.json": _edit(GROUP, lambda d: d["partitions"][0].__setitem__("load", -1)),
    "g_loadbool.json": _edit(GROUP, lambda d: d["partitions"][0].__setitem__("load", True)),
    "g_topics.json": _edit(GROUP, lambda d: d["members"][0].__setitem__("topics", "t")),
    "p_reps.json": json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": ["1"]}]}),
    "j_list.jsonl": "[1, 2]\n[3]\n",
    "c_bad.properties": "session.timeout.ms=abc\n",
    "c_neg.properties": "session.timeout.ms=-5\n",
    "c_noeq.properties": "justakey\n",
    "c_bin.properties": b"\xff\xfe\x00a=b",
    "caps.json": '{"default": {"cpu": 100}}',
    "caps_list.json": "[1]",
    "caps_str.json": '{"default": {"cpu": "x"}}',
    "caps_neg.json": '{"default": {"cpu": -1}}',
    "caps_bid.json": '{"brokers": {"abc": {"cpu": 1}}}',
}

# (argv with {d} for the scratch folder, expected exit code, text the message must contain)
CASES: list[tuple[list[str], int, str]] = [
    # plan: files
    (["plan", "--snapshot", "{d}/nope.json", "--out", "{d}/o.json"], 2, "nope.json: no such file"),
    (["plan", "--snapshot", "{d}/adir", "--out", "{d}/o.json"], 2, "adir is a directory"),
    (["plan", "--snapshot", "{d}/empty.json", "--out", "{d}/o.json"], 2, "empty.json is empty"),
    (["plan", "--snapshot", "{d}/bad.json", "--out", "{d}/o.json"], 2, "bad.json: not valid JSON"),
    (["plan", "--snapshot", "{d}/binary.json", "--out", "{d}/o.json"], 2, "binary.json is UTF-16 text"),
    (["plan", "--snapshot", "{d}/list.json", "--out", "{d}/o.json"], 2, "must be a JSON object"),
    (["plan", "--snapshot", "{d}/obj.json", "--out", "{d}/o.json"], 2, "field 'version' is missing"),
    (["plan", "--snapshot", "{d}/s_negcap.json", "--out", "{d}/o.json"], 2, "broker 0: capacity.cpu is -5"),
    (["plan", "--snapshot", "{d}/s_strcap.json", "--out", "{d}/o.json"], 2, "broker 1: capacity.disk is 'big'"),
    (["plan", "--snapshot", "{d}/s_nan.json", "--out", "{d}/o.json"], 2, "s_nan.json: not valid JSON"),
    (["plan", "--snapshot", "{d}/s_inf.json", "--out", "{d}/o.json"], 2, "s_inf.json: not valid JSON"),
    (["plan", "--snapshot", "{d}/s_brokers_obj.json", "--out", "{d}/o.json"], 2, "'brokers' must be"),
    (["plan", "--snapshot", "{d}/s_badreplica.json", "--out", "{d}/o.json"], 2, "orders-0: replicas[1] is 7"),
    (["plan", "--snapshot", "{d}/s_leader.json", "--out", "{d}/o.json"], 2, "orders-0: leader 5"),
    (["plan", "--snapshot", "{d}/s_noload.json", "--out", "{d}/o.json"], 2, "orders-0: field 'load'"),
    (["plan", "--snapshot", "{d}/s_bigpart.json", "--out", "{d}/o.json"], 2, "partition is 1099511627776"),
    (["plan", "--snapshot", "{d}/s_name.json", "--out", "{d}/o.json"], 2, "name is 5"),
    # plan: outputs and options
    (["plan", "--snapshot", "{d}/snap.json", "--out", "/proc/x/y.json"], 2, "--out /proc/x/y.json"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--goals", "usage_band,capacity,distribution"], 2,
     "--goals: usage_band must come last, after capacity and distribution"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/regular/y.json"], 2, "regular is a file"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/adir"], 2, "--out {d}/adir is a directory"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--plot", "/proc/x/p.png"], 2, "--plot"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--theta", "0"], 2, "--theta"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--theta", "1.5"], 2, "--theta"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--eps", "-1"], 2, "--eps"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--eps", "nan"], 2, "--eps"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--time-limit", "0"], 2, "--time-limit"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--time-limit", "nan"], 2, "--time-limit"),
    (["plan", "--snapshot", "{d}/snap.json", "--out", "{d}/o.json", "--polish", "-1"], 2, "--polish"),
    (["plan", "--snapshot", "{d}/s_alldead.json", "--out", "{d}/o.json"], 2, "has no live broker"),
    # assign
    (["assign", "--input", "{d}/nope.json", "--strategy", "paper"], 2, "nope.json"),
    (["assign", "--input", "{d}/adir", "--strategy", "paper"], 2, "adir"),
    (["assign", "--input", "{d}/empty.json", "--strategy", "paper"], 2, "empty.json is empty"),
    (["assign", "--input", "{d}/list.json", "--strategy", "paper"], 2, "list.json must be a JSON object"),
    (["assign", "--input", "{d}/obj.json", "--strategy", "paper"], 2, "field 'members' is missing"),
    (["assign", "--input", "{d}/group.json", "--strategy", "nosuch"], 2, "--strategy"),
    (["assign", "--input", "{d}/group.json", "--strategy", "balanced", "--max-moves", "-1"], 2, "--max-moves"),
    (["assign", "--input", "{d}/group.json", "--strategy", "balanced", "--tolerance", "nan"], 2, "--tolerance"),
    (["assign", "--input", "{d}/group.json", "--strategy", "balanced", "--tolerance", "inf"], 2, "--tolerance"),
    (["assign", "--input", "{d}/g_start.json", "--strategy", "paper"], 2, "member 'c1': start_ms"),
    (["assign", "--input", "{d}/g_cap.json", "--strategy", "paper"], 2, "member 'c1': capacity is 'fast'"),
    (["assign", "--input", "{d}/g_caplist.json", "--strategy", "balanced"], 2, "member 'c1': capacity is [1]"),
    (["assign", "--input", "{d}/g_owned.json", "--strategy", "paper"], 2, "member 'c1': owned[0] partition is 'x'"),
    (["assign", "--input", "{d}/g_loadneg.json", "--strategy", "paper"], 2, "partition t-0: load is -1"),
    (["assign", "--input", "{d}/g_loadbool.json", "--strategy", "paper"], 2, "partition t-0: load is True"),
    (["assign", "--input", "{d}/g_topics.json", "--strategy", "paper"], 2, "member 'c1': topics must be a JSON list"),
    # execute / cancel
    (["execute", "--plan", "{d}/adir", "--bootstrap", CLOSED, "--timeout", "1"], 2, "adir is a directory"),
    (["execute", "--plan", "{d}/bad.json", "--bootstrap", CLOSED, "--timeout", "1"], 2, "bad.json: not valid JSON"),
    (["execute", "--plan", "{d}/list.json", "--bootstrap", CLOSED, "--timeout", "1"], 2, "list.json: a plan is"),
    (["execute", "--plan", "{d}/p_reps.json", "--bootstrap", CLOSED, "--timeout", "1"], 2, "t-0: replicas"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", "nohostport"], 2, "bad --bootstrap 'nohostport'"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--timeout", "nan"], 2, "--timeout"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--timeout", "0"], 2, "--timeout"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--throttle", "inf"], 2, "--throttle"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--throttle", "nan"], 2, "--throttle"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--max-per-broker", "0"], 2, "--max-per-broker"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--poll", "0"], 2, "--poll"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--stall-timeout", "-5"], 2, "--stall-timeout"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--timeout", "1", "--yes",
      "--journal", "/proc/x/j.jsonl"], 2, "--journal /proc/x/j.jsonl"),
    (["execute", "--resume", "--bootstrap", CLOSED, "--journal", "{d}/none.jsonl"], 2, "no unfinished execution"),
    (["execute", "--resume", "--bootstrap", CLOSED, "--journal", "{d}/adir"], 2, "--journal {d}/adir is a directory"),
    (["execute", "--resume", "--bootstrap", CLOSED, "--journal", "{d}/j_list.jsonl"], 2, "j_list.jsonl:1"),
    (["execute", "--plan", "{d}/plan.json", "--bootstrap", CLOSED, "--timeout", "1"], 1, "cannot reach Kafka"),
    (["cancel", "--bootstrap", CLOSED, "--timeout", "1", "--all"], 1, "cannot reach Kafka at 127.0.0.1:1"),
    (["cancel", "--bootstrap", CLOSED, "--journal", "{d}/adir"], 2, "--journal {d}/adir is a directory"),
    (["cancel", "--bootstrap", CLOSED, "--journal", "{d}/j_list.jsonl"], 2, "not a journal record"),
    (["cancel", "--bootstrap", CLOSED, "--journal", "{d}/none.jsonl"], 2, "no unfinished execution"),
    (["cancel", "--bootstrap", CLOSED, "--timeout", "-1", "--all"], 2, "--timeout"),
    # collect / workload
    (["collect", "--bootstrap", CLOSED, "--timeout", "1", "--rounds", "1", "--out", "{d}/s"], 1, "cannot reach"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "0", "--out", "{d}/s"], 2, "--rounds"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "1", "--interval", "nan", "--out", "{d}/s"], 2, "'nan'"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "1", "--interval", "0", "--out", "{d}/s"], 2, "--interval 0"),
    (["collect", "--bootstrap", CLOSED, "--duration", "inf", "--out", "{d}/s"], 2, "'inf'"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "1", "--timeout", "nan", "--out", "{d}/s"], 2, "--timeout"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "1", "--out", "/proc/x/y"], 2, "--out /proc/x/y"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "1", "--out", "{d}/regular"], 2, "regular is a file"),
    (["collect", "--bootstrap", CLOSED, "--rounds", "1", "--out", "{d}/s", "--metrics", "1=nourl"], 2, "broker 1"),
    (["collect", "--local-cluster", "{d}/nolc", "--rounds", "1", "--out", "{d}/s"], 2, "no local cluster in"),
    (["collect", "--rounds", "1", "--out", "{d}/s"], 2, "--bootstrap"),
    (["workload", "--bootstrap", CLOSED, "--scale", "nan"], 2, "--scale"),
    (["workload", "--bootstrap", CLOSED, "--scale", "0"], 2, "--scale"),
    (["workload", "--bootstrap", CLOSED, "--replication", "0"], 2, "--replication"),
    (["workload", "--bootstrap", CLOSED, "--drain-timeout", "-1"], 2, "--drain-timeout"),
    (["workload", "--bootstrap", CLOSED, "--duration", "abc"], 2, "--duration 'abc' is not a duration"),
    (["workload", "--local-cluster", "{d}/nolc"], 2, "no local cluster in"),
    (["workload", "--bootstrap", CLOSED, "--timeout", "nan"], 2, "--timeout"),
    (["workload", "--bootstrap", CLOSED, "--timeout", "1", "--duration", "1s"], 1, "cannot reach Kafka at 127.0.0.1:1"),
    # consumers / group
    (["consumers", "advise", "--group", "g", "--bootstrap", CLOSED, "--timeout", "1"], 1, "cannot reach Kafka"),
    (["consumers", "advise", "--group", "g", "--bootstrap", "bad"], 2, "bad --bootstrap 'bad'"),
    (["consumers", "advise", "--group", "g", "--bootstrap", CLOSED, "--samples", "1"], 2, "--samples"),
    (["consumers", "advise", "--group", "g", "--bootstrap", CLOSED, "--interval-s", "nan"], 2, "--interval-s"),
    (["consumers", "advise", "--group", "g", "--bootstrap", CLOSED, "--target-util", "nan"], 2, "--target-util"),
    (["consumers", "advise", "--group", "g", "--bootstrap", CLOSED, "--per-consumer", "-5"], 2, "--per-consumer"),
    (["consumers", "advise", "--group", "", "--bootstrap", CLOSED], 2, "--group is empty"),
    (["group", "locate", "--group", "g", "--bootstrap", CLOSED, "--timeout", "1"], 1, "cannot reach Kafka"),
    (["group", "locate", "--group", "g", "--partitions", "0"], 2, "--partitions"),
    (["group", "locate", "--group", "g"], 2, "--bootstrap"),
    (["group", "doctor", "--config", "{d}/nope.properties"], 2, "nope.properties"),
    (["group", "doctor", "--config", "{d}/adir"], 2, "adir"),
    (["group", "doctor", "--config", "{d}/c_bad.properties"], 2, "session.timeout.ms='abc'"),
    (["group", "doctor", "--config", "{d}/c_neg.properties"], 2, "session.timeout.ms='-5'"),
    (["group", "doctor", "--config", "{d}/c_noeq.properties"], 2, "c_noeq.properties:1"),
    (["group", "doctor", "--config", "{d}/c_bin.properties"], 2, "c_bin.properties is not UTF-8 text"),
    (["group", "doctor", "--config", "{d}/empty.json", "--processing-ms", "-5"], 2, "--processing-ms"),
    (["group", "doctor", "--config", "{d}/empty.json", "--per-record-ms", "inf"], 2, "--per-record-ms"),
    # simulate
    (["simulate", "cluster", "--preset", "paper", "--out", "/proc/x/y.json"], 2, "--out /proc/x/y.json"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/regular/y.json"], 2, "regular is a file"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/adir"], 2, "is a directory"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/g.json", "--brokers", "0"], 2, "--brokers"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/g.json", "--topics", "0"], 2, "--topics"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/g.json", "--partitions", "0"], 2, "--partitions"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/g.json", "--brokers-per-host", "0"], 2,
     "--brokers-per-host"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/g.json", "--restarted-brokers", "9"], 2,
     "--restarted-brokers"),
    (["simulate", "cluster", "--preset", "paper", "--out", "{d}/g.json", "--seed", "-1"], 2, "--seed"),
    (["simulate", "cluster", "--preset", "nosuch", "--out", "{d}/g.json"], 2, "--preset"),
    (["simulate", "consumers", "--out", "{d}/sc", "--consumers", "0"], 2, "--consumers"),
    (["simulate", "consumers", "--out", "{d}/sc", "--kills", ""], 2, "--kills"),
    (["simulate", "consumers", "--out", "{d}/sc", "--kills", "x"], 2, "--kills"),
    (["simulate", "consumers", "--out", "{d}/sc", "--kill-sets", "0"], 2, "--kill-sets"),
    (["simulate", "consumers", "--out", "{d}/sc", "--heartbeat-ms", "0"], 2, "--heartbeat-ms"),
    (["simulate", "consumers", "--out", "{d}/sc", "--duration-s", "nan"], 2, "--duration-s"),
    (["simulate", "consumers", "--out", "{d}/sc", "--capacity", "0"], 2, "--capacity"),
    (["simulate", "consumers", "--out", "{d}/sc", "--strategies", "nosuch/eager"], 2,
     "--strategies: unknown assignor 'nosuch'"),
    (["simulate", "consumers", "--out", "/proc/x/y"], 2, "--out /proc/x/y"),
    (["simulate", "consumers", "--out", "{d}/regular"], 2, "regular is a file"),
    # fleet (all refused before Spark starts)
    (["fleet"], 2, "--snapshots DIR or --whatif N"),
    (["fleet", "--snapshots", "{d}/nodir"], 2, "--snapshots {d}/nodir does not exist"),
    (["fleet", "--snapshots", "{d}/adir"], 2, "no *.json snapshots"),
    (["fleet", "--whatif", "0"], 2, "--whatif"),
    (["fleet", "--whatif", "2", "--steps", "0"], 2, "--steps"),
    (["fleet", "--whatif", "2", "--noise", "nan"], 2, "--noise"),
    (["fleet", "--whatif", "2", "--thetas", "0,2"], 2, "--thetas"),
    (["fleet", "--whatif", "2", "--epss", "1"], 2, "--epss"),
    (["fleet", "--whatif", "2", "--out", "/proc/x/y"], 2, "--out /proc/x/y"),
    (["fleet", "--whatif", "2", "--out", "{d}/regular"], 2, "regular is a file"),
    # snapshot / pipeline (all refused before Spark starts)
    (["snapshot"], 2, "--samples DIR"),
    (["snapshot", "--samples", "{d}/nodir", "--out", "{d}/sn.json"], 2, "--samples {d}/nodir does not exist"),
    (["snapshot", "--samples", "{d}/regular", "--out", "{d}/sn.json"], 2, "regular is a file, not a folder"),
    (["snapshot", "--samples", "{d}/adir", "--out", "/proc/x/sn.json"], 2, "--out /proc/x/sn.json"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--windows", "0"], 2, "--windows"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--window", "abc"], 2,
     "--window 'abc' is not a duration"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--min-sample-ratio", "2"], 2,
     "--min-sample-ratio"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacity", "gpu=1"], 2, "'gpu'"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacity", "cpu=nan"], 2, "capacity cpu"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacity", "cpu=inf"], 2, "capacity cpu"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacities", "{d}/caps_list.json"], 2,
     "must be a JSON object"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacities", "{d}/caps_str.json"], 2,
     "default: cpu is 'x'"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacities", "{d}/caps_neg.json"], 2,
     "default: cpu is -1"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacities", "{d}/caps_bid.json"], 2,
     "broker id 'abc'"),
    (["snapshot", "--samples", "{d}/adir", "--out", "{d}/sn.json", "--capacities", "{d}/bad.json"], 2,
     "--capacities"),
    (["pipeline", "--from-kafka", "bad", "--out-dir", "{d}/pl"], 2, "bad --from-kafka 'bad'"),
    (["pipeline", "--from-kafka", CLOSED, "--out-dir", "/proc/x/pl"], 2, "--out-dir /proc/x/pl"),
    (["pipeline", "--from-kafka", CLOSED, "--out-dir", "{d}/pl", "--max-polls", "0"], 2, "--max-polls"),
    # local-cluster (all refused before a node starts)
    (["local-cluster", "status", "--state-dir", "{d}/nolc"], 2, "no local cluster in {d}/nolc"),
    (["local-cluster", "down", "--state-dir", "{d}/regular"], 2, "--state-dir {d}/regular is a file"),
    (["local-cluster", "kill-broker", "--state-dir", "{d}/nolc"], 2, "kill-broker needs a broker id"),
    (["local-cluster", "up", "--state-dir", "{d}/lc", "--brokers", "0"], 2, "--brokers"),
    (["local-cluster", "up", "--state-dir", "{d}/lc", "--controllers", "7"], 2, "--controllers"),
    (["local-cluster", "up", "--state-dir", "{d}/lc", "--heap-mb", "0"], 2, "--heap-mb"),
    (["local-cluster", "up", "--state-dir", "{d}/lc", "--base-port", "65500"], 2, "--base-port 65500"),
    (["local-cluster", "up", "--state-dir", "{d}/lc", "--timeout", "-1"], 2, "--timeout"),
    (["local-cluster", "up", "--state-dir", "{d}/lc", "--timeout", "nan"], 2, "--timeout"),
    (["local-cluster", "up", "--state-dir", "/proc/x/y"], 2, "--state-dir /proc/x/y"),
    # demo (live options refused before a cluster starts)
    (["demo", "--window", "0"], 2, "--window"),
    (["demo", "--window", "nan"], 2, "--window"),
    (["demo", "--window", "5"], 2, "demo --window 5 is too short"),
    (["demo", "--grace", "-1"], 2, "--grace"),
    (["demo", "--scale", "-1"], 2, "--scale"),
    (["demo", "--offline", "--seed", "-1"], 2, "--seed"),
    (["demo", "--offline", "--out", "/proc/x/y"], 2, "--out /proc/x/y"),
    (["demo", "--offline", "--out", "{d}/regular"], 2, "regular is a file"),
]


def _forbid(what: str) -> Callable[..., Any]:
    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError(f"bad input reached {what}: it must be refused before")

    return boom


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli_bad_input")
    for name, content in FILES.items():
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    (d / "adir").mkdir()
    return d


@pytest.fixture(autouse=True)
def _nothing_heavy_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_balancer.demo.story as demo
    import kafka_balancer.localcluster.cluster as lc
    import kafka_balancer.pipeline.session as session

    monkeypatch.setattr(lc.LocalCluster, "up", _forbid("LocalCluster.up"))
    monkeypatch.setattr(demo, "run_story", _forbid("run_story"))
    monkeypatch.setattr(session, "get_spark", _forbid("get_spark"))


@pytest.mark.parametrize(("argv", "code", "names"), CASES, ids=[" ".join(c[0])[:90] for c in CASES])
def test_bad_input_is_one_clear_line(
    argv: list[str], code: int, names: str, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [a.replace("{d}", str(scratch)) for a in argv]
    try:
        rc = main(args)
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert rc == code, err
    assert names.replace("{d}", str(scratch)) in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    # nothing half-written is left behind by a refused write
    assert not list(scratch.glob("*.tmp"))


def test_a_path_too_long_names_its_own_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # the sweep's seed 2311 ran this from a folder named 0411: the error named --port, whose value "1" is
    # also in that folder's name, instead of --local-cluster
    here = tmp_path / "0411"
    here.mkdir()
    monkeypatch.chdir(here)
    rc = main(["serve", "--bootstrap", CLOSED, "--dry-run", "--port", "1", "--local-cluster", "x" * 5000])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"error: --local-cluster {here}/xxx"), err
    rc = main(["serve", "--bootstrap", CLOSED, "--dry-run", "--port=1", "--local-cluster=" + "x" * 5000])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"error: --local-cluster {here}/xxx"), err


def test_an_empty_plan_is_said_and_touches_no_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what `plan` writes for a cluster that already meets its goals; the bootstrap is a closed port, so any
    # attempt to connect would end in exit 1 after the timeout
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"version": 1, "partitions": []}))
    for extra in ([], ["--yes"]):
        assert main(["execute", "--plan", str(empty), "--bootstrap", CLOSED, "--timeout", "1",
                     "--journal", str(tmp_path / "j.jsonl"), *extra]) == 0
        assert capsys.readouterr().out == f"{empty} moves nothing (0 partitions): nothing to execute; the cluster " \
                                          "was not contacted\n"
    assert main(["execute", "--plan", str(empty), "--bootstrap", CLOSED, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["partitions"] == 0 and report["verified"] and report["phase"] == "finished"
    assert not (tmp_path / "j.jsonl").exists()
