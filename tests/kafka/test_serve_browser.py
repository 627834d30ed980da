"""The dashboard in a real browser: Debian's Chromium, headless, driven by Selenium (chromium-driver).

The page loads with no console errors, the numbers it shows equal the API's, pause and resume work from
the page, the plan form proposes what the write API proposes (and shows its one-line errors, and asks before
it executes), and a screenshot is kept in out/serve-dashboard.png.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from kafka.admin import NewTopic

from kafka import KafkaProducer
from kafka_balancer.demo.screenshot import browser_missing, open_browser
from kafka_balancer.serve.config import ServeConfig
from kafka_balancer.serve.runtime import Started, start

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
TOKEN = "browser-test-token"
OUT = Path(__file__).resolve().parents[2] / "out"


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as r:
        return orjson.loads(r.read())


@pytest.fixture()
def service(kafka_cluster: Any, tmp_path: Path) -> Iterator[Started]:
    admin = kafka_cluster.admin()
    if "dash" not in admin.list_topics():
        admin.create_topics([NewTopic("dash", -1, -1, replica_assignments={p: [1, 2] if p % 2 else [2, 1]
                                                                           for p in range(6)})])
        admin.wait_for_topics(["dash"], timeout_ms=30000)
        p = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, acks="all")
        for i in range(300):
            p.send("dash", value=b"x" * 3000, partition=i % 6)
        p.flush(timeout=60)
        p.close()
    cfg = ServeConfig(bootstrap=kafka_cluster.bootstrap, state_dir=tmp_path / "serve", interval_s=1.0,
                      window_s=4.0, token=TOKEN, eps=0.1,
                      capacity={"cpu": 100.0, "disk": 1e7, "nw_in": 1e6, "nw_out": 1e6})
    s = start(cfg, model_source="sizes", port=0)
    try:
        deadline = time.monotonic() + 60
        while not (s.service.sigma_history and s.service.rounds >= 2):
            assert time.monotonic() < deadline, "no window evaluated within 60 s"
            time.sleep(0.5)
        yield s
    finally:
        s.stop()


# the text an element shows, as WebDriver's own element text has it (table cells joined by spaces; SVG text,
# which has no innerText, too). The page re-renders on every poll, so the tests read it in one script: an
# element handle found in one WebDriver call can be stale by the next (a CI run failed on that)
SHOWN_JS = "const shown = (e) => (e.innerText ?? e.textContent).replace(/\\t/g, ' ').trim();"


def text(drv: Any, key: str) -> str:
    """The text the page shows for ``data-k="key"`` (``SHOWN_JS``)."""
    value = drv.execute_script(
        SHOWN_JS + "const e = document.querySelector(`[data-k=\"${arguments[0]}\"]`);"
        "return e === null ? null : shown(e);",
        key,
    )
    assert value is not None, f"the page shows no data-k={key!r}"
    return str(value)


def anomaly_table(drv: Any) -> tuple[int, dict[str, str]]:
    """The anomaly table as the page shows it (``SHOWN_JS``), read whole: its row count and each anomaly's
    state."""
    rows, states = drv.execute_script(
        SHOWN_JS + "const s = {};"
        "for (const e of document.querySelectorAll('#anomalies [data-k^=\"anomaly-state-\"]'))"
        "  s[e.dataset.k.slice('anomaly-state-'.length)] = shown(e);"
        "return [document.querySelectorAll('#anomalies tbody tr').length, s];"
    )
    return int(rows), {str(k): str(v) for k, v in states.items()}


def post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url, data=orjson.dumps(body), method="POST",
                                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return orjson.loads(r.read())


def fill(drv: Any, **values: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    for name, v in values.items():
        if name == "mode":
            Select(drv.find_element(By.ID, "ask-mode")).select_by_value(v)
            continue
        box = drv.find_element(By.ID, f"ask-{name.replace('_', '-')}")
        if not box.is_enabled():  # the broker ids of a rebalance
            assert not v, name
            continue
        box.clear()
        if v:
            box.send_keys(v)


def submitted(drv: Any, want: str) -> str:
    """Press Propose and wait for the form's message to leave "planning…"; return it (``want``: its class)."""
    from selenium.webdriver.common.by import By

    drv.execute_script("document.getElementById('ask-msg').textContent = ''")
    drv.find_element(By.ID, "ask-propose").click()
    deadline = time.monotonic() + 60
    while True:
        msg = drv.find_element(By.ID, "ask-msg")
        if msg.text and msg.text != "planning…":
            assert msg.get_attribute("class") == want, msg.text
            return str(msg.text)
        assert time.monotonic() < deadline, "the plan form got no answer within 60 s"
        time.sleep(0.2)


