"""docker-compose.yml, the Dockerfile and the systemd unit agree with the code.

Docker cannot run on this machine, so these tests read the files and check what would break a
`docker compose up`: services and images, the KRaft settings, ports, volumes, and the names the
code uses (the worker's app, its application id and topics, the Airflow folders and connection).
"""

from __future__ import annotations

import importlib
import re
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.compose_files import COMPOSE, RAW, REFERENCE, STACK_ENV, load_stack_module

ROOT = Path(__file__).resolve().parents[2]
# the compose file with deploy/stack.env's values, as `docker compose --env-file deploy/stack.env`
SERVICES = COMPOSE["services"]
#: the compose file's Kafka nodes; the native stack starts as many (scripts/stack.py KAFKA_NODES)
KAFKA_NODES = ("kafka-1", "kafka-2", "kafka-3")


def _worker_args() -> list[str]:
    command = SERVICES["stream-worker"]["command"]
    return shlex.split(command[-1].replace("$${HOSTNAME}", "HOST"))


def _arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_compose_has_every_service_the_platform_needs() -> None:
    assert set(SERVICES) >= {
        *KAFKA_NODES,
        "postgres",
        "airflow-init",
        "airflow-apiserver",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-triggerer",
        "spark-master",
        "spark-worker",
        "stream-worker",
    }


