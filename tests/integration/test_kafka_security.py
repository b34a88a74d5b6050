"""An application on a cluster that requires SASL authentication (Apache Kafka with a
SASL_PLAINTEXT listener, mechanism PLAIN): the cluster's security settings, given once under
``client.*``, reach every client of the application, the group membership's kafka-python client
included; wrong credentials fail the start with a clear error, and the password never appears in
what the application logs.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Iterator

import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Produced, Serdes, StreamsBuilder
from streams_runtime.brokers import ApacheKafkaCluster
from streams_runtime.errors import StreamsError
from streams_runtime.kafka.clients import (
    TopicSpec,
    create_admin,
    create_consumer,
    create_producer,
    create_topics,
)
from streams_runtime.kafka.offsets import EOF_OVERRIDES, scan_to_eof
from tests.integration.streams_support import FAST_CLIENT, wait_running, wait_until

pytestmark = pytest.mark.kafka_only

PASSWORD = "c0rrect-h0rse-battery-staple"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheKafkaCluster]:
    cluster = ApacheKafkaCluster(
        data_dir=tmp_path_factory.mktemp("kafka-sasl"), sasl_users={"streams": PASSWORD}
    )
    with cluster:
        yield cluster


def _app(source: str, sink: str):
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .group_by_key()
        .count(Materialized.as_("counts"))
        .to_stream()
        .to(sink, Produced.with_(Serdes.String(), Serdes.Long()))
    )
    return builder.build()


def _config(cluster: ApacheKafkaCluster, app: str, state_dir: str, password: str = PASSWORD) -> dict:
    security = cluster.client_settings("streams", password)
    return {
        "application_id": app,
        "bootstrap_servers": cluster.bootstrap_servers,
        "state_dir": state_dir,
        **FAST_CLIENT,
        **{f"client.{key}": value for key, value in security.items()},
    }


def test_an_application_runs_with_the_security_settings_given_once(secured, unique_name, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="streams_runtime")
    security = secured.client_settings()
    bootstrap = secured.bootstrap_servers
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("sasl-app")
    create_topics(create_admin(bootstrap, security), [TopicSpec(source, 2), TopicSpec(sink, 2)])
    # an unauthenticated client is refused by this listener
    with pytest.raises(Exception, match="(?i)auth|disconnect|timed out|transport"):
        create_admin(bootstrap, {"socket.timeout.ms": 3000}).list_topics(timeout=3)

    streams = KafkaStreams(_app(source, sink), _config(secured, app, str(tmp_path)))
    streams.start()
    try:
        wait_running(streams, timeout=60)
        producer = create_producer(bootstrap, security)
        for i in range(30):
            producer.produce(source, b"x", f"k{i % 3}".encode())
        assert producer.flush(20) == 0
        latest: dict[str, int] = {}

        def counted() -> bool:
            consumer = create_consumer(
                bootstrap, f"reader-{time.monotonic_ns()}", {**EOF_OVERRIDES, **security}
            )
            try:

                def keep(m):
                    latest[m.key().decode()] = struct.unpack(">q", m.value())[0]

                scan_to_eof(consumer, sink, {0: 0, 1: 0}, keep, timeout=10)
            finally:
                consumer.close()
            return latest == {"k0": 10, "k1": 10, "k2": 10}

        wait_until(counted, 60, lambda: f"counts {latest}")
        assert streams.state.name == "RUNNING"
    finally:
        streams.close(timeout=30)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert PASSWORD not in logged


def test_wrong_credentials_fail_the_start_clearly(secured, unique_name, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="streams_runtime")
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("sasl-bad")
    create_topics(create_admin(secured.bootstrap_servers, secured.client_settings()), [TopicSpec(source, 1)])
    streams = KafkaStreams(
        _app(source, sink), _config(secured, app, str(tmp_path), password="wrong-password")
    )
    try:
        with pytest.raises(StreamsError, match="(?i)authentication"):
            streams.start()
    finally:
        streams.close(timeout=10)
    assert "wrong-password" not in "\n".join(r.getMessage() for r in caplog.records)


def test_an_unsupported_security_setting_is_named(secured, unique_name, tmp_path):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("sasl-odd")
    create_topics(create_admin(secured.bootstrap_servers, secured.client_settings()), [TopicSpec(source, 1)])
    config = {**_config(secured, app, str(tmp_path)), "client.sasl.kerberos.service.name": "kafka"}
    streams = KafkaStreams(_app(source, sink), config)
    try:
        with pytest.raises(StreamsError, match="client.sasl.kerberos.service.name"):
            streams.start()
    finally:
        streams.close(timeout=10)
