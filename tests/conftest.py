"""Shared test infrastructure.

Markers (registered in pyproject.toml):
  kafka       needs the embedded broker; the session fixture starts it, and a failure to start is
              an error, never a skip.
  kafka_only  needs Apache Kafka (a behaviour Tansu lacks); skipped with the reason printed unless
              STREAMS_TEST_APACHE_KAFKA=1 and BOOTSTRAP_SERVERS point at an Apache Kafka cluster.
  spark       runs a local PySpark session.
  airflow     runs Airflow DAGs in-process.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator

import pytest

from streams_runtime.kafka.broker import EmbeddedBroker

APACHE_KAFKA = os.environ.get("STREAMS_TEST_APACHE_KAFKA") == "1"

# Every JVM the tests start (the in-process Spark sessions, and the Spark tasks of the Airflow
# processes the tests start, which inherit this environment) runs short jobs: the quick JIT tier
# only and the serial collector start up and finish them faster on a 2-core machine (the Spark
# job tests ~18% faster). Same code, same results; a value already set in the environment wins.
os.environ.setdefault("JDK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(
        reason="kafka_only: needs Apache Kafka (Tansu lacks this behaviour); "
        "set STREAMS_TEST_APACHE_KAFKA=1 and BOOTSTRAP_SERVERS to run it"
    )
    for item in items:
        if "kafka_only" in item.keywords and not APACHE_KAFKA:
            item.add_marker(skip)
        group = _xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


def _xdist_group(item: pytest.Item) -> str | None:
    """Under ``-n 2 --dist loadgroup`` (what ``make test`` runs): the tests that start worker
    processes against the broker and time what they see run one after another on one worker, as
    they would alone; the two tests sharing the session's ``airflow standalone`` run on one worker
    (one Airflow for both); everything else is spread over the workers."""
    path = str(item.fspath)
    if "/tests/integration/" in path:
        return "integration"
    if "airflow_standalone" in getattr(item, "fixturenames", ()):
        return "airflow-standalone"
    return None


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One broker for the whole session: ``$BOOTSTRAP_SERVERS`` if set, else embedded Tansu.

    Yields the bootstrap servers. The broker's log is in the session's temp directory.
    """
    configured = os.environ.get("BOOTSTRAP_SERVERS")
    if configured:
        yield configured
        return
    log = tmp_path_factory.mktemp("broker") / "broker.log"
    with EmbeddedBroker(log_file=log) as broker:
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