def test_kafka_runs_as_a_three_node_kraft_cluster_without_topic_auto_creation() -> None:
    # the Apache Kafka the test suite proves the runtime on (jvm/apache-kafka/pom.xml)
    pom = (ROOT / "jvm" / "apache-kafka" / "pom.xml").read_text()
    version = pom.split("<kafka.version>")[1].split("</kafka.version>")[0]
    voters = {f"{n + 1}@{name}:9093" for n, name in enumerate(KAFKA_NODES)}
    assert "zookeeper" not in yaml.safe_dump(COMPOSE).lower()
    cluster_ids = set()
    for n, name in enumerate(KAFKA_NODES, 1):
        kafka = SERVICES[name]
        env = kafka["environment"]
        assert kafka["image"] == f"apache/kafka:{version}"
        assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
        assert env["KAFKA_NODE_ID"] == n
        assert set(env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")) == voters
        assert env["KAFKA_ADVERTISED_LISTENERS"] == f"PLAINTEXT://{name}:9092"
        assert f"{name}-data:/var/lib/kafka/data" in kafka["volumes"]
        assert f"{name}-data" in COMPOSE["volumes"]
        # the topic defaults: the values of deploy/stack.env, the same the native stack's nodes get
        for key, value in STACK_ENV.items():
            if key.startswith("KAFKA_"):
                assert str(env[key]) == value, (name, key)
        cluster_ids.add(env["CLUSTER_ID"])
    assert len(cluster_ids) == 1  # one cluster: every node formatted with one id
    assert STACK_ENV["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert STACK_ENV["KAFKA_DEFAULT_REPLICATION_FACTOR"] == str(len(KAFKA_NODES))
    assert int(STACK_ENV["KAFKA_MIN_INSYNC_REPLICAS"]) == len(KAFKA_NODES) - 1


def test_every_client_bootstraps_from_every_advertised_kafka_listener() -> None:
    advertised = ",".join(
        SERVICES[name]["environment"]["KAFKA_ADVERTISED_LISTENERS"].split("//")[1] for name in KAFKA_NODES
    )
    assert _arg(_worker_args(), "--bootstrap-servers") == advertised
    airflow_env = SERVICES["airflow-scheduler"]["environment"]
    assert airflow_env["BOOTSTRAP_SERVERS"] == advertised
    conn = yaml.safe_load(airflow_env["AIRFLOW_CONN_STREAMS_KAFKA"])
    assert conn["host"] == advertised and "port" not in conn  # KafkaAdminHook: a list in the host
    depends = SERVICES["stream-worker"]["depends_on"]
    assert {name: depends[name]["condition"] for name in KAFKA_NODES} == dict.fromkeys(
        KAFKA_NODES, "service_healthy"
    )


def test_airflow_services_share_folders_that_exist_in_the_image() -> None:
    for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"):
        env = SERVICES[name]["environment"]
        for key, folder in (
            ("AIRFLOW__CORE__DAGS_FOLDER", "dags"),
            ("AIRFLOW__CORE__PLUGINS_FOLDER", "plugins"),
        ):
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
    published = [p.rsplit(":", 1)[0] for s in SERVICES.values() for p in s.get("ports", [])]
    assert len(published) == len(set(published)), published


def test_only_the_uis_are_published_and_on_localhost_only() -> None:
    """Kafka, PostgreSQL, Spark's job port (7077, unauthenticated) and the workers' APIs stay on
    the compose network; the four UIs are reachable from this host only."""
    published = {name: s["ports"] for name, s in SERVICES.items() if s.get("ports")}
    assert published == {
        "airflow-apiserver": ["127.0.0.1:8080:8080"],
        "spark-master": ["127.0.0.1:8081:8081"],
        "prometheus": ["127.0.0.1:9090:9090"],
        "grafana": ["127.0.0.1:3000:3000"],
    }


def test_airflow_init_creates_the_pool_the_spark_tasks_run_in() -> None:
    init = " ".join(SERVICES["airflow-init"]["command"])
    assert "airflow db migrate && airflow pools set streams_spark 2" in init
    for dag in ("spark_backfill.py", "state_rebuild.py"):
        assert 'pool="streams_spark"' in (ROOT / "dags" / dag).read_text()


def test_data_docs_are_written_and_served_from_one_volume() -> None:
    """The backfill task (scheduler) writes its report under the runtime home; the api-server's
    plugin serves files under the same root (``data_docs_root``): one path on the volume both mount."""
    env = {name: "x" for name in COMPOSE_SECRETS}
    rendered = _render(COMPOSE, env)["services"]
    homes = set()
    for name in ("airflow-apiserver", "airflow-scheduler"):
        service = rendered[name]
        home = service["environment"]["STREAMS_RUNTIME_HOME"]
        mounts = {v.split(":")[1]: v.split(":")[0] for v in service["volumes"]}
        assert any(home.startswith(path + "/") and mounts[path] == "airflow-data" for path in mounts), (
            name,
            home,
            mounts,
        )
        homes.add(home)
    assert len(homes) == 1


def test_every_named_volume_is_declared() -> None:
    used = {
        v.split(":")[0]
        for s in SERVICES.values()
        for v in s.get("volumes", [])
        if not v.startswith((".", "/"))
    }
    assert used <= set(COMPOSE["volumes"])


def test_stream_workers_run_the_demo_app_with_persistent_per_replica_state() -> None:
    worker = SERVICES["stream-worker"]
    args = _worker_args()
    module, attr = _arg(args, "--app").split(":")
    topology, config = getattr(importlib.import_module(module), attr)()
    assert config["application_id"] == importlib.import_module(module).APPLICATION_ID
    assert int(worker["deploy"]["replicas"]) >= 2
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


class _Started(Exception):
    """Raised by the fake runtime's start(): carries the config the instance built."""


class _RecordingStreams:
    """Stands in for KafkaStreams in run_instance: validates the config it gets, then stops."""

    def __init__(self, topology: Any, config: dict[str, Any]) -> None:
        from streams_runtime.config import StreamsConfig

        StreamsConfig(config)  # the same validation KafkaStreams applies
        self.config = config

    def start(self) -> None:
        raise _Started(self.config)


def _instance_config(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    token: str | None,
    refused: list[int] | None = None,
) -> dict[str, Any]:
    """The config ``streams-runtime worker <argv>`` gives the KafkaStreams of instance 0; with
    ``refused`` (a list), an instance that exits before starting appends its exit code there."""
    from streams_runtime import worker_instance
    from streams_runtime.cli import build_parser
    from streams_runtime.worker import HTTP_TOKEN_ENV, WorkerLauncher

    if token is None:
        monkeypatch.delenv(HTTP_TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(HTTP_TOKEN_ENV, token)
    args = build_parser().parse_args(argv)
    launcher = WorkerLauncher(
        args.app,
        instances=args.instances,
        threads=args.threads,
        bootstrap_servers=args.bootstrap_servers,
        state_dir=tmp_path,
        runtime=f"{__name__}:_RecordingStreams",
        http_port=args.http_port,
        http_host=args.http_host,
        http_bind=args.http_bind,
    )
    command = launcher.command(0)
    instance_argv = command[command.index("streams_runtime.worker_instance") + 1 :]
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if refused is not None:
            refused.append(worker_instance.main(instance_argv))
            return {}
        with pytest.raises(_Started) as started:
            worker_instance.main(instance_argv)
    finally:  # run_instance installs its own stop handlers
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    return started.value.args[0]


def _http_port() -> int:
    return int(_arg(_worker_args(), "--http-port"))


def test_stream_workers_serve_the_http_api_on_their_own_advertised_hostname(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker = SERVICES["stream-worker"]
    args = _worker_args()
    assert args[:2] == ["exec", "streams-runtime"]
    port = _http_port()
    # the hostname the replica keeps its state under is the one it advertises (other replicas
    # forward key queries there; the service name would resolve to any replica)
    assert _arg(args, "--http-host") == "HOST" and _arg(args, "--state-dir").endswith("/HOST")
    assert _arg(args, "--http-bind") == "0.0.0.0"
    assert _arg(args, "--instances") == "1", "one instance per container: port + 0 is the port"
    from streams_runtime.worker import HTTP_TOKEN_ENV

    token = worker["environment"][HTTP_TOKEN_ENV]
    assert token.startswith("${" + HTTP_TOKEN_ENV + ":?"), "the token comes from the host's environment"
    config = _instance_config(args[2:], tmp_path, monkeypatch, token="s3cret")
    assert config["application_server"] == f"HOST:{port}"
    assert config["application_server_bind"] == "0.0.0.0"
    assert config["application_server_token"] == "s3cret"
    assert "application_server_token" not in _instance_config(args[2:], tmp_path, monkeypatch, token=None)


def test_stream_worker_port_is_exposed_for_prometheus_and_checked_for_readiness() -> None:
    from streams_runtime.server.app import create_app

    worker = SERVICES["stream-worker"]
    port = _http_port()
    routes = {getattr(r, "path", None) for r in create_app(object()).routes}
    assert [str(p) for p in worker["expose"]] == [str(port)]
    assert "ports" not in worker, "replicas share the container port; publishing it would collide"
    labels = worker["labels"]
    assert labels["prometheus.io/scrape"] == "true" and labels["prometheus.io/port"] == str(port)
    assert labels["prometheus.io/path"] in routes
    check = worker["healthcheck"]
    assert check["test"][0] == "CMD" and check["test"][1] == "python"
    assert f"http://127.0.0.1:{port}/health/ready" in check["test"][-1] and "/health/ready" in routes
    assert int(check["start_period"].rstrip("s")) >= 60, "a restore at start must not count as failures"


SYSTEMD_UNIT = ROOT / "deploy" / "systemd" / "streams-worker@.service"
UNIT_SECRETS = {
    "STREAMS_RUNTIME_HTTP_TOKEN": "t0k",
    "STREAMS_RUNTIME_FORWARDING_SECRET": "a-secret-all-instances-share-of-32-bytes",
}


@pytest.mark.parametrize(
    "needle",
    [
        "streams-runtime worker --app",
        "KillSignal=SIGTERM",
        "worker-%i",
        "STREAMS_RUNTIME_HTTP_TOKEN",
        "exec ",
    ],
)
def test_systemd_unit_runs_one_worker_instance_per_unit(needle: str) -> None:
    assert needle in SYSTEMD_UNIT.read_text()


def test_systemd_unit_gives_each_instance_its_own_http_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Expand ExecStart as systemd would (%i, $$) and run its shell with printf instead of the worker."""
    settings = dict(line.split("=", 1) for line in SYSTEMD_UNIT.read_text().splitlines() if "=" in line)
    sh, dash_c, script = shlex.split(settings["ExecStart"])
    assert (sh, dash_c) == ("/bin/sh", "-c")
    binary = "/opt/streams-runtime/.venv/bin/streams-runtime"
    script = script.replace("%i", "2").replace("$$", "$").replace(f"exec {binary}", "printf '%s\\0'")
    defaults = dict(d.split("=", 1) for d in settings["Environment"].split())
    env = {
        "PATH": "/usr/bin:/bin",
        "APP": "streams_runtime.demo.app:app",
        "THREADS": "2",
        "BOOTSTRAP_SERVERS": "kafka-1:9092",
        "HTTP_HOST": "node-7",
        **UNIT_SECRETS,
        **defaults,
    }
    out = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    argv = out.split("\0")[:-1]
    assert _arg(argv, "--http-port") == "7072" and _arg(argv, "--state-dir").endswith("/worker-2")
    config = _instance_config(argv, tmp_path, monkeypatch, token="t0k")
    assert config["application_server"] == "node-7:7072"
    assert config["application_server_bind"] == "0.0.0.0" and config["application_server_token"] == "t0k"


def test_stream_workers_take_the_forwarding_secret_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streams_runtime.worker import FORWARDING_SECRET_ENV

    secret = SERVICES["stream-worker"]["environment"][FORWARDING_SECRET_ENV]
    assert secret.startswith("${" + FORWARDING_SECRET_ENV + ":?"), (
        "the secret comes from the host's environment"
    )
    args = _worker_args()[2:]
    monkeypatch.setenv(FORWARDING_SECRET_ENV, "a-secret-all-replicas-share-of-32-bytes")
    config = _instance_config(args, tmp_path, monkeypatch, token=None)
    assert config["application_server_forwarding_secret"] == "a-secret-all-replicas-share-of-32-bytes"
    monkeypatch.delenv(FORWARDING_SECRET_ENV)
    assert "application_server_forwarding_secret" not in _instance_config(
        args, tmp_path, monkeypatch, token=None
    )


# ---------------------------------------------------------------------------- shipped secrets
_REFERENCE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<word>[^}]*))?\}")


def _interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's interpolation of ``${VAR}``, ``${VAR:-default}``, ``${VAR:?error}`` (and the
    colon-less forms); ``$$`` is a literal ``$``. A missing required variable raises ValueError
    with compose's message."""

    def one(match: re.Match[str]) -> str:
        name, op, word = match["name"], match["op"] or "", match["word"] or ""
        value = env.get(name)
        missing = value is None or (op.startswith(":") and value == "")
        if op.endswith("?") and missing:
            raise ValueError(f"required variable {name} is missing a value: {word}")
        if op.endswith("-") and missing:
            return word
        return value or ""

    return "$".join(_REFERENCE.sub(one, part) for part in text.split("$$"))


def _render(node: Any, env: dict[str, str]) -> Any:
    """The compose file as compose sees it: every string value interpolated (not the comments)."""
    if isinstance(node, dict):
        return {k: _render(v, env) for k, v in node.items()}
    if isinstance(node, list):
        return [_render(v, env) for v in node]
    return _interpolate(node, env) if isinstance(node, str) else node


COMPOSE_SECRETS = (
    "STREAMS_RUNTIME_HTTP_TOKEN",
    "STREAMS_RUNTIME_FORWARDING_SECRET",
    "AIRFLOW_JWT_SECRET",
    "POSTGRES_PASSWORD",
    "GRAFANA_ADMIN_PASSWORD",
)


@pytest.mark.parametrize("missing", COMPOSE_SECRETS)
def test_compose_refuses_to_start_without_each_secret(missing: str) -> None:
    env = {name: f"{name.lower()}-from-the-operator-of-32-bytes" for name in COMPOSE_SECRETS}
    rendered = _render(COMPOSE, env)["services"]
    worker_env = rendered["stream-worker"]["environment"]
    assert worker_env["STREAMS_RUNTIME_FORWARDING_SECRET"] == env["STREAMS_RUNTIME_FORWARDING_SECRET"]
    assert worker_env["STREAMS_RUNTIME_HTTP_TOKEN"] == env["STREAMS_RUNTIME_HTTP_TOKEN"]
    airflow = rendered["airflow-apiserver"]["environment"]
    assert airflow["AIRFLOW__API_AUTH__JWT_SECRET"] == env["AIRFLOW_JWT_SECRET"]
    assert f"airflow:{env['POSTGRES_PASSWORD']}@postgres" in airflow["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert rendered["postgres"]["environment"]["POSTGRES_PASSWORD"] == env["POSTGRES_PASSWORD"]
    assert rendered["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"] == env["GRAFANA_ADMIN_PASSWORD"]
    for unset in ({k: v for k, v in env.items() if k != missing}, {**env, missing: ""}):
        with pytest.raises(ValueError, match=f"required variable {missing} is missing"):
            _render(COMPOSE, unset)


@pytest.mark.parametrize("missing", sorted(UNIT_SECRETS))
def test_systemd_unit_refuses_to_start_without_each_secret(missing: str) -> None:
    settings = dict(line.split("=", 1) for line in SYSTEMD_UNIT.read_text().splitlines() if "=" in line)
    _, _, script = shlex.split(settings["ExecStart"])
    binary = "/opt/streams-runtime/.venv/bin/streams-runtime"
    script = script.replace("%i", "2").replace("$$", "$").replace(f"exec {binary}", "echo started")
    env = {"PATH": "/usr/bin:/bin", "HTTP_PORT_BASE": "7070", **UNIT_SECRETS}
    assert subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True).stdout.startswith(
        "started"
    )
    for unset in ({k: v for k, v in env.items() if k != missing}, {**env, missing: ""}):
        run = subprocess.run(["sh", "-c", script], env=unset, capture_output=True, text=True)
        assert run.returncode != 0 and "started" not in run.stdout
        assert missing in run.stderr and "worker.env" in run.stderr


def _shipped_files() -> list[Path]:
    files = [ROOT / "docker-compose.yml", ROOT / "README.md", ROOT / "Makefile"]
    for folder in ("deploy", "docs", "scripts", "dags", "plugins", "streams_runtime"):
        files += [p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix != ".pyc"]
    return [p for p in files if p != ROOT / "streams_runtime" / "config.py"]


def test_no_file_shipped_for_deployment_holds_a_known_secret() -> None:
    from streams_runtime.config import SHIPPED_SECRETS

    for path in _shipped_files():
        text = path.read_text(errors="replace")
        for secret in SHIPPED_SECRETS:
            assert secret not in text, f"{path.relative_to(ROOT)} ships {secret!r}"


@pytest.mark.parametrize(
    ("variable", "value", "setting"),
    [
        (
            "STREAMS_RUNTIME_FORWARDING_SECRET",
            "change-me-in-production-too",
            "application_server_forwarding_secret",
        ),
        ("STREAMS_RUNTIME_FORWARDING_SECRET", "x" * 31, "application_server_forwarding_secret"),
        ("STREAMS_RUNTIME_HTTP_TOKEN", "change-me-in-production", "application_server_token"),
    ],
)
def test_worker_refuses_a_shipped_or_short_secret_naming_the_setting(
    variable: str,
    value: str,
    setting: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The former compose defaults, set by an operator who kept them, stop the worker at start."""
    from streams_runtime.worker import FORWARDING_SECRET_ENV

    monkeypatch.setenv(FORWARDING_SECRET_ENV, UNIT_SECRETS[FORWARDING_SECRET_ENV])
    token = value if variable == "STREAMS_RUNTIME_HTTP_TOKEN" else "t0k"
    if variable == FORWARDING_SECRET_ENV:
        monkeypatch.setenv(FORWARDING_SECRET_ENV, value)
    refused: list[int] = []
    _instance_config(_worker_args()[2:], tmp_path, monkeypatch, token=token, refused=refused)
    error = capsys.readouterr().err
    assert refused == [1] and setting in error and "error:" in error, error
    assert value not in error


@pytest.mark.parametrize(
    ("shell", "master"),
    [
        ({}, "spark://spark-master:7077"),
        ({"SPARK_MASTER_URL": "spark://spark.example:7078"}, "spark://spark.example:7078"),
    ],
)
def test_the_backfills_run_on_the_spark_master_compose_names(shell: dict[str, str], master: str) -> None:
    """``$SPARK_MASTER_URL`` (default the compose cluster) reaches every Airflow container as the
    ``streams_spark`` connection, which is what the backfill operator reads its master from; the
    default is the master the compose cluster runs and its worker joins."""
    import json

    env = {name: "x" for name in COMPOSE_SECRETS} | shell
    rendered = _render(COMPOSE, env)["services"]
    for name in ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"):
        conn = json.loads(rendered[name]["environment"]["AIRFLOW_CONN_STREAMS_SPARK"])
        assert conn["conn_type"] == "spark"
        assert conn["host"] == master and "port" not in conn  # SparkMasterHook's whole-URL form
        assert "SPARK_MASTER_URL" not in rendered[name]["environment"], "read by nothing: set the connection"
    if not shell:
        master_cmd = SERVICES["spark-master"]["command"]
        assert master_cmd[master_cmd.index("--host") + 1] == "spark-master"
        assert SERVICES["spark-worker"]["command"][-1] == master
    # the connector's jars are in the image, where the session looks for them
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "STREAMS_SPARK_KAFKA_JARS=/opt/spark-kafka" in dockerfile
    assert "COPY --from=spark-kafka /opt/spark-kafka /opt/spark-kafka" in dockerfile
    assert "COPY jvm/spark-kafka/pom.xml" in dockerfile


# ------------------------------------------------------------------ deploy/stack.env: one source
#: the services scripts/stack.sh runs natively too (Kafka is left out: compose's is the
#: apache/kafka image's wiring of one KRaft node, the native one the project's 3-node launcher)
NATIVE_SERVICES = (
    "postgres",
    "airflow-init",
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
    "spark-master",
    "spark-worker",
    "stream-worker",
    "prometheus",
)
#: stack.env values that may stay literal in a command: POSTGRES_USER/DB "airflow" is also the CLI's name
COMMAND_WORDS = {"airflow"}


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [str(node)]


def _without_references(text: str) -> str:
    """``text`` without its ``${...}`` references (innermost first) and ``$${...}`` ones."""
    text = re.sub(r"\$\$\{\w+\}", "", text)
    while (stripped := REFERENCE.sub("", text)) != text:
        text = stripped
    return text


def test_every_value_of_the_natively_run_services_comes_from_stack_env() -> None:
    """No value deploy/stack.env sets is written in the compose file itself for these services:
    each is a ``${NAME}`` reference to the file, so compose and scripts/stack.sh cannot drift."""
    for name in NATIVE_SERVICES:
        service = {k: v for k, v in RAW["services"][name].items() if k not in ("image", "build", "<<")}
        for field, node in service.items():
            text = _without_references(" ".join(_strings(node)))
            for key, value in STACK_ENV.items():
                if field in ("command", "entrypoint") and value in COMMAND_WORDS:
                    continue
                literal = re.search(rf"(?<![\w./-]){re.escape(value)}(?![\w./-])", text)
                assert literal is None, f"{name}.{field} writes {value!r} itself: use ${{{key}}}"
    shared = _without_references(" ".join(_strings(RAW["x-airflow-env"])))
    for key, value in STACK_ENV.items():
        assert not re.search(rf"(?<![\w./-]){re.escape(value)}(?![\w./-])", shared), (key, value)


def test_every_stack_env_value_is_used_by_compose_and_by_the_native_stack() -> None:
    compose_text = (ROOT / "docker-compose.yml").read_text()
    native = "".join(
        (ROOT / "scripts" / f).read_text() for f in ("stack.py", "spark_cluster.sh", "workers.sh")
    )
    overrides = load_stack_module().kafka_overrides(STACK_ENV)
    for key in STACK_ENV:
        assert "${" + key in compose_text, f"docker-compose.yml does not use {key}"
        if key.startswith("KAFKA_"):  # every node's server.properties, through broker start --override
            setting = key[len("KAFKA_") :].lower().replace("_", ".")
            assert overrides[setting] == STACK_ENV[key], key
        else:
            assert f'"{key}"' in native or "${" + key in native, f"scripts/stack.sh does not use {key}"


def test_the_native_stack_starts_as_many_kafka_nodes_as_compose_with_stack_env_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stack_module = load_stack_module()
    assert stack_module.KAFKA_NODES == len(KAFKA_NODES)
    stack = stack_module.Stack({"STACK_HOME": str(tmp_path), "KAFKA_MIN_INSYNC_REPLICAS": "1"})
    commands: list[list[str]] = []
    monkeypatch.setattr(stack, "run", lambda name, command, **kw: commands.append(command))
    with pytest.raises(stack_module.StackError, match="no broker recorded"):
        stack.up_kafka()
    (command,) = commands
    assert command[command.index("--nodes") + 1] == str(len(KAFKA_NODES))
    given = {arg.split("=", 1)[1] for arg in command if arg.startswith("--override=")}
    # deploy/stack.env's values, the environment's winning as in compose
    assert "min.insync.replicas=1" in given and "default.replication.factor=3" in given
    assert "auto.create.topics.enable=false" in given and len(given) == 6


def test_compose_refuses_to_start_without_stack_env() -> None:
    """Without ``--env-file deploy/stack.env`` compose stops, naming the first missing value."""
    env = {name: "x" for name in COMPOSE_SECRETS}
    with pytest.raises(ValueError, match="required variable AIRFLOW__CORE__EXECUTOR is missing"):
        _render(RAW["x-airflow-env"], env)
    with pytest.raises(ValueError, match="required variable STREAM_WORKER_REPLICAS is missing"):
        _render(RAW["services"]["stream-worker"]["deploy"], env)
    rendered = _render(COMPOSE, env)["services"]
    assert (
        rendered["airflow-scheduler"]["environment"]["AIRFLOW__CORE__PARALLELISM"]
        == (STACK_ENV["AIRFLOW__CORE__PARALLELISM"])
    )
    assert rendered["spark-worker"]["deploy"]["replicas"] == STACK_ENV["SPARK_WORKERS"]