def ask_form(drv: Any, url: str) -> None:
    from selenium.webdriver.common.by import By

    # rebalance takes no broker ids; leadership only, it copies no replica; the goals are reported
    fill(drv, mode="rebalance")
    assert not drv.find_element(By.ID, "ask-brokers").is_enabled()
    drv.find_element(By.ID, "ask-leadership-only").click()
    submitted(drv, "ask-msg")
    assert text(drv, "ask-replica-moves") == "0" and text(drv, "ask-mb") == "0.0"
    assert "leadership only" in text(drv, "ask-constraints")
    assert text(drv, "ask-goals").splitlines()[1].startswith("1. capacity")
    drv.find_element(By.ID, "ask-leadership-only").click()
    # remove broker 2: the page shows what the API proposes for the same request, and nothing lands on 2
    fill(drv, mode="remove-brokers", brokers="2", exclude="", max_moves="", max_bytes="")
    assert submitted(drv, "ask-msg") == "proposed (dry run): nothing was changed"
    api = post(url + "/api/remove-brokers", {"brokers": [2], "dry_run": True})["proposal"]
    assert api["partitions"] > 0
    assert text(drv, "ask-partitions") == str(api["partitions"])
    assert text(drv, "ask-mb") == f"{api['bytes'] / 1e6:.1f}"
    for r in ("cpu", "disk", "nw_in", "nw_out"):
        assert text(drv, f"ask-after-{r}") == f"{api['after'][r]['sigma']:.4f}", r
    assert "remove brokers 2" in text(drv, "ask-constraints")
    assert [row.split(" ")[1] for row in text(drv, "ask-goals").splitlines()[1:]] == ["capacity", "distribution"]
    rows = drv.find_elements(By.CSS_SELECTOR, '[data-k="ask-moves"] tr')[1:]
    assert rows and all("2" not in r.find_elements(By.TAG_NAME, "td")[2].text.strip("[]").split(",") for r in rows)
    # a goal policy of the operator's: the proposal reports each of its goals
    fill(drv, goals="capacity,distribution,replica_count")
    submitted(drv, "ask-msg")
    assert [row.split(" ")[1] for row in text(drv, "ask-goals").splitlines()[1:]] == [
        "capacity", "distribution", "replica_count"]
    fill(drv, goals="capacity,nope")
    assert submitted(drv, "ask-msg error").startswith("goals: unknown goal 'nope'")
    fill(drv, goals="")
    submitted(drv, "ask-msg")
    # Execute asks first; dismissed, no execution starts
    before = get(url + "/api/executions")["executions"]
    execute = drv.find_element(By.ID, "ask-execute")
    assert execute.is_enabled()
    execute.click()
    alert = drv.switch_to.alert
    assert f"{api['partitions']} partitions" in alert.text
    alert.dismiss()
    time.sleep(1.0)
    assert get(url + "/api/executions")["executions"] == before
    # a changed form must be proposed again before it can run; a budget below what the removal needs is
    # refused in the API's words (max_moves, not the CLI's --max-moves)
    fill(drv, max_moves="1")
    assert not execute.is_enabled()
    assert submitted(drv, "ask-msg error").startswith("max_moves 1 is below the ")
    # a rebalance within one move: the page says what the plan kept to
    fill(drv, mode="rebalance")
    submitted(drv, "ask-msg")
    assert "at most 1 replica moves" in text(drv, "ask-constraints")
    assert int(text(drv, "ask-replica-moves")) <= 1  # leadership is not budgeted
    fill(drv, mode="remove-brokers", max_moves="")
    # bad input: the API's one line, naming the field, and no stale proposal beside it
    fill(drv, max_moves="", exclude="(")
    assert submitted(drv, "ask-msg error").startswith("excluded_topics:")
    assert drv.find_elements(By.CSS_SELECTOR, '[data-k="ask-partitions"]') == []
    fill(drv, exclude="", brokers="99")
    assert "broker 99 is not part of the cluster" in submitted(drv, "ask-msg error")
    fill(drv, brokers="two")
    assert submitted(drv, "ask-msg error").startswith("brokers.0:")
    fill(drv, brokers="2", max_bytes="lots")
    assert submitted(drv, "ask-msg error").startswith("max_bytes:")
    # confirmed, a demotion of broker 1 runs on the cluster (the leaderships of the dash partitions it leads
    # move to broker 2), and the page lists the execution as the API does; every topic but this test's is
    # excluded (the session's cluster is shared)
    fill(drv, mode="demote-brokers", brokers="1", max_bytes="", max_moves="", exclude="(?!dash$).*")
    submitted(drv, "ask-msg")
    assert text(drv, "ask-replica-moves") == "0"
    rows = drv.find_elements(By.CSS_SELECTOR, '[data-k="ask-moves"] tr')[1:]
    planned = int(text(drv, "ask-partitions"))
    assert planned >= 1 and len(rows) == planned
    assert all(r.text.startswith("dash-") and "[2,1]" in r.text for r in rows), [r.text for r in rows]
    execute.click()
    drv.switch_to.alert.accept()
    deadline = time.monotonic() + 30
    while not (msg := drv.find_element(By.ID, "ask-msg").text).startswith("execution "):
        assert time.monotonic() < deadline and "error" not in str(drv.find_element(By.ID, "ask-msg")
                                                                   .get_attribute("class")), msg
        time.sleep(0.2)
    eid = msg.split()[1]
    deadline = time.monotonic() + 120
    while (rec := next(e for e in get(url + "/api/executions")["executions"] if e["id"] == eid))["state"] == "running":
        assert time.monotonic() < deadline, "the execution did not end within 120 s"
        time.sleep(0.5)
    assert rec["state"] == "finished" and rec["partitions"] == planned, rec
    deadline = time.monotonic() + 10
    while f"{eid} demote finished" not in drv.find_element(By.ID, "executions").text.replace("\n", " "):
        assert time.monotonic() < deadline, drv.find_element(By.ID, "executions").text
        time.sleep(0.3)
    # the service remembers the demotion (every later plan keeps broker 1 from leading) and the page lists it
    # with a Forget button; a dismissed confirm forgets nothing, an accepted one ends the entry
    assert [(e["broker"], e["kind"], e["execution"]) for e in get(url + "/api/broker-history")["brokers"]] == [
        (1, "demoted", eid)]
    deadline = time.monotonic() + 10
    while not drv.find_elements(By.CSS_SELECTOR, '[data-k="forget-1"]'):
        assert time.monotonic() < deadline, drv.find_element(By.ID, "history").text
        time.sleep(0.3)
    assert "demoted: leads nothing" in drv.find_element(By.CSS_SELECTOR, '[data-k="history-demoted-1"]').text
    drv.find_element(By.CSS_SELECTOR, '[data-k="forget-1"]').click()
    drv.switch_to.alert.dismiss()
    time.sleep(2.5)
    assert len(get(url + "/api/broker-history")["brokers"]) == 1
    drv.find_element(By.CSS_SELECTOR, '[data-k="forget-1"]').click()
    drv.switch_to.alert.accept()
    deadline = time.monotonic() + 10
    while drv.find_elements(By.CSS_SELECTOR, '[data-k="forget-1"]'):
        assert time.monotonic() < deadline, drv.find_element(By.ID, "history-msg").text
        time.sleep(0.3)
    assert drv.find_element(By.ID, "history-msg").text == "forgot broker 1 (demoted)"
    assert get(url + "/api/broker-history")["brokers"] == []
    fill(drv, mode="rebalance", exclude="")  # the screenshot shows a proposal
    submitted(drv, "ask-msg")


