"""The worker console (``/ui``) and Swagger UI (``/docs``) in real headless Chromium, offline.

Two workers of the demo application run as processes (``streams-runtime worker --instances 2
--http-port P``) with a bearer token. Every request the browser makes to anything but 127.0.0.1
is aborted and recorded: none may be attempted. With ``$STREAMS_RUNTIME_SCREENSHOTS=<dir>`` the
console and the topology picture are saved there (how ``docs/console.png`` is made).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from streams_runtime.cli import main
from streams_runtime.demo.app import APPLICATION_ID, PARTITIONS, PAYMENTS_TOPIC, RESULTS_TOPIC
from streams_runtime.processor.internals.assignment.assignment_info import AssignmentInfo
from streams_runtime.processor.internals.assignment.partition_grouper import SourcePartition
from streams_runtime.server.app import create_app
from streams_runtime.server.http_server import HttpServer
from tests.deploy.test_dashboards import metric_names_used
from tests.integration.streams_support import make_topics, produce, wait_until
from tests.integration.test_worker_http import _status
from tests.partitioning import partition_for
from tests.ports import free_ports
from tests.tools.test_describe_graph import four_subtopologies
from tests.unit.query.fakes import FakeClient, FakeThread

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "console-" + uuid.uuid4().hex[:8]
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "console-forwarding-" + uuid.uuid4().hex


def _users_on_every_partition(count: int) -> list[str]:
    """``count`` user names, as many on each input partition as can be (none left empty)."""
    run, by_partition = uuid.uuid4().hex[:6], {p: [] for p in range(PARTITIONS)}
    for i in range(100 * count):
        user = f"console-user-{run}-{i}"
        by_partition[partition_for(user.encode(), PARTITIONS)].append(user)
    return [u for turn in zip(*by_partition.values(), strict=False) for u in turn][:count]


USERS = _users_on_every_partition(12)


@pytest.fixture(scope="module")
def workers(kafka_broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    make_topics(kafka_broker, **{PAYMENTS_TOPIC: PARTITIONS, RESULTS_TOPIC: PARTITIONS})
    port = free_ports(2)
    launcher = subprocess.Popen(
        [sys.executable, "-m", "streams_runtime.cli", "worker", "--app", "streams_runtime.demo.app:app"]
        + ["--instances", "2", "--bootstrap-servers", kafka_broker, "--http-port", str(port)]
        + ["--state-dir", str(tmp_path_factory.mktemp("console-state"))],
        cwd=ROOT,
        env={**os.environ, "STREAMS_RUNTIME_HTTP_TOKEN": TOKEN, "STREAMS_RUNTIME_FORWARDING_SECRET": SECRET},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    out = launcher.stdout
    threading.Thread(target=lambda: lines.extend(line.rstrip() for line in out), daemon=True).start()
    try:
        for p in (port, port + 1):
            wait_until(
                lambda p=p: _status(f"http://127.0.0.1:{p}/health/ready") == 200, 90, lambda: str(lines[-10:])
            )
        payments = [
            (u.encode(), json.dumps({"payment_id": f"{u}-{n}", "user": u, "amount": 1.25}).encode())
            for i, u in enumerate(USERS)
            for n in range(i + 1)
        ]
        produce(kafka_broker, PAYMENTS_TOPIC, payments)

        def answered() -> bool:
            try:  # (a lookup forwarded while the machine is busy may take a while: ask again)
                r = httpx.get(f"http://127.0.0.1:{port}/stores/payment-totals/keys/{USERS[-1]}", headers=AUTH)
            except httpx.TimeoutException:
                return False
            return r.status_code == 200 and r.json()["value"]["value"]["count"] == len(USERS)

        wait_until(answered, 60, "the last user's total is queryable")
        yield port
    finally:
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=60)


class Offline:
    """Aborts and records every request not addressed to 127.0.0.1."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def __call__(self, route) -> None:
        if urlparse(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


@pytest.fixture
def browser_page() -> Iterator[tuple]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1400, "height": 1100})
        offline = Offline()
        context.route("**/*", offline)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield page, offline, errors
        browser.close()


def _screenshot(page, name: str, selector: str | None = None) -> None:
    target = os.environ.get("STREAMS_RUNTIME_SCREENSHOTS")
    if target:
        (page.locator(selector) if selector else page).screenshot(path=str(Path(target) / name))


