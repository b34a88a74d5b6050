"""docker-compose.yml, the Dockerfile and the systemd unit agree with the code.

Docker cannot run on this machine, so these tests read the files and check what would break a
`docker compose up`: services and images, the KRaft settings, ports, volumes, and the names the
code uses (the worker's app, its application id and topics, the Airflow folders and connection).
"""

from __future__ import annotations

import importlib
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]


def _worker_args() -> list[str]:
    command = SERVICES["stream-worker"]["command"]
    return shlex.split(command[-1].replace("$${HOSTNAME}", "HOST"))


def _arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_compose_has_every_service_the_platform_needs() -> None:
    assert set(SERVICES) >= {
        "kafka", "postgres", "airflow-init", "airflow-apiserver", "airflow-scheduler",
        "airflow-dag-processor", "airflow-triggerer", "spark-master", "spark-worker", "stream-worker",
    }


def test_kafka_runs_in_kraft_mode_without_topic_auto_creation() -> None:
    kafka = SERVICES["kafka"]
    env = kafka["environment"]
    assert kafka["image"].startswith("apache/kafka:")
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{env['KAFKA_NODE_ID']}@kafka:9093"
    assert "zookeeper" not in yaml.safe_dump(COMPOSE).lower()
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert env["KAFKA_ADVERTISED_LISTENERS"] == "PLAINTEXT://kafka:9092"
    assert "kafka-data:/var/lib/kafka/data" in kafka["volumes"]


def test_every_client_points_at_the_advertised_kafka_listener() -> None:
    advertised = SERVICES["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"].split("//")[1]
    assert _arg(_worker_args(), "--bootstrap-servers") == advertised
    airflow_env = SERVICES["airflow-scheduler"]["environment"]
    assert airflow_env["BOOTSTRAP_SERVERS"] == advertised
    conn = yaml.safe_load(airflow_env["AIRFLOW_CONN_STREAMS_KAFKA"])
    assert f"{conn['host']}:{conn['port']}" == advertised


def test_airflow_connection_is_the_one_the_hook_uses_by_default() -> None:
    from plugins.streams_ops.hooks.kafka_admin import KafkaAdminHook

    env = SERVICES["airflow-scheduler"]["environment"]
    assert f"AIRFLOW_CONN_{KafkaAdminHook.default_conn_name.upper()}" in env


def test_airflow_services_share_folders_that_exist_in_the_image() -> None:
    for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"):
        env = SERVICES[name]["environment"]
        for key, folder in (("AIRFLOW__CORE__DAGS_FOLDER", "dags"), ("AIRFLOW__CORE__PLUGINS_FOLDER", "plugins")):
            assert env[key] == f"/opt/streams-runtime/{folder}"
            assert (ROOT / folder).is_dir()
        assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql+psycopg2://")
        assert SERVICES[name]["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully"
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    for folder in ("streams_runtime", "spark_jobs", "dags", "plugins"):
        assert f"COPY {folder} ./{folder}" in dockerfile
    assert "requirements.lock" in dockerfile and "openjdk-17-jre-headless" in dockerfile
    assert "psycopg2-binary==" in (ROOT / "requirements.lock").read_text()


def test_published_ports_do_not_collide() -> None:
    published = [p.split(":")[0] for s in SERVICES.values() for p in s.get("ports", [])]
    assert len(published) == len(set(published)), published


def test_every_named_volume_is_declared() -> None:
    used = {
        v.split(":")[0] for s in SERVICES.values() for v in s.get("volumes", []) if not v.startswith((".", "/"))
    }
    assert used <= set(COMPOSE["volumes"])


def test_stream_workers_run_the_demo_app_with_persistent_per_replica_state() -> None:
    worker = SERVICES["stream-worker"]
    args = _worker_args()
    module, attr = _arg(args, "--app").split(":")
    topology, config = getattr(importlib.import_module(module), attr)()
    assert config["application_id"] == importlib.import_module(module).APPLICATION_ID
    assert worker["deploy"]["replicas"] >= 2
    state_dir = _arg(args, "--state-dir")
    mount = next(v for v in worker["volumes"] if v.startswith("worker-state:"))
    assert state_dir.startswith(mount.split(":")[1] + "/")
    assert state_dir.endswith("/HOST"), "each replica needs its own state directory"
    assert worker["stop_signal"] == "SIGTERM"


def test_provisioned_topics_match_what_the_demo_app_reads_and_writes() -> None:
    app = importlib.import_module("streams_runtime.demo.app")
    specs = yaml.safe_load((ROOT / "dags" / "specs" / "topics.yaml").read_text())
    partitions = {t["name"]: t["partitions"] for t in specs["topics"]}
    assert partitions.get(app.PAYMENTS_TOPIC) == app.PARTITIONS
    assert partitions.get(app.RESULTS_TOPIC) == app.PARTITIONS


@pytest.mark.parametrize("needle", ["streams-runtime worker --app ${APP}", "KillSignal=SIGTERM", "worker-%i"])
def test_systemd_unit_runs_one_worker_instance_per_unit(needle: str) -> None:
    assert needle in (ROOT / "deploy" / "systemd" / "streams-worker@.service").read_text()
