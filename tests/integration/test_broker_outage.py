"""A broker outage longer than 60 s is ridden out: no instance dies, nothing is lost.

A second broker of the kind under test (Apache Kafka, or the embedded Tansu) advertises the port
of a loopback TCP proxy (``tcp_proxy.py``), so
every client of the test (two KafkaStreams instances, the input producer, the readers) reaches
it only through the proxy. Input streams in continuously; a burst right before the cut leaves
outputs unacknowledged in the stream threads' producers. The proxy is cut for 65 s, longer
than the 60 s a commit used to wait for acknowledgements before failing its thread (a commit
starts within 0.2 s of the cut, so the wait it logs is over 60 s), then healed. Both instances
stay RUNNING with no error, a commit is seen waiting through the cut (its warning, or its retries
at DEBUG), and every input id reaches the output. The cut is logged quietly: one WARNING that
Kafka is unreachable, one INFO that it is back with the duration, and no ERROR line (the client
libraries' per-retry errors are folded into them, streams_runtime/kafka/outage.py).
"""

from __future__ import annotations

import logging
import re
import threading
import time

import pytest

from streams_runtime import Consumed, KafkaStreams, KafkaStreamsState, Produced, Serdes, StreamsBuilder
from streams_runtime.brokers import local_broker
from streams_runtime.kafka.clients import create_producer
from streams_runtime.kafka.offsets import PartitionReadError
from tests.integration.streams_support import (
    make_topics,
    read_all,
    read_to_end,
    streams_config,
    wait_running,
    wait_until,
)
from tests.integration.tcp_proxy import TcpProxy

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

CUT_S = 65.0
PARTITIONS = 4


def _copy_topology(source: str, sink: str):
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).map_values(lambda v: v).to(
        sink, Produced.with_(Serdes.String(), Serdes.String())
    )
    return builder.build()


def _diagnose(bootstrap: str, source: str, sink: str, app: str, missing: set[str]) -> str:
    """Where the missing ids are in the input, and the committed input offsets."""
    from streams_runtime.kafka.clients import TopicPartition, create_consumer

    where = {
        m.value().decode(): (m.partition(), m.offset())
        for m in read_all(bootstrap, source, PARTITIONS, 10**9, timeout=5)
        if m.value().decode() in missing
    }
    consumer = create_consumer(bootstrap, app)
    committed = consumer.committed([TopicPartition(source, p) for p in range(PARTITIONS)], timeout=10)
    consumer.close()
    return f"input positions {where}; committed {[(tp.partition, tp.offset) for tp in committed]}"