class HistoryOfEveryPartition:
    """True once ``/ui/api/history/all`` holds two samples of every instance and, between them,
    the latest samples name every input partition (``last``: the body last seen)."""

    def __init__(self, me: str) -> None:
        self.me = me
        self.last: dict = {}

    def __call__(self) -> bool:
        self.last = httpx.get(f"http://{self.me}/ui/api/history/all", headers=AUTH, timeout=10).json()
        samples = [i["samples"] for i in self.last["instances"]]
        if len(samples) != 2 or any(len(s) < 2 for s in samples):
            return False
        named = {tp for s in samples for tp in s[-1]["offsets"]}
        return named == {f"{PAYMENTS_TOPIC}/{p}" for p in range(PARTITIONS)}

    def __str__(self) -> str:
        return "two samples of each instance naming every input partition, last: " + json.dumps(
            [(i["endpoint"], i.get("error"), i["samples"][-2:]) for i in self.last.get("instances", [])]
        )


def test_should_show_topology_instances_tasks_and_answer_a_key_lookup_offline(workers, browser_page):
    page, offline, errors = browser_page
    port = workers
    me, other = f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"
    assert httpx.get(f"http://{me}/ui/api/instances").status_code == 401  # data stays behind the token
    assert httpx.get(f"http://{me}/ui/api/history/all").status_code == 401
    history = HistoryOfEveryPartition(me)
    wait_until(history, 60, lambda: str(history), interval=0.5)
    opened_ms = time.time() * 1000
    page.goto(f"http://{me}/ui")
    expect(page.locator("#token-form")).to_be_visible()  # the worker answered 401: the page asks
    page.fill("#token-input", TOKEN)
    page.click("#token-form button")
    # the topology picture: the demo's aggregate, its store and changelog are drawn
    picture = page.locator("#topology .panel svg")  # the demo has one sub-topology: one panel
    expect(picture).to_be_visible(timeout=15_000)
    expect(picture.locator("g.node title", has_text="store/payment-totals")).to_have_count(1)
    expect(
        picture.locator("g.node title", has_text="changelog/demo-payments-app-payment-totals-changelog")
    ).to_have_count(1)
    # both instances with all four active tasks, each with its host
    for endpoint in (me, other):
        expect(page.locator(f'.instance[data-endpoint="{endpoint}"]')).to_be_visible(timeout=15_000)
    active = page.locator(".task.active")
    expect(active).to_have_count(PARTITIONS, timeout=15_000)
    placed = {
        (active.nth(i).get_attribute("data-task"), active.nth(i).get_attribute("data-host"))
        for i in range(PARTITIONS)
    }
    assert {t for t, _ in placed} == {f"0_{p}" for p in range(PARTITIONS)}
    assert {h for _, h in placed} == {me, other}
    assert {active.nth(i).get_attribute("data-state") for i in range(PARTITIONS)} == {"RUNNING"}
    expect(page.locator("#lags td", has_text="payment-totals").first).to_be_visible()
    _expect_store_sizes_and_charts_of_both_instances(page, (me, other), opened_ms)
    # key lookup of users owned by each instance: the value comes from the owner
    owners = {}
    for user in USERS:
        meta = httpx.get(f"http://{me}/metadata/payment-totals/{user}", headers=AUTH).json()
        owners.setdefault(meta["active_host"], user)
    assert set(owners) == {me, other}
    for owner, user in owners.items():
        page.fill("#lookup-key", user)
        page.click("#lookup-form button")
        count = USERS.index(user) + 1
        expect(page.locator("#lookup-result")).to_contain_text(f'"count":{count}')
        expect(page.locator("#lookup-result")).to_contain_text(f"answered by: {owner}")
    _screenshot(page, "console.png")
    _screenshot(page, "topology.png", "#topology svg")
    assert offline.blocked == []
    assert errors == []


