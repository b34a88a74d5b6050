#!/usr/bin/env python
"""docker-compose.yml's services as native processes on 127.0.0.1, with deploy/stack.env's values.

    scripts/stack.sh up       start every service (the order below); fails if one already runs
    scripts/stack.sh status   each service: pid(s), address, health; then the resident memory
    scripts/stack.sh down     stop every service, in reverse order (idempotent)

Services, in start order (each waits until the previous answers):

1. ``kafka``: a 3-node Apache Kafka (``streams-runtime broker start --kind kafka --nodes 3``,
   replication factor 3, min ISR 2), recorded in ``$STACK_HOME/broker.json``;
2. ``postgres``: Debian's PostgreSQL (``$PG_BIN``, default /usr/lib/postgresql/15/bin) run as the
   ``postgres`` user, data in ``$STACK_HOME/postgres``, on 127.0.0.1:$POSTGRES_PORT only (local
   socket in a directory only ``postgres`` reaches); role $POSTGRES_USER, database $POSTGRES_DB;
3. ``airflow-*``: ``airflow db migrate`` and the Spark pool (compose's airflow-init), then the
   api-server (127.0.0.1:$AIRFLOW_API_PORT), scheduler, dag-processor and triggerer, each a
   process of its own on that database, with the environment of
   :mod:`streams_runtime.demo.airflow_standalone` (DAGs, provider, connections) but PostgreSQL
   and this file's values; ``streams_spark`` points at the Spark master below;
4. ``spark-*``: ``scripts/spark_cluster.sh``: a master (127.0.0.1:$SPARK_MASTER_PORT, UI
   $SPARK_UI_PORT) and $SPARK_WORKERS workers;
5. the topics: the provisioning DAG run through Airflow's REST API, on the spec of
   dags/specs/topics.yaml with the cluster's replication factor (3);
6. ``stream-worker-*``: ``scripts/workers.sh``: $STREAM_WORKER_REPLICAS instances of
   $STREAM_WORKER_APP, HTTP API of instance *i* on 127.0.0.1:$STREAM_WORKER_HTTP_PORT + *i*;
7. ``prometheus``: Debian's ``prometheus`` with deploy/prometheus/prometheus.yml and its rules,
   the workers' addresses instead of compose's DNS discovery, on 127.0.0.1:$PROMETHEUS_PORT.

Settings: deploy/stack.env, each overridden by a variable of the same name in the environment.
``$STACK_HOME`` (default ``.streams-runtime/stack``) holds every log, pid file and data directory;
it must be reachable by the ``postgres`` user. ``$STACK_START_TIMEOUT`` (default 300): seconds
the Spark cluster and each stream worker get to come up. The secrets (the workers' token and forwarding
secret, Airflow's JWT secret, PostgreSQL's password) come from the environment, else are generated
once into ``$STACK_HOME/secrets.env``. Every process started carries
``STREAMS_STACK_HOME=$STACK_HOME`` in its environment: ``down`` ends with any such process left
(an Airflow task's Spark driver, say), and ``status`` sums their memory.

A service that does not come up fails ``up`` with the end of its log, after stopping what was
started. Exit codes: 0 done (status: every service healthy), 1 failed (status: some service
down or unhealthy), 2 bad usage, 3 (status) nothing runs.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streams_runtime.demo.airflow_standalone import (  # noqa: E402
    PROVISION_DAG_ID,
    AirflowClient,
    AirflowError,
    AirflowStandalone,
)
from streams_runtime.kafka.local_processes import BrokerInfo, log_tail, pid_alive, rss_bytes  # noqa: E402

STACK_ENV = ROOT / "deploy" / "stack.env"
PROMETHEUS_CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
TOPICS_SPEC = ROOT / "dags" / "specs" / "topics.yaml"
MARKER = "STREAMS_STACK_HOME"
SECRETS = (
    "STREAMS_RUNTIME_HTTP_TOKEN",
    "STREAMS_RUNTIME_FORWARDING_SECRET",
    "AIRFLOW_JWT_SECRET",
    "POSTGRES_PASSWORD",
)
AIRFLOW_COMPONENTS = ("api-server", "scheduler", "dag-processor", "triggerer")
#: the Airflow health report's name of each component (GET /api/v2/monitor/health)
HEALTH_NAMES = {"scheduler": "scheduler", "dag-processor": "dag_processor", "triggerer": "triggerer"}
KAFKA_NODES = 3
HOST = "127.0.0.1"
#: deploy/stack.env's names of broker settings start with it (apache/kafka's image convention)
KAFKA_SETTING_PREFIX = "KAFKA_"


class StackError(RuntimeError):
    """A service did not come up, or the stack cannot start as asked."""


def read_env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines (``#`` comments and blank lines skipped), as compose's --env-file."""
    values = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise StackError(f"{path}:{number}: not NAME=value: {line!r}")
        values[name.strip()] = value.strip()
    return values


