"""Shared test infrastructure.

Brokers: ``--broker tansu,kafka`` (or ``$STREAMS_TEST_BROKERS``; default ``kafka,tansu``) names the
brokers of the session fixtures. Every test that needs a broker (through ``kafka_broker``) runs on
the first; the tests under ``tests/integration/`` run once on each, with the broker in their id
(``test_x[kafka]``, ``test_x[tansu]``). Whatever the option says, tests marked ``kafka_only``
run on Apache Kafka, tests marked ``tansu_only`` on Tansu, and tests marked ``every_broker`` on
both. ``kafka`` is Apache Kafka 4.3.1 from the setup cache (``make setup-kafka``), ``tansu`` the
embedded broker.
``$BOOTSTRAP_SERVERS`` replaces the first broker with an external cluster.

Markers (registered in pyproject.toml):
  kafka       needs a broker; the session fixture starts it, and a failure to start is an error,
              never a skip.
  kafka_only  needs Apache Kafka (a behaviour Tansu lacks): runs on the ``kafka`` broker only, is
              not generated for ``tansu``.
  tansu_only  about the embedded broker itself (what it reports of itself, a defect the runtime
              works around): runs on ``tansu`` only.
  spark       runs a local PySpark session.
  airflow     runs Airflow DAGs in-process.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Callable, Iterator

import pytest

from streams_runtime.brokers import BROKER_KINDS, local_broker

# Every JVM the tests start (the in-process Spark sessions, and the Spark tasks of the Airflow
# processes the tests start, which inherit this environment) runs short jobs: the quick JIT tier
# only and the serial collector start up and finish them faster on a 2-core machine (the Spark
# job tests ~18% faster). Same code, same results; a value already set in the environment wins.
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--broker",
        default=os.environ.get("STREAMS_TEST_BROKERS", "kafka,tansu"),
        help="comma-separated brokers of the session fixtures, of "
        f"{', '.join(BROKER_KINDS)}: the first serves every test, the integration tests run on "
        "each (default: $STREAMS_TEST_BROKERS or kafka,tansu)",
    )


def configured_brokers(config: pytest.Config) -> list[str]:
    kinds = [k.strip() for k in str(config.getoption("--broker")).split(",") if k.strip()]
    unknown = [k for k in kinds if k not in BROKER_KINDS]
    if unknown or not kinds:
        raise pytest.UsageError(f"--broker {kinds}: allowed values are {', '.join(BROKER_KINDS)}")
    return kinds


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that needs a broker gets the broker kind as a session-scoped parameter."""
    if "broker_kind" not in metafunc.fixturenames:
        return
    kinds = configured_brokers(metafunc.config)
    if "/tests/integration/" not in str(metafunc.definition.fspath):
        kinds = kinds[:1]
    if metafunc.definition.get_closest_marker("every_broker"):
        kinds = list(BROKER_KINDS)
    if metafunc.definition.get_closest_marker("kafka_only"):
        kinds = ["kafka"]
    if metafunc.definition.get_closest_marker("tansu_only"):
        kinds = ["tansu"]
    metafunc.parametrize("broker_kind", kinds, indirect=True, scope="session")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = _xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def _broker_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("broker_kind") if callspec else None


def _xdist_group(item: pytest.Item) -> str | None:
    """Under ``-n 2 --dist loadgroup`` (what ``make test`` runs): the tests that start worker
    processes against a broker and time what they see run one after another on one worker per
    broker (the Apache Kafka ones on one, the Tansu ones on the other; a test that starts its own
    broker goes with the kind it starts); the two tests sharing the session's ``airflow
    standalone`` run on one worker (one Airflow for both), and the 3-node cluster's fault tests run
    on that worker too, never beside them: each loads both cores (Airflow's four processes and a
    Spark JVM; three Kafka JVMs), and side by side the cluster's KRaft quorum went ~30 s without a
    leader (its log lines 10-20 s apart) and a restarted node gave up registering after 60 s; the
    multi-host test (marker ``multi_host``: its own broker and two workers, 2 s sessions, a cut
    link) runs there too, never beside them either; the Kafka Streams oracle's tests run on one
    worker (one JVM for all their cases); everything else is spread over the workers."""
    path = str(item.fspath)
    if "/tests/oracle/" in path:
        return "kafka-streams-oracle"
    if path.endswith("/tests/integration/test_kafka_cluster_faults.py") or "multi_host" in item.keywords:
        return "airflow-and-kafka-cluster"
    if "/tests/integration/" in path:
        kind = _broker_of(item) or ("kafka" if "kafka_only" in item.keywords else "tansu")
        return f"integration-{kind}"
    if "airflow_standalone" in getattr(item, "fixturenames", ()):
        return "airflow-and-kafka-cluster"
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local[2] SparkSession for the whole run (per test process), UI off, two shuffle
    partitions, UTC: Spark's start is the cost. Shared by tests/spark_jobs and the DAG tests: a
    session is process-wide (``getOrCreate``), so a module that made and stopped its own would stop
    it under every later test of the process."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from spark_jobs.session import local_session

    session = local_session(app_name="streams-runtime-tests", master="local[2]", shuffle_partitions=2)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def broker_kind(request: pytest.FixtureRequest) -> str:
    """The kind of broker this test runs on (parametrized by ``pytest_generate_tests``)."""
    return str(getattr(request, "param", configured_brokers(request.config)[0]))