def _expect_store_sizes_and_charts_of_both_instances(page, endpoints: tuple, opened_ms: float) -> None:
    sizes = page.locator("#stores tr", has_text="payment-totals")
    expect(sizes).to_have_count(1, timeout=15_000)
    for endpoint in endpoints:
        expect(page.locator("#stores th", has_text=endpoint)).to_have_count(1)
    # every instance's numbers (RocksDB's estimates: each holds some users) and their sum
    cells = [int(c) for c in sizes.locator("td.num").all_inner_texts()]
    assert len(cells) == 3 and cells[0] > 0 and cells[1] > 0 and cells[0] + cells[1] == cells[2]
    for chart, unit in [
        ("rate", "records/s"),
        ("commit", "ms"),
        ("lag", "records"),
        ("restore", "records"),
        ("dropped", "records"),
    ]:
        svg = page.locator(f"#chart-{chart} svg")
        expect(svg.locator(".y-axis .unit")).to_have_text(unit, timeout=15_000)
        assert svg.locator(".x-axis text").count() >= 2  # time ticks (HH:MM)
        assert svg.locator(".y-axis text").count() >= 5  # value ticks and the unit
        expect(svg.locator("polyline.series").first).to_be_attached()
        # history kept by the workers: points from before this page was opened
        assert 0 < int(svg.get_attribute("data-first-t")) < opened_ms, chart
    series = "items => items.map(i => i.dataset.series)"
    for chart in ("rate", "commit", "restore"):
        legend = page.locator(f"#chart-{chart} .legend-item")
        assert set(legend.evaluate_all(series)) == set(endpoints)
    lag_series = page.locator("#chart-lag .legend-item").evaluate_all(series)
    assert set(lag_series) == {f"{PAYMENTS_TOPIC}/{p}" for p in range(PARTITIONS)}
    rows = page.locator("#consumer-lag tr", has_text=PAYMENTS_TOPIC)
    expect(rows).to_have_count(PARTITIONS, timeout=15_000)
    shown = [rows.nth(i).locator("td").all_inner_texts() for i in range(PARTITIONS)]
    assert sorted(int(r[1]) for r in shown) == list(range(PARTITIONS))
    assert {r[2] for r in shown} == set(endpoints)  # each partition with the instance reading it
    for _, _, _, committed, position, end, lag in shown:  # "-": not known (yet)
        assert position == "-" or int(end) >= int(position) >= 0  # "-": nothing read since assigned
        base = position if committed == "-" else committed  # lag: end - committed
        assert lag == "-" if base == "-" else int(lag) == int(end) - int(base) >= 0