def kafka_overrides(settings: dict[str, str]) -> dict[str, str]:
    """The broker settings among deploy/stack.env's values, named as server.properties names them:
    ``KAFKA_MIN_INSYNC_REPLICAS`` is ``min.insync.replicas``, as the apache/kafka image of the
    compose file reads its environment (``_`` a dot, ``__`` an underscore, ``___`` a dash)."""
    overrides = {}
    for name, value in settings.items():
        if name.startswith(KAFKA_SETTING_PREFIX):
            words = name[len(KAFKA_SETTING_PREFIX) :].lower()
            key = "-".join(
                "_".join(word.replace("_", ".") for word in part.split("__")) for part in words.split("___")
            )
            overrides[key] = value
    return overrides


_STARTED = time.monotonic()


def say(message: str) -> None:
    print(f"[stack {time.monotonic() - _STARTED:5.1f}s] {message}", flush=True)


@dataclass
class Service:
    """One line of ``status``."""

    name: str
    pids: list[int]
    address: str
    health: str  # "healthy", or what is wrong

    @property
    def running(self) -> bool:
        return any(pid_alive(p) for p in self.pids)


class Stack:
    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = dict(os.environ if environ is None else environ)
        self.home = Path(env.get("STACK_HOME") or ROOT / ".streams-runtime" / "stack").resolve()
        #: deploy/stack.env, each value overridden by the environment's
        self.settings = {k: env.get(k, v) for k, v in read_env_file(STACK_ENV).items()}
        self.pg_bin = Path(env.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
        self.python = Path(sys.executable)
        self.cli = self.python.parent / "streams-runtime"
        self.logs = self.home / "logs"
        self.pids = self.home / "pids"
        #: seconds the Spark cluster and each stream worker get to come up (spark_cluster.sh's and
        #: workers.sh's START_TIMEOUT); their own defaults, 90 s and 120 s, are short on a loaded
        #: machine that starts everything else at the same time
        self.start_timeout = env.get("STACK_START_TIMEOUT", "300")

    # -- settings ------------------------------------------------------------------------------
    def port(self, name: str) -> int:
        value = self.settings[name]
        if not value.isdigit():
            raise StackError(f"{name}={value!r} (deploy/stack.env or the environment): not a port number")
        return int(value)

    def count(self, name: str) -> int:
        value = self.settings[name]
        if not value.isdigit() or int(value) < 1:
            raise StackError(f"{name}={value!r} (deploy/stack.env or the environment): not a count >= 1")
        return int(value)

    def worker_ports(self) -> list[int]:
        base = self.port("STREAM_WORKER_HTTP_PORT")
        return [base + i for i in range(1, self.count("STREAM_WORKER_REPLICAS") + 1)]

    def secrets(self) -> dict[str, str]:
        """The secrets: the environment's, else the ones generated into secrets.env (once)."""
        path = self.home / "secrets.env"
        stored = read_env_file(path) if path.exists() else {}
        values = {name: os.environ.get(name) or stored.get(name) or secrets.token_hex(32) for name in SECRETS}
        if values != stored:
            self.home.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        return values

    def environ(self, **extra: str) -> dict[str, str]:
        """The environment of every process the stack starts."""
        env = dict(os.environ)
        env.update(self.settings)
        env.update(self.secrets())
        env.update({"STREAMS_RUNTIME_HOME": str(self.home), MARKER: str(self.home), "PYTHONUNBUFFERED": "1"})
        env["PATH"] = f"{self.python.parent}{os.pathsep}{env.get('PATH', '')}"
        env.update(extra)
        return env

    # -- small helpers -------------------------------------------------------------------------
    def run(
        self, name: str, command: list[str], env: dict[str, str] | None = None, timeout: float = 300
    ) -> str:
        """Run to completion, output appended to logs/<name>.log; a failure raises with its tail."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{name}.log"
        with open(log, "ab") as out:
            try:
                done = subprocess.run(
                    command, stdout=out, stderr=subprocess.STDOUT, env=env or self.environ(), timeout=timeout
                )
            except subprocess.TimeoutExpired:
                raise StackError(
                    f"{name}: {command[0]} did not finish in {timeout:.0f}s; {self.tail(log)}"
                ) from None
        if done.returncode != 0:
            raise StackError(f"{name}: {' '.join(command[:3])} exited {done.returncode}; {self.tail(log)}")
        return log.read_text(errors="replace")

    def tail(self, log: Path, lines: int = 25) -> str:
        return f"the end of {log}:\n{log_tail(log, lines)}"

    def spawn(self, name: str, command: list[str], env: dict[str, str]) -> int:
        """Start in the background, in a session of its own; pid in pids/<name>.pid."""
        self.logs.mkdir(parents=True, exist_ok=True)
        self.pids.mkdir(parents=True, exist_ok=True)
        with open(self.logs / f"{name}.log", "ab") as out:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=str(self.home),
                start_new_session=True,
            )
        (self.pids / f"{name}.pid").write_text(str(process.pid))
        return process.pid

    def pid(self, name: str) -> int | None:
        try:
            return int((self.pids / f"{name}.pid").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def wait(
        self, what: str, ready: Callable[[], bool], alive: Callable[[], bool], log: Path, timeout: float
    ) -> None:
        """Until ``ready()``; fail with the log's tail once ``alive()`` is false or at the timeout."""
        deadline = time.monotonic() + timeout
        while not ready():
            if not alive():
                raise StackError(f"{what} exited while starting; {self.tail(log)}")
            if time.monotonic() > deadline:
                raise StackError(f"{what} not ready after {timeout:.0f}s; {self.tail(log)}")
            time.sleep(0.5)

    def as_postgres(self, *command: str | Path) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *map(str, command)]

    # -- up ------------------------------------------------------------------------------------
    def up(self) -> None:
        running = [s.name for s in self.services() if s.running]
        if running:
            raise StackError(f"already running: {', '.join(running)}; stop it first (scripts/stack.sh down)")
        leftovers = marked_processes(self.home)
        if leftovers:
            raise StackError(
                f"processes of this stack still run (pids {leftovers}); scripts/stack.sh down first"
            )
        self.check_ports()
        started = time.monotonic()
        self.home.mkdir(parents=True, exist_ok=True)
        try:
            bootstrap = self.up_kafka()
            self.up_postgres()
            client = self.up_airflow(bootstrap)
            self.up_spark()
            self.provision(client)
            self.up_workers(bootstrap)
            self.up_prometheus()
        except (StackError, AirflowError, OSError) as exc:
            print(f"[stack] error: {exc}", file=sys.stderr, flush=True)
            say("stopping what was started")
            self.down()
            raise SystemExit(1) from None
        mib = sum(rss_bytes(p) or 0 for p in marked_processes(self.home)) / 2**20
        say(f"up in {time.monotonic() - started:.0f}s; resident memory {mib:.0f} MiB; logs in {self.logs}")
        say(f"Airflow {self.airflow_url()} (admin / {self.airflow_password()})")

    def check_ports(self) -> None:
        fixed = {
            name: self.port(name)
            for name in (
                "POSTGRES_PORT",
                "AIRFLOW_API_PORT",
                "SPARK_MASTER_PORT",
                "SPARK_UI_PORT",
                "PROMETHEUS_PORT",
            )
        }
        fixed.update({f"STREAM_WORKER_HTTP_PORT + {i}": p for i, p in enumerate(self.worker_ports(), 1)})
        for name, port in fixed.items():
            with socket.socket() as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind((HOST, port))
                except OSError:
                    raise StackError(
                        f"port {port} ({name}) is taken on {HOST}; set {name.split()[0]} to another"
                    ) from None

    def up_kafka(self) -> str:
        say(f"kafka: starting {KAFKA_NODES} nodes")
        overrides = [f"--override={key}={value}" for key, value in kafka_overrides(self.settings).items()]
        self.run(
            "kafka-start",
            [str(self.cli), "broker", "start", "--kind", "kafka", "--nodes", str(KAFKA_NODES), *overrides],
        )
        info = BrokerInfo.read(self.home / "broker.json")
        if info is None:
            raise StackError(f"kafka: no broker recorded in {self.home / 'broker.json'}")
        say(f"kafka: {info.bootstrap_servers} (pids {info.all_pids})")
        return info.bootstrap_servers

    def postgres_data(self) -> Path:
        return self.home / "postgres"

    def up_postgres(self) -> None:
        data, sockets, port = self.postgres_data(), self.home / "postgres-socket", self.port("POSTGRES_PORT")
        user, db = self.settings["POSTGRES_USER"], self.settings["POSTGRES_DB"]
        if not (self.pg_bin / "initdb").exists():
            raise StackError(f"no PostgreSQL under {self.pg_bin} (make system-deps, or set PG_BIN)")
        postgres = pwd.getpwnam("postgres")
        for directory in (data, sockets):
            directory.mkdir(mode=0o700, exist_ok=True)
            os.chown(directory, postgres.pw_uid, postgres.pw_gid)
        log = self.logs / "postgres.log"
        if not (data / "PG_VERSION").exists():
            say("postgres: initdb")
            self.run(
                "postgres-init",
                self.as_postgres(
                    self.pg_bin / "initdb",
                    "-D",
                    data,
                    "-U",
                    "postgres",
                    "--auth-local=peer",
                    "--auth-host=scram-sha-256",
                ),
            )
        options = f"-c listen_addresses={HOST} -p {port} -k {sockets}"
        self.logs.mkdir(parents=True, exist_ok=True)
        log.touch()
        os.chown(log, postgres.pw_uid, postgres.pw_gid)
        self.run(
            "postgres-ctl",
            self.as_postgres(
                self.pg_bin / "pg_ctl", "-D", data, "-l", log, "-o", options, "-w", "-t", "60", "start"
            ),
        )
        password = self.secrets()["POSTGRES_PASSWORD"]
        psql = self.as_postgres(
            self.pg_bin / "psql",
            "-h",
            sockets,
            "-p",
            port,
            "-U",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-qAt",
            "-d",
            "postgres",
            "-c",
        )
        # the role and the database (idempotent); the password is set again on each start
        self.run(
            "postgres-init",
            [
                *psql,
                (
                    f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{user}') THEN "
                    f'CREATE ROLE "{user}" LOGIN; END IF; END $$; '
                    f"ALTER ROLE \"{user}\" PASSWORD '{password}'"
                ),
            ],
        )
        exists = self.run("postgres-query", [*psql, f"SELECT 1 FROM pg_database WHERE datname = '{db}'"])
        if not exists.rstrip().endswith("1"):
            self.run("postgres-init", [*psql, f'CREATE DATABASE "{db}" OWNER "{user}"'])
        (self.logs / "postgres-query.log").unlink(missing_ok=True)
        say(f"postgres: {HOST}:{port} (database {db}, role {user}, data {data})")

    def airflow(self, bootstrap: str = "") -> AirflowStandalone:
        """The demo's Airflow settings (DAGs, provider, connections, API on loopback), on
        PostgreSQL with this file's values: what each component runs with."""
        s, sec = self.settings, self.secrets()
        conn = (
            f"postgresql+psycopg2://{s['POSTGRES_USER']}:{sec['POSTGRES_PASSWORD']}"
            f"@{HOST}:{s['POSTGRES_PORT']}/{s['POSTGRES_DB']}"
        )
        spark = {"conn_type": "spark", "host": f"spark://{HOST}:{self.port('SPARK_MASTER_PORT')}"}
        return AirflowStandalone(
            bootstrap,
            home=self.home / "airflow",
            port=self.port("AIRFLOW_API_PORT"),
            parallelism=self.count("AIRFLOW__CORE__PARALLELISM"),
            worker_url=f"http://{HOST}:{self.worker_ports()[0]}",
            worker_token=sec["STREAMS_RUNTIME_HTTP_TOKEN"],
            extra_env={
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": conn,
                "AIRFLOW__CORE__EXECUTOR": s["AIRFLOW__CORE__EXECUTOR"],
                "AIRFLOW__CORE__LOAD_EXAMPLES": s["AIRFLOW__CORE__LOAD_EXAMPLES"],
                "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": s["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"],
                "AIRFLOW__API_AUTH__JWT_SECRET": sec["AIRFLOW_JWT_SECRET"],
                "AIRFLOW_CONN_STREAMS_SPARK": json.dumps(spark),
                "BOOTSTRAP_SERVERS": bootstrap,
                "STREAMS_RUNTIME_HOME": str(self.home),
                MARKER: str(self.home),
            },
        )

    def airflow_url(self) -> str:
        return f"http://{HOST}:{self.port('AIRFLOW_API_PORT')}"

    def airflow_password(self) -> str:
        try:
            return self.airflow().password()
        except (OSError, ValueError, KeyError):
            return "(not generated yet)"

    def up_airflow(self, bootstrap: str) -> AirflowClient:
        airflow = self.airflow(bootstrap)
        airflow.home.mkdir(parents=True, exist_ok=True)
        env = airflow.environ()
        cli = str(self.python.parent / "airflow")
        say("airflow: db migrate, pool")
        self.run("airflow-init", [cli, "db", "migrate"], env=env, timeout=600)
        pool, slots = self.settings["AIRFLOW_SPARK_POOL"], self.settings["AIRFLOW_SPARK_POOL_SLOTS"]
        self.run(
            "airflow-init",
            [cli, "pools", "set", pool, slots, "Spark jobs: backfills, state recomputes"],
            env=env,
        )
        for component in AIRFLOW_COMPONENTS:
            extra = ["--port", str(airflow.port)] if component == "api-server" else []
            self.spawn(f"airflow-{component}", [cli, component, *extra], env)
        client: list[AirflowClient] = []

        def ready() -> bool:
            if not client and airflow.password_file.exists():
                probe = AirflowClient(airflow.url, airflow.username, airflow.password(), timeout=5)
                if probe.api_answers():
                    client.append(probe)
            if not client:
                return False
            health = client[0].health()
            return all(health.get(n, {}).get("status") == "healthy" for n in HEALTH_NAMES.values())

        def alive() -> bool:
            dead = [c for c in AIRFLOW_COMPONENTS if not pid_alive(self.pid(f"airflow-{c}") or 0)]
            if dead:
                failed.append(dead[0])
            return not dead

        failed: list[str] = []
        try:
            self.wait("airflow", ready, alive, self.logs / "airflow-api-server.log", timeout=300)
        except StackError as exc:
            if failed:  # the log of the component that exited
                raise StackError(
                    f"airflow {failed[0]} exited while starting; "
                    f"{self.tail(self.logs / f'airflow-{failed[0]}.log')}"
                ) from None
            raise exc
        client[0].timeout = 30.0
        say(f"airflow: {airflow.url} ({', '.join(AIRFLOW_COMPONENTS)} healthy)")
        return client[0]

    def spark_env(self) -> dict[str, str]:
        return self.environ(
            SPARK_CLUSTER_DIR=str(self.home / "spark"),
            SPARK_MASTER_WEBUI_PORT=str(self.port("SPARK_UI_PORT")),
            PYTHON=str(self.python),
            START_TIMEOUT=self.start_timeout,
        )

    def up_spark(self) -> None:
        say("spark: starting the master and workers")
        out = self.run(
            "spark-start",
            ["bash", str(ROOT / "scripts" / "spark_cluster.sh"), "start"],
            env=self.spark_env(),
            timeout=int(self.start_timeout) + 120,
        )
        say("spark: " + out.strip().splitlines()[-1].removeprefix("[spark-cluster] "))

    def topics_spec(self) -> Path:
        """dags/specs/topics.yaml with the cluster's replication factor (3 nodes, min ISR 2)."""
        spec = yaml.safe_load(TOPICS_SPEC.read_text())
        spec.setdefault("defaults", {})["replication_factor"] = KAFKA_NODES
        path = self.home / "topics.yaml"
        path.write_text(
            "# dags/specs/topics.yaml with the stack's replication factor\n" + yaml.safe_dump(spec)
        )
        return path

    def provision(self, client: AirflowClient) -> None:
        say(f"topics: running {PROVISION_DAG_ID} through Airflow's REST API")
        run_id, state = client.run_dag(
            PROVISION_DAG_ID, conf={"spec_file": str(self.topics_spec())}, timeout=300
        )
        if state != "success":
            tasks = client.task_states(PROVISION_DAG_ID, run_id)
            raise StackError(
                f"{PROVISION_DAG_ID} run {run_id} finished {state} ({tasks}); task logs under "
                f"{self.home / 'airflow' / 'logs'}"
            )
        say(f"topics: {PROVISION_DAG_ID} run {run_id} success")

    def workers_env(self, bootstrap: str = "") -> dict[str, str]:
        s = self.settings
        return self.environ(
            APP=s["STREAM_WORKER_APP"],
            THREADS=s["STREAM_WORKER_THREADS"],
            HTTP_PORT=s["STREAM_WORKER_HTTP_PORT"],
            BOOTSTRAP_SERVERS=bootstrap,
            CLI=str(self.cli),
            START_TIMEOUT=self.start_timeout,
        )

    def up_workers(self, bootstrap: str) -> None:
        n = self.count("STREAM_WORKER_REPLICAS")
        say(f"stream workers: starting {n}")
        self.run(
            "workers-start",
            ["bash", str(ROOT / "scripts" / "workers.sh"), "start", str(n)],
            env=self.workers_env(bootstrap),
            timeout=(int(self.start_timeout) + 60) * self.count("STREAM_WORKER_REPLICAS"),
        )
        say(f"stream workers: {', '.join(f'http://{HOST}:{p}' for p in self.worker_ports())} running")

    def prometheus_config(self) -> Path:
        """deploy/prometheus/prometheus.yml with the workers' addresses instead of compose's DNS
        discovery, and the paths of this machine; every other setting as in the file."""
        config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
        home = self.home / "prometheus"
        home.mkdir(parents=True, exist_ok=True)
        token = home / "token"
        token.touch(mode=0o600)
        token.write_text(self.secrets()["STREAMS_RUNTIME_HTTP_TOKEN"])
        rules = ROOT / "deploy" / "prometheus" / "rules"
        config["rule_files"] = [str(rules / Path(f).name) for f in config.get("rule_files", [])]
        for job in config["scrape_configs"]:
            if job.pop("dns_sd_configs", None) is not None:
                job["static_configs"] = [{"targets": [f"{HOST}:{p}" for p in self.worker_ports()]}]
            if "authorization" in job:
                job["authorization"]["credentials_file"] = str(token)
        path = home / "prometheus.yml"
        path.write_text(
            "# deploy/prometheus/prometheus.yml on this machine (scripts/stack.py)\n"
            + yaml.safe_dump(config, sort_keys=False)
        )
        return path

    def up_prometheus(self) -> None:
        binary = os.environ.get("PROMETHEUS_BIN", "prometheus")
        port = self.port("PROMETHEUS_PORT")
        command = [
            binary,
            f"--config.file={self.prometheus_config()}",
            f"--storage.tsdb.path={self.home / 'prometheus' / 'data'}",
            f"--web.listen-address={HOST}:{port}",
        ]
        pid = self.spawn("prometheus", command, self.environ())
        self.wait(
            "prometheus",
            lambda: http_status(f"http://{HOST}:{port}/-/ready") == 200,
            lambda: pid_alive(pid),
            self.logs / "prometheus.log",
            timeout=60,
        )
        say(f"prometheus: http://{HOST}:{port}")

    # -- status --------------------------------------------------------------------------------
    def services(self) -> Iterator[Service]:
        info = BrokerInfo.read(self.home / "broker.json")
        if info is not None:
            alive = all(pid_alive(p) for p in info.all_pids)
            yield Service(
                "kafka",
                info.all_pids,
                info.bootstrap_servers,
                "healthy" if alive and tcp_open(info.bootstrap_servers) else "not answering",
            )
        else:
            yield Service("kafka", [], "-", "stopped")
        port = self.settings.get("POSTGRES_PORT", "?")
        pg = postmaster_pid(self.postgres_data())
        ok = (
            pg
            and subprocess.run(
                [str(self.pg_bin / "pg_isready"), "-q", "-h", HOST, "-p", port], check=False
            ).returncode
            == 0
        )
        yield Service(
            "postgres",
            [pg] if pg else [],
            f"{HOST}:{port}",
            "healthy" if ok else ("not answering" if pg else "stopped"),
        )
        url = self.airflow_url()
        airflow_pids = [self.pid(f"airflow-{c}") for c in AIRFLOW_COMPONENTS]
        any_alive = any(pid_alive(p) for p in airflow_pids if p)
        health = (json_get(f"{url}/api/v2/monitor/health") if any_alive else None) or {}
        for component in AIRFLOW_COMPONENTS:
            pid = self.pid(f"airflow-{component}")
            if component == "api-server":
                state = "healthy" if health else "not answering"
            else:
                state = health.get(HEALTH_NAMES[component], {}).get("status") or "unknown"
            alive = bool(pid and pid_alive(pid))
            yield Service(
                f"airflow-{component}",
                [pid] if alive and pid else [],
                url if component == "api-server" else "-",
                state if alive else "stopped",
            )
        spark_dir = self.home / "spark"
        ui = f"http://{HOST}:{self.settings.get('SPARK_UI_PORT')}"
        master_pid = read_pid(spark_dir / "master.pid")
        master = (json_get(f"{ui}/json/") if master_pid and pid_alive(master_pid) else None) or {}
        alive_workers = sum(w.get("state") == "ALIVE" for w in master.get("workers", []))
        names = [
            "master",
            *(f"worker-{i}" for i in range(1, int(self.settings.get("SPARK_WORKERS", "0")) + 1)),
        ]
        for name in names:
            pid = read_pid(spark_dir / f"{name}.pid")
            alive = bool(pid and pid_alive(pid))
            if name == "master":
                address = f"spark://{HOST}:{self.settings.get('SPARK_MASTER_PORT')} (UI {ui})"
                state = "healthy" if master.get("status") == "ALIVE" else "not answering"
            else:
                address = "-"
                state = f"{alive_workers} of {len(names) - 1} workers ALIVE at the master"
                state = "healthy" if alive_workers == len(names) - 1 else state
            yield Service(
                f"spark-{name}", [pid] if alive and pid else [], address, state if alive else "stopped"
            )
        for i, port_i in enumerate(self.worker_ports(), 1):
            pid = read_pid(self.home / "workers" / f"{i}.pid")
            alive = bool(pid and pid_alive(pid))
            code = http_status(f"http://{HOST}:{port_i}/health/ready") if alive else None
            state = "healthy" if code == 200 else f"/health/ready: {code or 'no answer'}"
            yield Service(
                f"stream-worker-{i}",
                [pid] if alive and pid else [],
                f"http://{HOST}:{port_i}",
                state if alive else "stopped",
            )
        pid = self.pid("prometheus")
        alive = bool(pid and pid_alive(pid))
        prom = f"http://{HOST}:{self.settings.get('PROMETHEUS_PORT')}"
        state = "healthy" if alive and http_status(f"{prom}/-/ready") == 200 else "not answering"
        yield Service("prometheus", [pid] if alive and pid else [], prom, state if alive else "stopped")

    def status(self) -> int:
        services = list(self.services())
        for s in services:
            pids = ",".join(map(str, s.pids)) or "-"
            print(f"{s.name:<24} pid {pids:<20} {s.address:<48} {s.health}")
        marked = marked_processes(self.home)
        mib = sum(rss_bytes(p) or 0 for p in marked) / 2**20
        print(f"{len(marked)} processes, resident memory {mib:.0f} MiB (home {self.home})")
        if not any(s.running for s in services) and not marked:
            return 3
        return 0 if all(s.health == "healthy" for s in services) else 1

    # -- down ----------------------------------------------------------------------------------
    def down(self) -> None:
        """Every service in reverse order of ``up``; what does not run is skipped."""
        self.stop_pidfiles(["prometheus"])
        if (self.home / "workers").exists():
            self.run(
                "workers-stop",
                ["bash", str(ROOT / "scripts" / "workers.sh"), "stop"],
                env=self.workers_env(),
                timeout=180,
            )
            say("stream workers: stopped")
        if (self.home / "spark").exists():
            self.run(
                "spark-stop",
                ["bash", str(ROOT / "scripts" / "spark_cluster.sh"), "stop"],
                env=self.spark_env(),
                timeout=120,
            )
            say("spark: stopped")
        self.stop_pidfiles([f"airflow-{c}" for c in AIRFLOW_COMPONENTS])
        data = self.postgres_data()
        if postmaster_pid(data):
            self.run(
                "postgres-ctl",
                self.as_postgres(self.pg_bin / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop"),
            )
            say("postgres: stopped")
        if (self.home / "broker.json").exists():
            self.run("kafka-stop", [str(self.cli), "broker", "stop"], env=self.environ(), timeout=120)
            say("kafka: stopped")
        left = marked_processes(self.home)
        if left:  # e.g. an Airflow task's process group, or the Spark driver it started
            say(f"ending {len(left)} process(es) left over: {left}")
            for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
                for pid in left:
                    signal_pid(pid, sig)
                deadline = time.monotonic() + wait_s
                while (left := [p for p in left if pid_alive(p)]) and time.monotonic() < deadline:
                    time.sleep(0.2)
                if not left:
                    break
        say("down")

    def stop_pidfiles(self, names: list[str], timeout: float = 30.0) -> None:
        """SIGTERM to the process group of each pids/<name>.pid at once (each service's own clean
        shutdown), SIGKILL to those left after ``timeout``; the pid files removed."""
        groups = {name: pid for name in names if (pid := self.pid(name)) is not None and pid_alive(pid)}
        for sig, wait_s in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            for pid in groups.values():
                try:
                    os.killpg(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait_s
            while any(group_alive(p) for p in groups.values()) and time.monotonic() < deadline:
                time.sleep(0.2)
            if not any(group_alive(p) for p in groups.values()):
                break
        for name in names:
            if name in groups:
                say(f"{name}: stopped (pid {groups[name]})")
            (self.pids / f"{name}.pid").unlink(missing_ok=True)


# -- process and HTTP helpers ----------------------------------------------------------------------
def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return None


def postmaster_pid(data: Path) -> int | None:
    pid = read_pid(data / "postmaster.pid")
    return pid if pid and pid_alive(pid) else None


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def marked_processes(home: Path) -> list[int]:
    """Live processes whose environment carries ``STREAMS_STACK_HOME=<home>`` (Linux /proc)."""
    wanted, found = f"{MARKER}={home}".encode(), []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if wanted in (proc / "environ").read_bytes().split(b"\0") and pid_alive(int(proc.name)):
                found.append(int(proc.name))
        except (OSError, ValueError):
            continue
    return sorted(found)


def http_status(url: str, timeout: float = 3.0) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (OSError, ValueError):
        return None


def json_get(url: str, timeout: float = 3.0) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = json.load(response)
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def tcp_open(servers: str) -> bool:
    """True when every ``host:port`` of a bootstrap list accepts a connection."""
    for server in servers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                pass
        except (OSError, ValueError):
            return False
    return True


USAGE = "usage: scripts/stack.sh up|down|status"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("up", "down", "status"):
        print(f"{USAGE} (got {' '.join(argv) or 'nothing'})", file=sys.stderr)
        return 2
    try:
        stack = Stack()
        if argv[0] == "up":
            stack.up()
        elif argv[0] == "down":
            stack.down()
        else:
            return stack.status()
    except StackError as exc:
        print(f"[stack] error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