@pytest.fixture(scope="session")
def kafka_broker(
    broker_kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One broker of each kind for the whole session (per test process); yields its bootstrap servers.

    ``$BOOTSTRAP_SERVERS`` replaces the first kind with an external cluster. The broker's logs are
    in the session's temp directory.
    """
    configured = os.environ.get("BOOTSTRAP_SERVERS")
    if configured and broker_kind == configured_brokers(request.config)[0]:
        yield configured
        return
    home = tmp_path_factory.mktemp(f"broker-{broker_kind}")
    options = {"data_dir": home} if broker_kind == "kafka" else {"log_file": home / "broker.log"}
    with local_broker(broker_kind, **options) as broker:
        yield broker.bootstrap_servers


@pytest.fixture
def bootstrap_servers(kafka_broker: str) -> str:
    return kafka_broker


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Factory of names unique to this test: ``unique_name("orders") -> "orders-test-foo-1a2b3c4d"``.

    Use it for topics, groups and application ids so tests sharing one broker never collide.
    """
    test = re.sub(r"[^a-zA-Z0-9]+", "-", request.node.name).strip("-")[:40]

    def make(prefix: str) -> str:
        return f"{prefix}-{test}-{uuid.uuid4().hex[:8]}"

    return make


_seconds_by_group: dict[str, float] = {}
#: (test, text) of each test that recorded a "scenario" property (the fault scenarios: counts and phases)
_scenarios: list[tuple[str, str]] = []


def _time_group(nodeid: str) -> str:
    """Where a test's seconds are counted: its xdist group (``...@integration-kafka``), else the
    broker in its id, else broker-free."""
    group = re.search(r"@([\w-]+)$", nodeid)
    if group:
        return group.group(1)
    broker = re.search(r"\[(kafka|tansu)\b", nodeid)
    return f"other on {broker.group(1)}" if broker else "broker-free"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test outside tests/dags must not import Airflow: only tests/dags/conftest.py points it at
    a temporary home and the repo's DAGs before its first import, and an earlier import in the same
    process makes every tests/dags test there fail (how it goes depends on which tests xdist puts
    on one worker, so it fails here, in the test that imported it)."""
    imported_before = "airflow.configuration" in sys.modules
    result = yield
    imported_now = not imported_before and "airflow.configuration" in sys.modules
    if imported_now and "/tests/dags/" not in str(item.fspath):
        pytest.fail(f"{item.nodeid} imported airflow: move it under tests/dags/ (see tests/dags/conftest.py)")
    return result


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    group = _time_group(report.nodeid)
    _seconds_by_group[group] = _seconds_by_group.get(group, 0.0) + report.duration
    if report.when == "call":
        recorded = report.user_properties
        _scenarios.extend((report.nodeid, text) for name, text in recorded if name == "scenario")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # noqa: ANN001
    """Each group's share of the test time (setup, call and teardown summed over its tests): what
    each broker costs the suite. Under xdist the groups run side by side, so the sum exceeds the
    wall time."""
    total = sum(_seconds_by_group.values())
    if not total:
        return
    terminalreporter.section("test time by group")
    for group, seconds in sorted(_seconds_by_group.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{group:<28} {seconds:8.1f} s  {seconds / total:6.1%}")
    terminalreporter.write_line(f"{'all':<28} {total:8.1f} s")
    if _scenarios:  # what the fault scenarios recorded (record_property "scenario"): where their time went
        terminalreporter.section("fault scenarios")
        for nodeid, text in sorted(_scenarios):
            terminalreporter.write_line(f"{nodeid.split('::')[-1]}: {text}")
