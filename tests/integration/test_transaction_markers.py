"""The log's COMMIT/ABORT markers tell committed from aborted records, whatever the broker
returns to read_committed readers (Tansu returns aborted records; Apache Kafka does not)."""

from __future__ import annotations

from streams_runtime.brokers.tansu.transaction_markers import scan_markers
from streams_runtime.kafka.clients import create_producer
from streams_runtime.testing import read_committed_topic
from tests.integration.streams_support import make_topics


def _transactions(bootstrap: str, topic: str, plan: list[tuple[str, bool]], tid: str) -> None:
    producer = create_producer(bootstrap, {"transactional.id": tid})
    producer.init_transactions(10)
    for values, commit in plan:
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value.encode(), b"k", partition=0)
        producer.flush(10)
        (producer.commit_transaction if commit else producer.abort_transaction)(10)


def test_aborted_transactions_are_found_from_the_markers_and_left_out(bootstrap_servers, unique_name):
    topic = unique_name("markers")
    make_topics(bootstrap_servers, **{topic: 1})
    plan = [("abc", True), ("xy", False), ("d", True), ("zzz", False), ("e", True)]
    _transactions(bootstrap_servers, topic, plan, unique_name("tid"))
    plain = create_producer(bootstrap_servers)
    plain.produce(topic, b"f", b"k", partition=0)  # not transactional: never aborted
    assert plain.flush(10) == 0

    committed = read_committed_topic(bootstrap_servers, topic, 1)
    assert [m.value().decode() for m in committed] == list("abcdef")

    # offsets: a b c [C] x y [A] d [C] z z z [A] e [C] f
    scan = scan_markers(bootstrap_servers, (topic, 0))
    assert [o for o in range(17) if scan.is_aborted(o)] == [4, 5, 9, 10, 11]