class Feeder:
    """Produces ``id-<n>`` records through the proxy until stopped; librdkafka buffers and retries
    through the cut (its delivery timeout, 300 s by default, outlasts it)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = create_producer(bootstrap)
        self.topic, self.sent, self.failed = topic, 0, []
        self._lock = threading.Lock()  # the burst (test thread) and the stream (feeder thread)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def burst(self, n: int) -> None:
        for _ in range(n):
            self._send()
        assert self.producer.flush(10) == 0

    def _send(self) -> None:
        with self._lock:
            n, self.sent = self.sent, self.sent + 1
            self.producer.produce(self.topic, f"id-{n}".encode(), f"k{n}".encode(), on_delivery=self._report)

    def _report(self, err, msg) -> None:  # noqa: ANN001
        if err is not None:
            self.failed.append(err)

    def _run(self) -> None:
        while not self._stop.is_set():
            for _ in range(20):
                self._send()
            self.producer.poll(0)
            time.sleep(0.1)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        assert self.producer.flush(60) == 0


def test_instances_ride_out_a_65s_broker_outage_and_lose_nothing(broker_kind, unique_name, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="streams_runtime")
    caplog.set_level(logging.INFO, logger="streams_runtime.kafka.outage")
    caplog.set_level(logging.DEBUG, logger="streams_runtime.processor")  # the commit's retries
    proxy = TcpProxy(target_port=1)  # the broker's port is known once it started
    where = (
        {"data_dir": tmp_path / "kafka"} if broker_kind == "kafka" else {"log_file": tmp_path / "broker.log"}
    )
    broker = local_broker(broker_kind, advertised_port=proxy.port, **where)
    clients: list[KafkaStreams] = []
    try:
        broker.start()
        assert broker.port is not None
        proxy.set_target(broker.port)
        bootstrap = f"127.0.0.1:{proxy.port}"
        source, sink, app = unique_name("in"), unique_name("out"), unique_name("outage")
        make_topics(bootstrap, **{source: PARTITIONS, sink: PARTITIONS})
        for i in range(2):
            client = KafkaStreams(
                _copy_topology(source, sink), streams_config(bootstrap, app, tmp_path / f"i{i}")
            )
            client.start()
            clients.append(client)
        wait_running(*clients, timeout=45)
        feeder = Feeder(bootstrap, source)
        feeder.burst(500)
        wait_until(
            lambda: len(read_all(bootstrap, sink, PARTITIONS, 500, timeout=5)) >= 500, 30, "first outputs"
        )
        feeder.start()
        time.sleep(1.0)
        feeder.burst(20_000)  # outputs in flight in the stream threads when the cut comes
        proxy.cut()
        cut_at = time.monotonic()
        while time.monotonic() < cut_at + CUT_S:
            assert all(c.state is not KafkaStreamsState.ERROR for c in clients)
            time.sleep(1.0)
        proxy.heal()
        healed_at = time.monotonic()
        time.sleep(2.0)
        feeder.stop()
        assert feeder.failed == []
        wanted = {f"id-{n}" for n in range(feeder.sent)}
        got: set[str] = set()

        def all_arrived() -> bool:  # each look reads the output to its current end
            try:
                got.update(m.value().decode() for m in read_to_end(bootstrap, sink, PARTITIONS, timeout=10))
            except PartitionReadError:  # the clients may still be reconnecting
                return False
            return got >= wanted

        wait_until(
            all_arrived,
            90,
            lambda: f"{len(wanted - got)} missing: {_diagnose(bootstrap, source, sink, app, wanted - got)}",
        )
        recovered_s = time.monotonic() - healed_at
        wait_running(*clients, timeout=30)
        assert all(not c.errors for c in clients), [c.errors for c in clients]
        waits = [
            int(m.group(1))
            for r in caplog.records
            if (m := re.search(r"(?:not acknowledged for|acknowledged after) (\d+)s", r.getMessage()))
        ]
        # a commit waits through the cut in step 2 (outputs in flight: acknowledgements) or, when
        # nothing was in flight at the cut, in step 3 (the offset commit retried); either way one
        # commit spans the outage, past 60 s, and nothing failed
        retries = [
            r.created for r in caplog.records if r.getMessage().startswith("committing input offsets failed")
        ]
        retried_s = max(retries) - min(retries) if retries else 0.0
        print(
            f"\noutage {CUT_S:.0f}s: {feeder.sent} records, 0 lost, "
            f"all outputs {recovered_s:.1f}s after heal; "
            f"longest commit wait logged {max(waits, default=0)}s, offset commit retried for {retried_s:.0f}s"
        )
        assert max(waits, default=0) >= 60 or retried_s >= 60, (waits, retried_s)

        # quietly: every client of the process saw the cut, and it is logged once each way
        def outage_lines() -> list[tuple[str, str]]:
            return [
                (r.levelname, r.getMessage())
                for r in caplog.records
                if r.name == "streams_runtime.kafka.outage"
            ]

        def timeline() -> str:  # each outage line, seconds after the cut and after the heal
            cut_wall = time.time() - (time.monotonic() - cut_at)
            return "\n".join(
                f"cut+{r.created - cut_wall:.1f}s heal+{r.created - cut_wall - (healed_at - cut_at):.1f}s "
                f"{r.levelname} {r.getMessage()}"
                for r in caplog.records
                if r.name == "streams_runtime.kafka.outage"
            )

        wait_until(
            lambda: any(level == "INFO" for level, _ in outage_lines()),
            30,
            lambda: f"the outage's end logged: {outage_lines()}",
        )
        assert len(outage_lines()) == 2, "the outage logged once each way:\n" + timeline()
        [(warned, unreachable), (informed, back)] = outage_lines()
        assert warned == "WARNING" and unreachable.startswith("Kafka unreachable"), outage_lines()
        lasted = int(re.search(r"reachable again after (\d+)s", back).group(1))
        assert informed == "INFO" and CUT_S - 5 <= lasted <= CUT_S + 30, back
        errors = [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]
        assert errors == [], (len(errors), errors[:10])
        print(f"logged: {unreachable[:60]}... / {back}")
    finally:
        for client in clients:
            client.close(timeout=20)
        proxy.close()
        broker.stop()
