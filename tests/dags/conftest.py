"""Airflow test infrastructure: an isolated AIRFLOW_HOME, a migrated SQLite DB, DAG runs.

Every test under tests/dags/ carries the ``airflow`` marker. Airflow reads its configuration when
it is first imported, so the ``airflow_env`` session fixture sets the environment before anything
imports it (test modules here import Airflow inside tests and fixtures only):

- ``AIRFLOW_HOME`` a temporary directory (SQLite DB, logs), ``LOAD_EXAMPLES=False``;
- the DAGs folder is the repo's ``dags/``; ``streams_ops`` is imported as the installed provider
  it is (no plugins folder on ``sys.path``).

``airflow_db`` migrates the DB once per session (~3 s); the first ``dag.test()`` of a session
takes ~5 s more (the in-process execution API starts), later ones well under a second.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/dags/" in str(item.fspath):
            item.add_marker(pytest.mark.airflow)


def airflow_environ(home: Path) -> dict[str, str]:
    """The environment an Airflow process of these tests runs with."""
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
    }


@pytest.fixture(scope="session", autouse=True)
def airflow_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Point Airflow at a temporary home and the repo's dags/ (before it is imported)."""
    home = tmp_path_factory.mktemp("airflow_home")
    if "airflow.configuration" in sys.modules:
        pytest.fail(
            "airflow was imported before tests/dags configured it (its AIRFLOW_HOME and DAGs folder "
            "would be wrong): import airflow inside tests and fixtures, never at a test module's top"
        )
    env = airflow_environ(home)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        yield env


@pytest.fixture(scope="session")
def airflow_db(airflow_env: dict[str, str]) -> None:
    """A migrated SQLite metadata DB, once per session."""
    from airflow.utils import db

    db.initdb()


@pytest.fixture
def kafka_conn(bootstrap_servers: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The ``streams_kafka`` Connection, pointing at the session's broker (as an env var)."""
    conn = {"conn_type": "kafka", "extra": {"bootstrap_servers": bootstrap_servers}}
    monkeypatch.setenv("AIRFLOW_CONN_STREAMS_KAFKA", json.dumps(conn))
    return "streams_kafka"


@pytest.fixture(scope="session")
def dag_bag(airflow_env: dict[str, str]) -> Any:
    """The repo's DAGs, parsed once."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    assert not bag.import_errors, bag.import_errors
    return bag


@pytest.fixture
def run_dag(airflow_db: None) -> Callable[..., Any]:
    """``run_dag(dag_id, **conf) -> DagRunResult``: ``dag.test()`` with ``conf`` as the run's Params.

    The DAG is parsed afresh for every run, as a worker would: ``dag.test()`` runs the DAG's own
    operator objects, and rendering their templates overwrites them.
    """
    from airflow.dag_processing.dagbag import DagBag

    def run(dag_id: str, **conf: Any) -> DagRunResult:
        dag = DagBag(dag_folder=str(DAGS)).get_dag(dag_id)
        return DagRunResult(dag.test(run_conf=conf))

    return run


class DagRunResult:
    """A finished test run: its state, each task's state and return value (XCom)."""

    def __init__(self, dag_run: Any) -> None:
        self.dag_run = dag_run
        self.state = str(dag_run.state)

    def task_states(self) -> dict[str, str]:
        return {_ti_key(ti): str(ti.state) for ti in self.dag_run.get_task_instances()}

    def xcom(self, task_id: str, map_index: int = -1, key: str = "return_value") -> Any:
        from airflow.models.xcom import XComModel
        from airflow.utils.session import create_session

        with create_session() as session:
            row = (
                session.query(XComModel)
                .filter_by(
                    dag_id=self.dag_run.dag_id,
                    run_id=self.dag_run.run_id,
                    task_id=task_id,
                    map_index=map_index,
                    key=key,
                )
                .one_or_none()
            )
            return None if row is None else XComModel.deserialize_value(row)

    def asset_events(self) -> list[tuple[str, str, dict]]:
        """``(task key, asset uri, extra)`` of every asset event this run's tasks emitted."""
        from airflow.models.asset import AssetEvent, AssetModel
        from airflow.utils.session import create_session

        with create_session() as session:
            rows = (
                session.query(AssetEvent, AssetModel.uri)
                .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
                .filter(
                    AssetEvent.source_dag_id == self.dag_run.dag_id,
                    AssetEvent.source_run_id == self.dag_run.run_id,
                )
                .all()
            )
            return sorted(
                (
                    e.source_task_id
                    if e.source_map_index is None or e.source_map_index < 0
                    else f"{e.source_task_id}[{e.source_map_index}]",
                    uri,
                    dict(e.extra or {}),
                )
                for e, uri in rows
            )


def _ti_key(ti: Any) -> str:
    return ti.task_id if ti.map_index < 0 else f"{ti.task_id}[{ti.map_index}]"


@pytest.fixture(scope="session")
def airflow_standalone(kafka_broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One ``airflow standalone`` for the session, shared by the tests that drive it over HTTP.

    Starting it (api-server, scheduler, dag-processor, triggerer) and stopping it cost tens of
    seconds each on a 2-core machine, so the REST-API test and the UI-forms test use the same one.
    Its ``streams_worker`` Connection points at ``worker_port`` (where the UI-forms test starts a
    demo worker). Each test names its own runs, output directories and data intervals, so they do
    not see each other's results. On teardown no process of its group may outlive ``stop()``.
    """
    import os

    from streams_runtime.demo.airflow_standalone import AirflowStandalone
    from tests.ports import free_port

    tmp = tmp_path_factory.mktemp("airflow_standalone")
    worker_port, token = free_port(), "ui-forms-token"
    # as the demo starts it: its streams_worker Connection is a worker's HTTP API (the UI-forms
    # test starts the demo application's instances there) with the workers' token
    standalone = AirflowStandalone(
        kafka_broker,
        home=tmp / "airflow_home",
        log_file=tmp / "airflow.log",
        worker_url=f"http://127.0.0.1:{worker_port}",
        worker_token=token,
        # the demo's log level (the in-process tests' WARNING would drop the task logs' INFO lines,
        # such as the Data Docs address)
        extra_env={
            "STREAMS_RUNTIME_HOME": str(tmp / "runtime_home"),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
        },
    )
    standalone.worker_port = worker_port  # type: ignore[attr-defined]
    standalone.start()
    try:
        yield standalone
    finally:
        pgid = standalone.process.pid
        # SIGTERM to the group, up to 5 s, then SIGKILL. What must hold is that no process of it
        # outlives stop(), in its group or one that left the group.
        standalone.stop(timeout=5)
        with pytest.raises(ProcessLookupError):
            os.killpg(pgid, 0)
        assert _processes_with_env(f"AIRFLOW_HOME={standalone.home}") == []


def _processes_with_env(entry: str) -> list[int]:
    """Pids of live processes (readable by us) whose environment holds ``entry`` exactly."""
    import os
    from pathlib import Path

    wanted, pids = entry.encode(), []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if wanted in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:  # gone meanwhile, or another user's
            continue
    return pids
