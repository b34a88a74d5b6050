"""The oracle's session fixture: one Kafka Streams process for every case of the session."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.oracle.kafka_streams_side import KafkaStreamsOracle, OracleUnavailableError


@pytest.fixture(scope="session")
def kafka_streams_oracle() -> Iterator[KafkaStreamsOracle]:
    """Apache Kafka Streams 4.3.1 behind a JSON-lines process. A missing or stale build fails the
    tests (with the setup target to run); it is never a skip."""
    try:
        oracle = KafkaStreamsOracle()
    except OracleUnavailableError as error:
        pytest.fail(str(error), pytrace=False)
    with oracle:
        yield oracle


@pytest.fixture(autouse=True)
def _quiet_runtime_warnings() -> Iterator[None]:
    """Hundreds of cases warn about generated store names and skipped records: keep a failure's
    report to the difference itself."""
    logger = logging.getLogger("streams_runtime")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)
