"""The HTTP API over a service fed with hand-made sampling rounds (no cluster, no threads): every
endpoint, authentication, errors naming the field, the OpenAPI schema and the metrics."""

from __future__ import annotations

import base64
import random
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from kafka_balancer.errors import InputError
from kafka_balancer.serve.api import create_app
from kafka_balancer.serve.config import ServeConfig, load_config
from kafka_balancer.serve.observation import Observation, Replicas
from kafka_balancer.serve.service import Service
from kafka_balancer.validate.values import parse_size

TOKEN = "s3cret-token"


def round_(alive: set[int], ts: float) -> Observation:
    # 12 partitions, RF 2, all on brokers 1 and 2: broker 3 is new and empty, broker 4 holds one
    parts = {("t", p): Replicas((1 + p % 2, 2 - p % 2), 1 + p % 2, (1, 2)) for p in range(12)}
    parts[("u", 0)] = Replicas((4, 1), 4, (4, 1))
    return Observation(ts, frozenset(alive), {b: f"rack-{b}" for b in alive}, parts)


@pytest.fixture()
def svc(tmp_path: Path) -> Service:
    cfg = ServeConfig(bootstrap="127.0.0.1:1", state_dir=tmp_path / "serve", token=TOKEN,
                      basic_user="ops", basic_password="pw", capacity={"cpu": 100, "disk": 1e9, "nw_in": 1e6,
                                                                       "nw_out": 1e6})
    s = Service(cfg, model_source="sizes")
    s.on_round(round_({1, 2, 3, 4}, 1000.0), {("t", p): 10_000_000 * (1 + p) for p in range(12)} |
               {("u", 0): 1_000_000})
    return s


@pytest.fixture()
def client(svc: Service) -> TestClient:
    return TestClient(create_app(svc, TOKEN, ("ops", "pw")), raise_server_exceptions=False)


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_reads(client: TestClient, svc: Service) -> None:
    st = client.get("/api/state").json()
    assert st["brokers_alive"] == [1, 2, 3, 4] and st["partitions"] == 13 and st["config"]["token"] == "***"
    load = client.get("/api/load").json()
    b1 = next(b for b in load["brokers"] if b["id"] == 1)
    assert b1["replicas"] == 13 and abs(b1["resources"]["disk"]["util"] - (sum(1e7 * (1 + p) for p in range(12))
                                                                            + 1e6) / 1e9) < 1e-9
    d = load["resources"]["disk"]
    assert d["band_low"] == pytest.approx(d["mean_util"] * 0.9)
    assert d["band_high"] == pytest.approx(d["mean_util"] * 1.1)
    assert d["sigma"] > load["eta"] and not d["balanced"]
    prop = client.get("/api/proposal", params={"eps": 0.2}).json()
    assert prop["mode"] == "rebalance" and prop["partitions"] > 0 and prop["balanced_after"]
    assert prop["after"]["disk"]["sigma"] < prop["before"]["disk"]["sigma"]
    an = client.get("/api/anomalies").json()["anomalies"]
    assert {a["type"] for a in an} >= {"new_brokers"}
    assert client.get("/api/executions").json() == {"executions": []}
    m = client.get("/metrics").text
    assert 'kafka_balancer_sigma{resource="disk"}' in m
    assert 'kafka_balancer_anomalies{state="waiting",type="new_brokers"} 1.0' in m
    schema = client.get("/openapi.json").json()
    for path in ("/api/state", "/api/load", "/api/proposal", "/api/anomalies", "/api/executions",
                 "/api/rebalance", "/api/add-brokers", "/api/remove-brokers", "/api/demote-brokers",
                 "/api/stop", "/api/pause", "/api/resume"):
        assert path in schema["paths"], path
    assert "BrokersRequest" in schema["components"]["schemas"]
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert client.get("/static/app.js").status_code == 200


@pytest.mark.parametrize("path", ["/api/rebalance", "/api/add-brokers", "/api/remove-brokers",
                                  "/api/demote-brokers", "/api/stop", "/api/pause", "/api/resume"])
