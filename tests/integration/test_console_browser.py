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
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from streams_runtime.cli import main
from streams_runtime.demo.app import APPLICATION_ID, PARTITIONS, PAYMENTS_TOPIC, RESULTS_TOPIC
from tests.deploy.test_dashboards import metric_names_used
from tests.integration.streams_support import make_topics, produce, wait_until
from tests.integration.test_worker_http import _status, _two_free_ports

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "console-" + uuid.uuid4().hex[:8]
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "console-forwarding-" + uuid.uuid4().hex
USERS = [f"console-user-{uuid.uuid4().hex[:6]}-{i}" for i in range(12)]


@pytest.fixture(scope="module")
def workers(kafka_broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    make_topics(kafka_broker, **{PAYMENTS_TOPIC: PARTITIONS, RESULTS_TOPIC: PARTITIONS})
    port = _two_free_ports()
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
            r = httpx.get(f"http://127.0.0.1:{port}/stores/payment-totals/keys/{USERS[-1]}", headers=AUTH)
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


def test_should_show_topology_instances_tasks_and_answer_a_key_lookup_offline(workers, browser_page):
    page, offline, errors = browser_page
    port = workers
    me, other = f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"
    assert httpx.get(f"http://{me}/ui/api/instances").status_code == 401  # data stays behind the token
    page.goto(f"http://{me}/ui")
    expect(page.locator("#token-form")).to_be_visible()  # the worker answered 401: the page asks
    page.fill("#token-input", TOKEN)
    page.click("#token-form button")
    # the topology picture: the demo's aggregate, its store and changelog are drawn
    picture = page.locator("#topology svg")
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
    expect(page.locator("#stores td", has_text="payment-totals")).to_be_visible()
    expect(page.locator("#rate-chart polyline")).to_have_count(1)
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