@pytest.fixture
def four_subtopology_console() -> Iterator[tuple[str, str]]:
    """The console of an instance (a fake client, no broker) of a 4 sub-topology application,
    and the endpoint of a second instance in its assignment that accepts connections and never
    answers."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel accepts the connections; nobody ever reads them
    me, other = f"127.0.0.1:{free_ports()}", f"127.0.0.1:{silent.getsockname()[1]}"
    hosts = AssignmentInfo(
        partitions_by_host={
            me: frozenset(SourcePartition("input", p) for p in (0, 1)),
            other: frozenset(SourcePartition("input", p) for p in (2, 3)),
        }
    )
    client = FakeClient([FakeThread("four-1", hosts)], endpoint=me, forwarding_secret=SECRET)
    client.topology = four_subtopologies()
    client.metadata_for_local_threads = lambda: []
    server = HttpServer(create_app(client), "127.0.0.1", int(me.rpartition(":")[2]))
    server.start()
    try:
        yield me, other
    finally:
        server.stop()
        silent.close()


def test_should_draw_a_four_sub_topology_application_one_readable_panel_each(
    four_subtopology_console, browser_page
):
    page, offline, errors = browser_page
    me, silent = four_subtopology_console
    page.goto(f"http://{me}/ui")
    panels = page.locator("#topology .panel")
    expect(panels).to_have_count(4, timeout=15_000)
    width = page.viewport_size["width"]
    scale = "svg => svg.getBoundingClientRect().width / svg.viewBox.baseVal.width"
    for i in range(4):
        panel = panels.nth(i)
        expect(panel.locator("h3")).to_have_text(f"Sub-topology {i}")
        box = panel.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (i, box)
        # readable: drawn at least at 3/4 of Graphviz's size (10 pt labels stay >= 7.5 px)
        assert panel.locator("svg").evaluate(scale) >= 0.75, i
    expect(panels.nth(1).locator("g.node title", has_text="store/per-item")).to_have_count(1)
    expect(panels.nth(0).locator("g.node title", has_text="store/")).to_have_count(0)
    before = panels.nth(2).locator("svg").evaluate(scale)
    panels.nth(2).click()  # zoom: the panel at twice its size, scrolled inside its box
    expect(panels.nth(2)).to_have_class("panel full")
    zoomed = panels.nth(2).locator("svg").evaluate(scale)
    assert zoomed == pytest.approx(2 * 4 / 3, abs=0.01) and zoomed > before
    assert panels.nth(2).bounding_box()["width"] <= width
    panels.nth(2).click()
    expect(panels.nth(2)).to_have_class("panel")
    assert panels.nth(2).locator("svg").evaluate(scale) == pytest.approx(before, abs=0.01)
    _screenshot(page, "topology-panels.png", "#topology")
    # an instance that never answers is shown as unreachable; the page goes on refreshing
    expect(page.locator(f'.instance.unreachable[data-endpoint="{silent}"]')).to_contain_text(
        "unreachable", timeout=15_000
    )
    expect(page.locator(f'.instance[data-endpoint="{me}"] .error')).to_have_count(0)
    note = page.locator("#history-note")
    expect(note).to_contain_text(f"not answering: {silent}: unreachable", timeout=15_000)
    updated = page.locator("#status").inner_text()
    expect(page.locator("#status")).not_to_have_text(updated, timeout=15_000)
    assert offline.blocked == []
    assert errors == []


def test_should_serve_swagger_offline_and_take_the_token(workers, browser_page):
    page, offline, errors = browser_page
    base = f"http://127.0.0.1:{workers}"
    page.goto(f"{base}/docs")
    expect(page.locator("#token-note")).to_contain_text("needs its bearer token")
    page.fill("#token-input", TOKEN)
    page.click("#token-use")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text(
        "Kafka Streams worker API", timeout=15_000
    )
    # Swagger's Authorize dialog holds the bearer token (HTTP bearer scheme, pre-authorized)
    page.click(".swagger-ui .btn.authorize")
    expect(page.locator(".swagger-ui .modal-ux")).to_contain_text("bearerAuth")
    expect(page.locator(".swagger-ui .modal-ux")).to_contain_text("Authorized")
    page.click(".swagger-ui .modal-ux .btn-done")
    # Try it out on GET /stores sends the token: 200 with the demo's store
    block = page.locator("#operations-stores-stores_stores_get")
    block.locator(".opblock-summary").click()
    block.locator(".try-out__btn").click()
    block.locator(".execute").click()
    expect(block.locator(".live-responses-table tr.response .response-col_status").first).to_contain_text(
        "200"
    )
    expect(block.locator(".live-responses-table")).to_contain_text("payment-totals")
    # log out in the Authorize dialog: the same call is refused
    page.click(".swagger-ui .btn.authorize")
    page.click(".swagger-ui .modal-ux button:has-text('Logout')")
    page.click(".swagger-ui .modal-ux .close-modal")
    block.locator(".execute").click()
    expect(block.locator(".live-responses-table tr.response .response-col_status").first).to_contain_text(
        "401"
    )
    assert offline.blocked == []
    assert errors == []


def _exported_names(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names.add(name)
            if kind == "counter":
                names.add(f"{name}_total")
        elif line and not line.startswith("#"):
            names.add(line.split("{")[0].split()[0])
    return names


def test_every_metric_of_the_dashboard_and_rules_is_exported_by_a_worker(workers):
    text = httpx.get(f"http://127.0.0.1:{workers}/metrics", headers=AUTH).text
    used = metric_names_used()
    assert len(used) >= 10
    assert used - _exported_names(text) == set()


def test_status_shows_members_tasks_and_lag(workers, kafka_broker, capsys, monkeypatch):
    monkeypatch.setenv("STREAMS_RUNTIME_HTTP_TOKEN", TOKEN)
    args = ["status", "--app-id", APPLICATION_ID, "--bootstrap-servers", kafka_broker]
    assert main([*args, "--http", f"127.0.0.1:{workers}", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    # (>= 2: Tansu may still list a stopped instance of an earlier test run of the demo app)
    assert status["group_state"] == "Stable" and len(status["members"]) >= 2
    endpoints = {i["endpoint"] for i in status["instances"]}
    assert endpoints == {f"127.0.0.1:{workers}", f"127.0.0.1:{workers + 1}"}
    active = sorted(t["task_id"] for i in status["instances"] for th in i["threads"] for t in th["tasks"])
    assert active == [f"0_{p}" for p in range(PARTITIONS)]
    lags = {(r["topic"], r["partition"]): r for r in status["lags"]}
    assert set(lags) == {(PAYMENTS_TOPIC, p) for p in range(PARTITIONS)}
    wait_until(
        lambda: main([*args, "--http", f"127.0.0.1:{workers}", "--json"]) == 0
        and all(r["lag"] == 0 for r in json.loads(capsys.readouterr().out)["lags"]),
        30,
        "every input partition committed to its end",
    )
    assert main([*args, "--http", f"127.0.0.1:{workers}"]) == 0  # the rich tables
    shown = capsys.readouterr().out
    assert "Lag per input partition" in shown and f"127.0.0.1:{workers + 1}" in shown