def test_writes_without_credentials_are_refused_and_change_nothing(client: TestClient, svc: Service,
                                                                   path: str) -> None:
    before = (svc.paused, list(svc.executions), svc.anomaly_store.read())
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic " + base64.b64encode(
            b"ops:nope").decode()}, {"Authorization": "Basic !!"}):
        r = client.post(path, json={"brokers": [3], "dry_run": False}, headers=headers)
        assert r.status_code == 401 and r.json()["field"] == "Authorization"
        assert r.headers["www-authenticate"].startswith("Bearer")
    assert (svc.paused, list(svc.executions), svc.anomaly_store.read()) == before


def test_pause_resume_with_bearer_and_basic(client: TestClient, svc: Service) -> None:
    assert client.post("/api/pause", headers=AUTH).json() == {"paused": True, "stopped": None}
    assert svc.paused and client.get("/api/state").json()["paused"]
    basic = {"Authorization": "Basic " + base64.b64encode(b"ops:pw").decode()}
    assert client.post("/api/resume", headers=basic).json()["paused"] is False
    assert client.post("/api/stop", headers=AUTH).json() == {"paused": False, "stopped": False}


def test_stopping_an_execution_pauses_self_healing(client: TestClient, svc: Service) -> None:
    # the executor's side of a stop is the real-cluster test's (tests/kafka/test_serve_live.py); here, the
    # service's: a stop that stopped something pauses self-healing, one that found nothing running does not
    svc.runner.stop = lambda: True  # type: ignore[method-assign]
    assert client.post("/api/stop", headers=AUTH).json() == {"paused": True, "stopped": True}
    assert any("self-healing paused until POST /api/resume" in e["text"] for e in svc.timeline)


def test_a_pause_outlives_a_restart(client: TestClient, svc: Service) -> None:
    # an operator who paused self-healing during an incident must not find it running after a restart
    assert client.post("/api/pause", headers=AUTH).json()["paused"] is True
    again = Service(svc.cfg, model_source="sizes")  # the same state directory
    assert again.paused and any("stays paused" in e["text"] for e in again.timeline)
    again.set_paused(False)
    third = Service(svc.cfg, model_source="sizes")
    assert not third.paused and not any("stays paused" in e["text"] for e in third.timeline)


def test_operator_actions_are_dry_runs_by_default(client: TestClient, svc: Service) -> None:
    r = client.post("/api/add-brokers", json={"brokers": [3]}, headers=AUTH).json()
    assert r["dry_run"] and r["execution"] is None and r["proposal"]["mode"] == "add_brokers"
    assert any(3 in m["to"] for m in r["proposal"]["moves"])
    r = client.post("/api/remove-brokers", json={"brokers": [4]}, headers=AUTH).json()
    assert r["proposal"]["partitions"] >= 1 and all(4 not in m["to"] for m in r["proposal"]["moves"])
    r = client.post("/api/demote-brokers", json={"brokers": [1]}, headers=AUTH).json()
    assert r["proposal"]["replica_moves"] == 0 and all(m["to"][0] != 1 for m in r["proposal"]["moves"])
    assert r["proposal"]["bytes"] == 0
    r = client.post("/api/rebalance", json={}, headers=AUTH).json()
    assert r["dry_run"] and r["proposal"]["partitions"] > 0
    assert svc.executions == {}


@pytest.mark.parametrize(("path", "body", "code", "field"), [
    ("/api/add-brokers", {"brokers": "3"}, 422, "brokers"),
    ("/api/add-brokers", {"brokers": []}, 422, "brokers"),
    ("/api/add-brokers", {}, 422, "brokers"),
    ("/api/add-brokers", {"brokers": [3], "dry_run": "maybe"}, 422, "dry_run"),
    ("/api/add-brokers", {"brokers": [3], "extra": 1}, 422, "extra"),
    ("/api/add-brokers", {"brokers": [99]}, 400, "brokers"),
    ("/api/demote-brokers", {"brokers": [7]}, 400, "brokers"),
    ("/api/rebalance", {"theta": 2}, 422, "theta"),
    ("/api/rebalance", {"eps": -1}, 422, "eps"),
    ("/api/rebalance", [1, 2], 422, "body"),
    ("/api/rebalance", {"excluded_topics": "pay(ments"}, 400, "excluded_topics"),
    ("/api/rebalance", {"max_bytes": "1X"}, 400, "max_bytes"),
    ("/api/rebalance", {"max_moves": -1}, 422, "max_moves"),
    ("/api/remove-brokers", {"brokers": [4], "max_bytes": "-5G"}, 400, "max_bytes"),
    ("/api/remove-brokers", {"brokers": [4], "max_moves": 0}, 400, "max_moves"),
    ("/api/rebalance", {"goals": "capacity,nope"}, 400, "goals"),
    ("/api/rebalance", {"goals": "capacity,capacity"}, 400, "goals"),
    ("/api/rebalance", {"goals": " , "}, 400, "goals"),
    ("/api/rebalance", {"leadership_only": "sometimes"}, 422, "leadership_only"),
    ("/api/remove-brokers", {"brokers": [4], "leadership_only": True}, 422, "leadership_only"),
    ("/api/add-brokers", {"brokers": [3], "goals": "capacity,nope"}, 400, "goals"),
    ("/api/demote-brokers", {"brokers": [1], "goals": "capacity"}, 400, "goals"),
    ("/api/remove-brokers", {"brokers": [1], "max_bytes": "1M"}, 400, "max_bytes"),
])
def test_bad_bodies_are_4xx_naming_the_field(client: TestClient, path: str, body: object, code: int,
                                             field: str) -> None:
    r = client.post(path, json=body, headers=AUTH)
    assert r.status_code == code, r.text
    assert r.json()["field"] == field and field in r.json()["error"]
    assert "Traceback" not in r.text
    assert "--" not in r.text, "the API speaks of its fields, not of the plan command's flags"


