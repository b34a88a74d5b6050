"""The Grafana dashboard and the Prometheus config and alerting rules in deploy/ load and are wired.

The rules go through ``promtool check rules`` (Debian's ``prometheus`` package; installed by
scripts/setup_system.sh, which ``make test`` runs). That every metric they use exists in a running
worker's /metrics is checked in tests/integration/test_console_browser.py with
:func:`metric_names_used`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import yaml

import tests.deploy.compose_files as _compose_files

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "rules" / "streams-runtime.yml"
PROMETHEUS = ROOT / "deploy" / "prometheus" / "prometheus.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "streams-runtime.json"
PROVISIONING = ROOT / "deploy" / "grafana" / "provisioning"
# with deploy/stack.env's values, as `docker compose --env-file deploy/stack.env` reads it
COMPOSE = _compose_files.COMPOSE["services"]
ALERTS = {
    "StreamsConsumerLagGrowing",
    "StreamsThreadDied",
    "StreamsTaskRestoringTooLong",
    "StreamsStandbyFarBehind",
    "StreamsCommitLatencyHigh",
}
_METRIC = re.compile(r"\bkafka_streams_[a-z0-9_]+\b")


def _promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is not installed: run scripts/setup_system.sh (apt-get install prometheus)"
    return found


def dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    exprs += [v["query"]["query"] for v in dashboard["templating"]["list"]]
    return exprs


def rule_exprs() -> list[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def metric_names_used() -> set[str]:
    return {name for expr in dashboard_exprs() + rule_exprs() for name in _METRIC.findall(expr)}


def test_rules_pass_promtool_and_cover_the_five_alerts():
    result = subprocess.run(
        [_promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 5 rules found" in result.stdout + result.stderr
    groups = yaml.safe_load(RULES.read_text())["groups"]
    assert {rule["alert"] for group in groups for rule in group["rules"]} == ALERTS


def test_each_alert_fires_on_its_condition_and_stays_quiet_otherwise():
    """``promtool test rules``: series that must fire each alert (with its rendered summary) and
    series that must not; a rule whose two sides never match on labels fails here."""
    tests = RULES.with_name("streams-runtime.test.yml")
    result = subprocess.run(
        [_promtool(), "test", "rules", str(tests)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    covered = {
        case["alertname"]
        for test in yaml.safe_load(tests.read_text())["tests"]
        for case in test["alert_rule_test"]
        if case["exp_alerts"]
    }
    assert covered == ALERTS


def test_an_alert_test_fails_when_the_restore_rule_loses_its_label_match(tmp_path):
    rules = tmp_path / "streams-runtime.yml"
    rules.write_text(RULES.read_text().replace("and on (instance, task_id)", "and"))
    tests = tmp_path / "streams-runtime.test.yml"
    tests.write_text(RULES.with_name("streams-runtime.test.yml").read_text())
    result = subprocess.run([_promtool(), "test", "rules", str(tests)], capture_output=True, text=True)
    assert result.returncode != 0 and "StreamsTaskRestoringTooLong" in result.stdout + result.stderr


def test_promtool_rejects_a_broken_rule(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(RULES.read_text().replace("> 10000", "> > 10000"))
    result = subprocess.run([_promtool(), "check", "rules", str(broken)], capture_output=True, text=True)
    assert result.returncode != 0  # the check above can fail


def test_prometheus_config_scrapes_every_worker_with_the_token_and_loads_the_rules():
    result = subprocess.run(
        [_promtool(), "check", "config", "--syntax-only", str(PROMETHEUS)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(PROMETHEUS.read_text())
    (job,) = config["scrape_configs"]
    worker = COMPOSE["stream-worker"]
    # Prometheus does not read the environment: the port is deploy/stack.env's, written out
    port = int(_compose_files.STACK_ENV["STREAM_WORKER_HTTP_PORT"])
    assert job["dns_sd_configs"] == [
        {"names": ["stream-worker"], "type": "A", "port": port, "refresh_interval": "30s"}
    ]
    assert str(job["dns_sd_configs"][0]["port"]) == worker["labels"]["prometheus.io/port"]
    assert job["metrics_path"] == worker["labels"]["prometheus.io/path"]
    assert job["authorization"]["credentials_file"] == "/tmp/streams-runtime-token"
    prometheus = COMPOSE["prometheus"]
    assert "/tmp/streams-runtime-token" in prometheus["command"][0]
    assert (
        prometheus["environment"]["STREAMS_RUNTIME_HTTP_TOKEN"]
        == worker["environment"]["STREAMS_RUNTIME_HTTP_TOKEN"]
    )
    assert "./deploy/prometheus/rules:/etc/prometheus/rules:ro" in prometheus["volumes"]
    # by name: the promtool test file next to it is no rule file (Prometheus refuses to load it)
    assert config["rule_files"] == ["/etc/prometheus/rules/streams-runtime.yml"]
    assert (RULES.parent / Path(config["rule_files"][0]).name) == RULES


def test_dashboard_loads_and_grafana_is_provisioned_with_it():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "streams-runtime" and len(dashboard["panels"]) >= 10
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    datasource = yaml.safe_load((PROVISIONING / "datasources" / "prometheus.yml").read_text())["datasources"][
        0
    ]
    # Grafana's provisioning is no compose file: deploy/stack.env's port, written out
    assert datasource["url"] == f"http://prometheus:{_compose_files.STACK_ENV['PROMETHEUS_PORT']}"
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == datasource["uid"]
        assert panel["targets"] and all(t["expr"] for t in panel["targets"])
    provider = yaml.safe_load((PROVISIONING / "dashboards" / "streams-runtime.yml").read_text())["providers"][
        0
    ]
    grafana = COMPOSE["grafana"]
    assert f"./deploy/grafana/dashboards:{provider['options']['path']}:ro" in grafana["volumes"]
    assert "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro" in grafana["volumes"]


def test_expressions_name_the_metrics_they_chart():
    names = metric_names_used()
    assert {
        "kafka_streams_consumer_records_lag",
        "kafka_streams_alive_stream_threads",
        "kafka_streams_restore_remaining_records",
        "kafka_streams_standby_records_lag",
        "kafka_streams_stream_thread_commit_latency_avg",
    } <= names
