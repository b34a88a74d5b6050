"""``airflow standalone`` next to the embedded platform, and a small client for Airflow's REST API.

Airflow is never imported here (the project's fence: ``airflow`` only in dags/ and plugins/): it
runs as a subprocess, and everything else talks HTTP to the public API v2 the UI uses, with the
standard library only.

:class:`AirflowStandalone` starts ``airflow standalone`` (api-server, scheduler, dag-processor,
triggerer; LocalExecutor on SQLite) in its own process group with:

- ``AIRFLOW_HOME`` = ``$STREAMS_RUNTIME_HOME/airflow`` (or the given home), log to
  ``$STREAMS_RUNTIME_HOME/logs/airflow.log``;
- the API server bound to 127.0.0.1 on a free (or the given) port, the execution-API URL
  matching it, one API worker, ``AIRFLOW__CORE__PARALLELISM`` low (4), no example DAGs; the
  scheduler's and triggerer's log servers on free ports (Airflow binds those to all interfaces);
- DAGs from ``<repo>/dags``; the operators, hooks and sensors come from the installed provider
  ``streams_ops`` (no plugins folder);
- the ``streams_kafka`` connection (``AIRFLOW_CONN_STREAMS_KAFKA``, the Kafka provider's ``kafka``
  type) pointing at the broker and, given ``worker_url``, the ``streams_worker`` connection
  (``AIRFLOW_CONN_STREAMS_WORKER``, with the workers' token as its password) pointing at a
  worker's HTTP API, the default of the state-rebuild DAG's *workers*; once ready,
  :meth:`AirflowClient.ensure_pool` creates the ``streams_spark`` pool the Spark tasks run in.

The login is ``admin`` with the password ``airflow standalone`` generates into
``$AIRFLOW_HOME/simple_auth_manager_passwords.json.generated`` (kept across runs).
:meth:`AirflowStandalone.stop` sends SIGTERM to the process group (every component at once: each
one's own clean shutdown, a few seconds), then SIGKILL. SIGINT is not used: ``airflow standalone``
forwards it to its components one after another and waits for each, most of a minute.

:class:`AirflowClient`: ``POST /auth/token`` for a JWT, then ``/api/v2/...`` (unpause, trigger a
DAG run with a conf, wait for its final state, list its task instances).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streams_runtime.brokers import free_port, runtime_home

log = logging.getLogger("streams_runtime.demo")

REPO = Path(__file__).resolve().parents[2]
PROVISION_DAG_ID = "streams_provision_topics"
BACKFILL_DAG_ID = "streams_spark_backfill"
SPARK_POOL = "streams_spark"
SPARK_POOL_SLOTS = 2
FINISHED_STATES = {"success", "failed"}
PASSWORD_FILE = "simple_auth_manager_passwords.json.generated"


def worker_connection(url: str, token: str | None = None) -> dict[str, Any]:
    """The ``streams_worker`` connection (the provider's type) of the worker HTTP API at ``url``."""
    parsed = urllib.parse.urlparse(url if "://" in url else f"http://{url}")
    conn: dict[str, Any] = {
        "conn_type": "streams_worker",
        "host": parsed.hostname,
        "port": parsed.port,
        "schema": parsed.scheme,
    }
    if token:
        conn["password"] = token
    return conn


class AirflowError(RuntimeError):
    """Airflow did not start, did not answer, or refused a request."""


class AirflowClient:
    """The public REST API v2 (what the UI uses), authenticated with a JWT from ``/auth/token``."""

    def __init__(self, url: str, username: str, password: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.username = username
        self.password = password
        self.timeout = timeout
        self._token: str | None = None

    # -- plumbing ---------------------------------------------------------------------------
    def _raw(self, method: str, path: str, body: object = None, token: str | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text

    def token(self, refresh: bool = False) -> str:
        """A JWT for the login (``POST /auth/token``)."""
        if self._token is None or refresh:
            status, body = self._raw(
                "POST", "/auth/token", {"username": self.username, "password": self.password}
            )
            if status not in (200, 201) or not isinstance(body, dict) or "access_token" not in body:
                raise AirflowError(f"login as {self.username!r} at {self.url} failed: HTTP {status} {body}")
            self._token = str(body["access_token"])
        return self._token

    def request(self, method: str, path: str, body: object = None, *, ok: tuple[int, ...] = (200,)) -> Any:
        status, answer = self._raw(method, path, body, self.token())
        if status == 401:  # expired token: log in again once
            status, answer = self._raw(method, path, body, self.token(refresh=True))
        if status not in ok:
            raise AirflowError(f"{method} {path}: HTTP {status} {answer}")
        return answer

    # -- readiness --------------------------------------------------------------------------
    def api_answers(self) -> bool:
        try:
            status, _ = self._raw("GET", "/api/v2/monitor/health")
        except OSError:
            return False
        return status == 200

    def health(self) -> dict[str, Any]:
        status, body = self._raw("GET", "/api/v2/monitor/health")
        return body if status == 200 and isinstance(body, dict) else {}

    def wait_for_dag(self, dag_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Wait until the dag-processor has parsed *dag_id* (it is known to the API)."""
        deadline = time.monotonic() + timeout
        while True:
            status, body = self._raw("GET", f"/api/v2/dags/{dag_id}", token=self.token())
            if status == 200:
                dag: dict[str, Any] = body
                return dag
            if time.monotonic() > deadline:
                errors = self._raw("GET", "/api/v2/importErrors", token=self.token())[1]
                raise AirflowError(
                    f"DAG {dag_id} not parsed after {timeout:.0f}s (HTTP {status}); import errors: {errors}"
                )
            time.sleep(1.0)

    def ensure_pool(self, name: str = SPARK_POOL, slots: int = SPARK_POOL_SLOTS) -> None:
        """Create the pool if it is missing (the Spark tasks of the DAGs run in ``streams_spark``)."""
        status, _ = self._raw("GET", f"/api/v2/pools/{name}", token=self.token())
        if status == 404:
            body = {"name": name, "slots": slots, "description": "Spark sessions of the streams DAGs"}
            self.request("POST", "/api/v2/pools", body, ok=(200, 201, 409))

    # -- DAG runs ---------------------------------------------------------------------------
    def unpause(self, dag_id: str) -> None:
        self.request("PATCH", f"/api/v2/dags/{dag_id}?update_mask=is_paused", {"is_paused": False})

    def trigger(self, dag_id: str, conf: dict[str, Any] | None = None, run_id: str | None = None) -> str:
        """Trigger a manual run with *conf* (the DAG's Params); return its run id."""
        body: dict[str, Any] = {"logical_date": None, "conf": conf or {}}
        if run_id:
            body["dag_run_id"] = run_id
        answer = self.request("POST", f"/api/v2/dags/{dag_id}/dagRuns", body, ok=(200, 201))
        return str(answer["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str:
        quoted = urllib.parse.quote(run_id, safe="")
        return str(self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{quoted}")["state"])

    def wait_for_run(
        self,
        dag_id: str,
        run_id: str,
        timeout: float = 300.0,
        on_change: Callable[[str], object] | None = None,
    ) -> str:
        """Poll until the run is success or failed (or *timeout*: returns the last state); a poll
        the API server does not answer in time is asked again until then."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                state = self.run_state(dag_id, run_id)
            except (TimeoutError, urllib.error.URLError) as exc:  # a busy API server answers late
                if not isinstance(getattr(exc, "reason", exc), TimeoutError):
                    raise
                if time.monotonic() > deadline:
                    raise
                log.info("Airflow did not answer the run's state within %.0fs; asking again", self.timeout)
                continue
            if state != last and on_change is not None:
                on_change(state)
            last = state
            if state in FINISHED_STATES or time.monotonic() > deadline:
                return state
            time.sleep(1.0)

    def task_states(self, dag_id: str, run_id: str) -> dict[str, str]:
        quoted = urllib.parse.quote(run_id, safe="")
        answer = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{quoted}/taskInstances")
        states = {}
        for ti in answer.get("task_instances", []):
            key = ti["task_id"] if ti.get("map_index", -1) < 0 else f"{ti['task_id']}[{ti['map_index']}]"
            states[key] = str(ti.get("state"))
        return states

    def run_dag(
        self,
        dag_id: str,
        conf: dict[str, Any] | None = None,
        timeout: float = 300.0,
        on_change: Callable[[str], object] | None = None,
    ) -> tuple[str, str]:
        """Unpause, trigger and wait: ``(run_id, final state)``."""
        self.wait_for_dag(dag_id)
        self.unpause(dag_id)
        run_id = self.trigger(dag_id, conf)
        return run_id, self.wait_for_run(dag_id, run_id, timeout, on_change)


class AirflowStandalone:
    """``airflow standalone`` as a managed subprocess (see the module docstring)."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        home: Path | str | None = None,
        port: int | None = None,
        log_file: Path | str | None = None,
        parallelism: int = 4,
        dags_folder: Path | str = REPO / "dags",
        extra_env: dict[str, str] | None = None,
        worker_url: str | None = None,
        worker_token: str | None = None,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        #: the ``streams_worker`` connection: a worker's HTTP API and the workers' token
        self.worker_url = worker_url
        self.worker_token = worker_token
        self.home = Path(home) if home else runtime_home() / "airflow"
        self.port = port or free_port()
        self.log_file = Path(log_file) if log_file else runtime_home() / "logs" / "airflow.log"
        self.parallelism = parallelism
        self.dags_folder = Path(dags_folder)
        self.extra_env = dict(extra_env or {})
        self.process: subprocess.Popen[bytes] | None = None
        #: time.monotonic() of the last start()
        self.started_at: float | None = None
        self.username = "admin"
        self.log_ports = (free_port(), free_port())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def password_file(self) -> Path:
        return self.home / PASSWORD_FILE

    def environ(self) -> dict[str, str]:
        """The environment of the ``airflow standalone`` process (and so of its components)."""
        env = dict(os.environ)
        bin_dir = str(Path(sys.executable).parent)  # standalone runs its components as `airflow ...`
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
        conn = {"conn_type": "kafka", "extra": {"bootstrap.servers": self.bootstrap_servers}}
        env.update(
            {
                "AIRFLOW_HOME": str(self.home),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                # SQLite (standalone's database): its writers, the scheduler, the API server, task
                # processes and CLI calls such as `airflow backfill create`, wait up to 60 s for
                # the database lock instead of Python's 5 s default (on a busy machine that CLI
                # call once failed with an sqlite OperationalError while the scheduler wrote)
                "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{self.home.resolve()}/airflow.db?timeout=60",
                "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags_folder),
                "AIRFLOW__CORE__PARALLELISM": str(self.parallelism),
                "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
                "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
                "AIRFLOW__API__HOST": "127.0.0.1",
                "AIRFLOW__API__PORT": str(self.port),
                "AIRFLOW__API__BASE_URL": self.url,
                "AIRFLOW__API__WORKERS": "1",
                "AIRFLOW__API_AUTH__JWT_SECRET": (
                    env.get("AIRFLOW__API_AUTH__JWT_SECRET") or secrets.token_hex(32)
                ),
                "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "30",
                "AIRFLOW__SCHEDULER__ENABLE_HEALTH_CHECK": "False",
                # the scheduler's and triggerer's log servers (Airflow binds them to all interfaces;
                # free ports so a second standalone, e.g. a test next to the demo, does not collide)
                "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(self.log_ports[0]),
                "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(self.log_ports[1]),
                "AIRFLOW_CONN_STREAMS_KAFKA": json.dumps(conn),
                "STREAMS_RUNTIME_HOME": str(runtime_home()),
                "PYTHONUNBUFFERED": "1",
            }
        )
        if self.worker_url:
            worker = worker_connection(self.worker_url, self.worker_token)
            env["AIRFLOW_CONN_STREAMS_WORKER"] = json.dumps(worker)
        env.update(self.extra_env)
        return env

    def start(self) -> AirflowStandalone:
        """Start it in the background (its own process group); returns at once."""
        if self.process is not None:
            raise AirflowError("airflow standalone is already started")
        self.home.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        airflow = Path(sys.executable).parent / "airflow"
        command = [str(airflow) if airflow.exists() else "airflow", "standalone"]
        self.started_at = time.monotonic()
        with open(self.log_file, "ab") as log:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.environ(),
                cwd=str(self.home),
                start_new_session=True,
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def password(self) -> str:
        """The generated admin password (``{"admin": "..."}`` in the password file)."""
        return str(json.loads(self.password_file.read_text())[self.username])

    def wait_ready(
        self, timeout: float = 300.0, should_stop: Callable[[], bool] | None = None
    ) -> AirflowClient:
        """Wait until the API answers, the login works and scheduler + dag-processor report healthy
        (the default timeout: a start at a load average of 35 on 2 cores took over 150 s)."""
        deadline = time.monotonic() + timeout
        client: AirflowClient | None = None
        while True:
            if should_stop is not None and should_stop():
                raise AirflowError("interrupted while waiting for Airflow")
            if not self.alive():
                code = self.process.poll() if self.process else None
                raise AirflowError(
                    f"airflow standalone exited (code {code}); log {self.log_file}:\n{self._log_tail()}"
                )
            if client is None and self.password_file.exists():
                probe = AirflowClient(self.url, self.username, self.password(), timeout=5)
                if probe.api_answers():
                    client = probe
            if client is not None:
                health = client.health()
                parts = [health.get(name, {}).get("status") for name in ("scheduler", "dag_processor")]
                if all(p == "healthy" for p in parts):
                    client.timeout = 30.0
                    client.token()
                    client.ensure_pool()
                    return client
            if time.monotonic() > deadline:
                raise AirflowError(
                    f"Airflow at {self.url} not ready after {timeout:.0f}s; "
                    f"log {self.log_file}:\n{self._log_tail()}"
                )
            time.sleep(0.5)

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the whole process group: SIGTERM (each component shuts down cleanly, at once), then
        SIGKILL after ``timeout`` seconds. True if every process exited on SIGTERM.

        Airflow runs each task in a process group of its own (its supervisor's ``setpgid``), so a
        task still running (a Spark session, its JVM) is not in the group: the groups of every
        process carrying this ``AIRFLOW_HOME`` get the same signals, and nothing outlives the stop.
        """
        if self.process is None:
            return True
        pgid, clean = self.process.pid, True
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            tasks = self._task_groups(pgid)
            if self._group_gone(pgid, 0) and not tasks:
                break
            clean = sig == signal.SIGTERM
            for group in (pgid, *tasks):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, sig)
            if self._group_gone(pgid, wait) and all(self._group_gone(g, 0.2) for g in tasks):
                break
        self.process.poll()
        self.process = None
        return clean

    def _task_groups(self, pgid: int) -> set[int]:
        """Process groups other than ``pgid`` of live processes whose environment holds this
        ``AIRFLOW_HOME`` (the task processes and what they started); Linux's /proc only."""
        wanted, groups = f"AIRFLOW_HOME={self.home}".encode(), set()
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                if wanted in (proc / "environ").read_bytes().split(b"\0"):
                    group = os.getpgid(int(proc.name))
                    if group != pgid and group != os.getpgid(0):
                        groups.add(group)
            except (OSError, ValueError):  # gone meanwhile, or another user's
                continue
        return groups

    def _group_gone(self, pgid: int, timeout: float) -> bool:
        """True once no process of the group is left (reaping our own child, the leader)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None:
                self.process.poll()
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return True
            except PermissionError:
                return False
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    def __enter__(self) -> AirflowStandalone:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def demo_provision(
    airflow: AirflowStandalone, say: Callable[[str], None], should_stop: Callable[[], bool] | None = None
) -> bool:
    """The demo's Airflow step: wait for it, print UI and login, run the provisioning DAG via the API."""
    say(f"waiting for Airflow at {airflow.url} (log {airflow.log_file}) ...")
    try:
        client = airflow.wait_ready(should_stop=should_stop)
        took = f" {time.monotonic() - airflow.started_at:.0f}s after its start" if airflow.started_at else ""
        say(
            f"Airflow UI: {airflow.url}  login: {airflow.username} / {airflow.password()}  "
            f"(ready{took}; password file {airflow.password_file})"
        )
        run_id, state = client.run_dag(
            PROVISION_DAG_ID, timeout=180, on_change=lambda s: say(f"  {PROVISION_DAG_ID}: {s}")
        )
        tasks = ", ".join(f"{t} {s}" for t, s in sorted(client.task_states(PROVISION_DAG_ID, run_id).items()))
    except (AirflowError, OSError) as exc:
        say(f"FAILED: Airflow: {exc}")
        return False
    say(
        f"{'OK' if state == 'success' else 'FAILED'}: {PROVISION_DAG_ID} run {run_id} "
        f"finished {state} ({tasks}) via the REST API"
    )
    say(
        f"backfill a range: .venv/bin/python scripts/trigger_backfill.py --url {airflow.url} "
        f"--user {airflow.username} --password {airflow.password()} --start ISO --end ISO"
    )
    return state == "success"