def test_malformed_json_and_bad_queries(client: TestClient) -> None:
    r = client.post("/api/rebalance", content=b"{not json", headers={**AUTH, "content-type": "application/json"})
    assert r.status_code == 422 and "Traceback" not in r.text
    r = client.get("/api/proposal", params={"theta": "abc"})
    assert r.status_code == 422 and r.json()["field"] == "theta"
    r = client.get("/api/anomalies", params={"limit": 0})
    assert r.status_code == 422 and r.json()["field"] == "limit"
    assert client.get("/api/nope").status_code == 404
    assert client.delete("/api/state").status_code == 405


def test_proposal_polish_is_a_share_or_a_size(client: TestClient) -> None:
    def moved(polish: str) -> float:
        r = client.get("/api/proposal", params={"eps": 0.2, "polish": polish})
        assert r.status_code == 200, r.text
        return float(r.json()["bytes"])

    assert moved("0") < moved("1.5") < moved("1G")  # 640, 740 and 780 MB
    for bad, says in (("1X", "is not a size"), ("-1", "must be between 0 and"), ("", "is empty")):
        r = client.get("/api/proposal", params={"polish": bad})
        assert r.status_code == 400 and r.json()["field"] == "polish" and says in r.json()["error"], r.text


def test_no_model_yet_is_409_not_500(tmp_path: Path) -> None:
    s = Service(ServeConfig(bootstrap="127.0.0.1:1", state_dir=tmp_path / "s", token=TOKEN), model_source="sizes")
    c = TestClient(create_app(s, TOKEN), raise_server_exceptions=False)
    assert c.get("/api/load").status_code == 409
    assert c.get("/api/proposal").status_code == 409
    assert c.get("/api/state").status_code == 200


def _topics(r: dict[str, object]) -> set[str]:
    return {m["topic"] for m in r["proposal"]["moves"]}  # type: ignore[index,attr-defined]


def test_operator_actions_take_excluded_topics_and_budgets(client: TestClient) -> None:
    # every topic but u may move: the plan moves none of u's partitions, and says what it kept to
    r = client.post("/api/rebalance", json={"eps": 0.2, "excluded_topics": "u"}, headers=AUTH).json()
    assert r["proposal"]["partitions"] > 0 and "u" not in _topics(r)
    assert r["proposal"]["constraints"]["exclude_topics"] == "u"
    r = client.post("/api/rebalance", json={"excluded_topics": "t|u"}, headers=AUTH).json()
    assert r["proposal"]["partitions"] == 0
    assert any(n.startswith("excluded_topics /t|u/ matches every topic") for n in r["proposal"]["notes"])
    # a budget: at most one replica copy
    r = client.post("/api/rebalance", json={"max_moves": 1}, headers=AUTH).json()
    assert r["proposal"]["replica_moves"] <= 1 and r["proposal"]["constraints"]["max_moves"] == 1
    assert any("budget is spent" in n for n in r["proposal"]["notes"])
    r = client.post("/api/add-brokers", json={"brokers": [3], "max_bytes": "25M"}, headers=AUTH).json()
    assert 0 < r["proposal"]["bytes"] <= 25e6 and r["proposal"]["constraints"]["add_brokers"] == [3]
    # a removal wins over an exclusion: u-0 leaves broker 4 all the same, and the plan says so
    r = client.post("/api/remove-brokers", json={"brokers": [4], "excluded_topics": "u"}, headers=AUTH).json()
    assert all(4 not in m["to"] for m in r["proposal"]["moves"]) and "u" in _topics(r)
    assert any("excluded topics had replicas on dead or removed brokers" in n for n in r["proposal"]["notes"])
    # a demotion leaves the leadership of excluded topics where it is
    r = client.post("/api/demote-brokers", json={"brokers": [1], "excluded_topics": "t"}, headers=AUTH).json()
    assert r["proposal"]["partitions"] == 0
    assert r["proposal"]["notes"] == ["6 partition(s) keep their leader on a demoted broker: their topics are excluded"]