def test_dashboard_in_chromium(service: Started, tmp_path: Path) -> None:
    why = browser_missing()
    if why:
        pytest.skip(f"Chromium is not installed ({why}): run ./dev setup, or apt-get install chromium "
                    "chromium-driver")
    from selenium.webdriver.common.by import By

    url = service.http.url
    drv = open_browser(tmp_path / "profile")
    try:
        drv.get(url + "/")
        deadline = time.monotonic() + 60
        while drv.execute_script("return document.querySelectorAll('#load svg').length") < 4 or \
                not drv.execute_script("return document.querySelector('[data-k=\"proposal-partitions\"]') !== null"):
            assert time.monotonic() < deadline, "the dashboard did not render the model within 60 s"
            time.sleep(0.3)
        time.sleep(2.5)  # one more poll: the page and the API now show the same model
        load = get(url + "/api/load")
        state = get(url + "/api/state")
        prop = get(url + "/api/proposal")
        for r in ("cpu", "disk", "nw_in", "nw_out"):
            assert text(drv, f"sigma-{r}") == f"{load['resources'][r]['sigma']:.4f}", r
            for b in load["brokers"]:
                assert text(drv, f"util-{b['id']}-{r}") == f"{100 * b['resources'][r]['util']:.1f}%", (b["id"], r)
            assert text(drv, f"proposal-before-{r}") == f"{prop['before'][r]['sigma']:.4f}"
            assert text(drv, f"proposal-after-{r}") == f"{prop['after'][r]['sigma']:.4f}"
        assert text(drv, "brokers-alive") == str(len(state["brokers_alive"]))
        assert text(drv, "partitions") == str(state["partitions"])
        assert text(drv, "proposal-partitions") == str(prop["partitions"])
        assert text(drv, "proposal-mb") == f"{prop['bytes'] / 1e6:.1f}"
        # anomalies change state as the service runs: the page must show the API's states as of one poll
        deadline = time.monotonic() + 20
        while True:
            api_an = get(url + "/api/anomalies?limit=40")["anomalies"]
            rows, shown = anomaly_table(drv)
            if rows == len(api_an) > 0 and shown == {a["id"]: a["state"] for a in api_an}:
                break
            assert time.monotonic() < deadline, (shown, api_an)
            time.sleep(0.5)

        # pause and resume from the page, with the token typed in
        drv.find_element(By.ID, "token").send_keys(TOKEN)
        drv.find_element(By.ID, "pause").click()
        deadline = time.monotonic() + 20
        while not (get(url + "/api/state")["paused"] and drv.find_element(By.ID, "switch-state").text == "paused"):
            assert time.monotonic() < deadline, "pause from the page did not take"
            time.sleep(0.3)
        assert service.service.paused
        drv.find_element(By.ID, "resume").click()
        deadline = time.monotonic() + 20
        while get(url + "/api/state")["paused"] or drv.find_element(By.ID, "switch-state").text != "running":
            assert time.monotonic() < deadline, "resume from the page did not take"
            time.sleep(0.3)

        errors = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
        assert errors == [], errors

        ask_form(drv, url)
        OUT.mkdir(exist_ok=True)
        drv.set_window_size(1400, min(4000, int(drv.execute_script("return document.body.scrollHeight")) + 200))
        drv.save_screenshot(str(OUT / "serve-dashboard.png"))
        # the form's deliberate bad requests log their 4xx; nothing else may
        errors = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE" and not (
            e.get("source") == "network" and "/api/" in e["message"] and "status of 4" in e["message"])]
        assert errors == [], errors
    finally:
        drv.quit()
    assert (OUT / "serve-dashboard.png").stat().st_size > 10_000