def test_rebalance_takes_a_goal_policy_and_leadership_only(client: TestClient) -> None:
    # the service's policy is seed 001's two goals; a request may add Cruise Control's count goals
    two = client.post("/api/rebalance", json={"eps": 0.2}, headers=AUTH).json()["proposal"]
    four = client.post("/api/rebalance", json={"eps": 0.2, "goals": "capacity,distribution,replica_count,"
                                               "leader_count"}, headers=AUTH).json()["proposal"]
    assert two["partitions"] > 0 and four["partitions"] > 0
    assert [g["goal"] for g in two["goals"]] == ["capacity", "distribution"]
    assert [g["goal"] for g in four["goals"]] == ["capacity", "distribution", "replica_count", "leader_count"]
    counts = four["goals"][2]
    assert counts["violation_before"] > 0 and counts["met_after"] and counts["detail"].startswith("CV ")
    # the broker endpoints that plan take a policy too
    r = client.post("/api/add-brokers", json={"brokers": [3], "goals": "capacity,distribution,replica_count"},
                    headers=AUTH).json()["proposal"]
    assert [g["goal"] for g in r["goals"]] == ["capacity", "distribution", "replica_count"]
    assert r["constraints"]["add_brokers"] == [3]
    # leadership only: no replica is copied, and the plan says what it kept to
    r = client.post("/api/rebalance", json={"eps": 0.2, "leadership_only": True}, headers=AUTH).json()["proposal"]
    assert r["replica_moves"] == 0 and r["bytes"] == 0 and r["constraints"]["leadership_only"] is True
    assert all(sorted(m["from"]) == sorted(m["to"]) for m in r["moves"])


def test_the_services_excluded_topics_hold_in_every_plan(tmp_path: Path) -> None:
    cfg_file = tmp_path / "serve.toml"
    cfg_file.write_text('bootstrap = "127.0.0.1:1"\n[goals]\nexclude_topics = "u"\n')
    cfg = load_config(cfg_file, ServeConfig(state_dir=tmp_path / "serve", token=TOKEN,
                                            capacity={"cpu": 100, "disk": 1e9, "nw_in": 1e6, "nw_out": 1e6}))
    assert cfg.exclude_topics == "u"
    s = Service(cfg, model_source="sizes")
    s.on_round(round_({1, 2, 3, 4}, 1000.0), {("t", p): 10_000_000 * (1 + p) for p in range(12)} |
               {("u", 0): 1_000_000})
    c = TestClient(create_app(s, TOKEN), raise_server_exceptions=False)
    prop = c.get("/api/proposal", params={"eps": 0.2}).json()
    assert prop["partitions"] > 0 and all(m["topic"] != "u" for m in prop["moves"])
    r = c.post("/api/add-brokers", json={"brokers": [3]}, headers=AUTH).json()
    assert "u" not in _topics(r) and r["proposal"]["constraints"]["exclude_topics"] == "u"
    # a request gives its own pattern instead of the service's
    r = c.post("/api/rebalance", json={"eps": 0.2, "excluded_topics": "t"}, headers=AUTH).json()
    assert "t" not in _topics(r)
    bad = tmp_path / "bad.toml"
    bad.write_text('[goals]\nexclude_topics = "pay(ments"\n')
    with pytest.raises(InputError) as e:
        load_config(bad)
    assert e.value.message.startswith(f"{bad}: goals.exclude_topics 'pay(ments' is not a valid regular expression")


def _request(rng: random.Random) -> tuple[str, dict[str, object]]:
    """One write request, valid or not, of the kinds an operator (or a script) sends."""
    path = rng.choice(["rebalance", "add-brokers", "remove-brokers", "demote-brokers"])
    body: dict[str, object] = {}
    if rng.random() < 0.3:
        body["goals"] = rng.choice(["capacity,distribution", "capacity,distribution,replica_count,leader_count",
                                    "leader_count,capacity", "nope"])
    if path != "rebalance":
        body["brokers"] = rng.sample([1, 2, 3, 4, 9], rng.choice([0, 1, 1, 1, 2]))
    elif rng.random() < 0.3:
        body["leadership_only"] = rng.choice([True, False])
    for key, values in (("excluded_topics", ["t", "u", "t|u", "x", "(", "t.*"]),
                        ("max_moves", [0, 1, 3, 100, -1]),
                        ("max_bytes", ["0", "25M", "1G", "-1G", "lots"])):
        if rng.random() < 0.35:
            body[key] = rng.choice(values)
    return path, body


def _check_proposal(path: str, body: dict[str, object], p: dict[str, Any]) -> None:
    """What each field of the request promises, on the proposal that came back."""
    moves = p["moves"]
    assert len(moves) == p["partitions"]
    brokers = set(body.get("brokers", []))  # type: ignore[call-overload]
    pattern = body.get("excluded_topics")
    for m in moves:
        new = set(m["to"]) - set(m["from"])
        if isinstance(pattern, str) and re.fullmatch(pattern, m["topic"]):
            # an excluded partition moves only off a removed broker
            assert path == "remove-brokers" and brokers & set(m["from"]), m
        if path == "remove-brokers":
            assert not brokers & set(m["to"]), m
        if path == "add-brokers":
            assert new <= brokers, m
        if path == "demote-brokers":
            assert m["to"][0] not in brokers and not new, m
        if body.get("leadership_only"):
            assert not new, m
    if "max_moves" in body:
        assert p["replica_moves"] <= int(body["max_moves"])  # type: ignore[call-overload]
    if "max_bytes" in body:
        assert p["bytes"] <= parse_size(str(body["max_bytes"]), "max_bytes") + 1e-6
    if "goals" in body:
        assert [g["goal"] for g in p["goals"]] == str(body["goals"]).split(",")


@pytest.mark.parametrize("seed", range(4))
def test_random_requests_keep_their_promises_or_fail_in_one_line(client: TestClient, svc: Service,
                                                                 seed: int) -> None:
    rng = random.Random(seed)
    fields = {"brokers", "excluded_topics", "max_moves", "max_bytes", "goals", "leadership_only"}
    for _ in range(30):
        path, body = _request(rng)
        r = client.post(f"/api/{path}", json=body, headers=AUTH)
        shown = f"{path} {body} -> {r.status_code} {r.text[:300]}"
        assert r.status_code in (200, 400, 409, 422), shown
        assert "Traceback" not in r.text and "--" not in r.text, shown
        if r.status_code != 200:
            err = r.json()
            assert err["error"] and "\n" not in err["error"], shown
            assert err["field"] is None or err["field"].split(".")[0] in fields, shown
            continue
        _check_proposal(path, body, r.json()["proposal"])
    assert svc.executions == {}


def test_a_cluster_within_its_goals_gets_nothing_to_move(svc: Service) -> None:
    # the cluster racks48 seed 0's plan leaves: the planner finds only moves that tighten σ, and proposes none
    from kafka_balancer.model.plan_io import apply_plan
    from kafka_balancer.planner.plan import plan
    from kafka_balancer.sim.cluster import PRESETS, generate

    snap = generate(PRESETS["racks48"], seed=0)
    svc.set_model(apply_plan(snap, plan(snap).plan))
    c = TestClient(create_app(svc, TOKEN), raise_server_exceptions=False)
    r = c.post("/api/rebalance", json={}, headers=AUTH).json()
    assert r["proposal"]["partitions"] == 0
    assert r["proposal"]["notes"][0].startswith("nothing to move: the cluster already meets seed 001's goals")
    r = c.post("/api/rebalance", json={"dry_run": False}, headers=AUTH)
    assert r.status_code == 409 and r.json()["error"].startswith("nothing to move: the cluster already meets"), r.text
