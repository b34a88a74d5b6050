"""Listing a changelog's (or a global topic's) offsets while a broker bounces: the answer
"unknown partition" or "not leader" is asked again, not a dead stream thread; an error that does
not pass, or one that lasts past the retry window, fails naming the partition.

Found on the 3-broker Apache Kafka cluster: a bounced broker answered ListOffsets for an existing
changelog partition with librdkafka's _UNKNOWN_PARTITION, and the stream thread died."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder
from streams_runtime.config import StreamsConfig
from streams_runtime.errors import ProcessorStateError, StreamsError
from streams_runtime.kafka.broker_identity import BrokerIdentity
from streams_runtime.kafka.clients import KafkaError, KafkaException
from streams_runtime.processor.internals import changelog_reader, global_stream_thread
from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader, _Changelog
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.internals.global_stream_thread import GlobalStreamThread
from streams_runtime.processor.internals.state_directory import StateDirectory

CHANGELOG = ("app-counts-changelog", 1)


class ListingConsumer:
    """Answers ``get_watermark_offsets`` with the queued errors first, then ``(low, high)``."""

    def __init__(self, errors: list[int], watermarks: tuple[int, int] = (3, 42)) -> None:
        self.errors = list(errors)
        self.watermarks = watermarks
        self.calls = 0
        self.metadata_requests: list[str] = []  # topics asked for with list_topics
        self.metadata_asked_before: list[int] = []  # per listing: metadata requests until then

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        self.metadata_requests.append(topic or "")
        return SimpleNamespace(topics={})

    def get_watermark_offsets(self, partition: Any, timeout: float = 0.0, cached: bool = False) -> Any:
        self.calls += 1
        self.metadata_asked_before.append(len(self.metadata_requests))
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return self.watermarks


def _reader(consumer: ListingConsumer) -> StoreChangelogReader:
    supplier = SimpleNamespace(get_restore_consumer=lambda servers, overrides: consumer)
    broker = BrokerIdentity(cluster_id="kraft-cluster-id")
    return StoreChangelogReader("unused:9092", client_supplier=supplier, broker=broker)


def test_a_changelog_whose_partition_is_unknown_for_a_moment_is_listed_again() -> None:
    consumer = ListingConsumer([KafkaError._UNKNOWN_PARTITION, KafkaError.NOT_LEADER_FOR_PARTITION])
    reader, changelog = _reader(consumer), _Changelog(CHANGELOG, meta=None)
    assert reader._listed_offsets(changelog) is None  # noqa: SLF001
    assert reader._listed_offsets(changelog) is None  # noqa: SLF001
    assert reader._listed_offsets(changelog) == 42  # noqa: SLF001
    assert (changelog.low, changelog.listing_since) == (3, None)
    # after the first failure the topic's metadata was asked for (librdkafka lists from the
    # metadata it holds); the second failure came within a second of it: not asked again
    assert consumer.metadata_requests == ["app-counts-changelog"]
    assert consumer.metadata_asked_before == [0, 1, 1]


def test_a_changelog_still_unknown_past_the_retry_window_fails_naming_it(monkeypatch) -> None:
    consumer = ListingConsumer([KafkaError._UNKNOWN_PARTITION] * 2)
    reader, changelog = _reader(consumer), _Changelog(CHANGELOG, meta=None)
    assert reader._listed_offsets(changelog) is None  # noqa: SLF001
    monkeypatch.setattr(changelog_reader, "LIST_OFFSETS_RETRY_S", 0.0)
    with pytest.raises(ProcessorStateError, match="changelog app-counts-changelog-1"):
        reader._listed_offsets(changelog)  # noqa: SLF001


def test_a_changelog_listing_refused_for_good_fails_at_once() -> None:
    reader = _reader(ListingConsumer([KafkaError.TOPIC_AUTHORIZATION_FAILED]))
    with pytest.raises(ProcessorStateError, match="changelog app-counts-changelog-1"):
        reader._listed_offsets(_Changelog(CHANGELOG, meta=None))  # noqa: SLF001


def _global_thread(consumer: ListingConsumer, tmp_path: Any) -> GlobalStreamThread:
    builder = StreamsBuilder()
    builder.global_table("scores", Consumed.with_(Serdes.String(), Serdes.Integer()), Materialized.as_("s"))
    props = {"application_id": "app", "bootstrap_servers": "unused:9092", "state_dir": str(tmp_path)}
    runtime = SimpleNamespace(
        config=StreamsConfig(props),
        client_id="app-client",
        bootstrap_servers="unused:9092",
        client_supplier=DEFAULT_CLIENT_SUPPLIER,
        global_topics={"scores": 1},
        builder=builder.build().internal_builder,
        state_directory=StateDirectory(tmp_path, "app"),
    )
    thread = GlobalStreamThread(runtime)
    thread._consumer = consumer  # noqa: SLF001 (only the listing step is exercised)
    return thread


def test_a_global_partition_unknown_for_a_moment_is_listed_again(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(global_stream_thread.time, "sleep", lambda s: None)
    consumer = ListingConsumer([KafkaError._UNKNOWN_PARTITION, KafkaError._TIMED_OUT])
    assert _global_thread(consumer, tmp_path)._listed_offsets(("scores", 0)) == (3, 42)  # noqa: SLF001
    assert consumer.calls == 3


def test_a_global_partition_refused_for_good_fails_naming_it(tmp_path) -> None:
    consumer = ListingConsumer([KafkaError.TOPIC_AUTHORIZATION_FAILED])
    with pytest.raises(StreamsError, match="global topic scores-0"):
        _global_thread(consumer, tmp_path)._listed_offsets(("scores", 0))  # noqa: SLF001


def test_a_global_partition_still_unknown_past_the_retry_window_fails_naming_it(
    monkeypatch, tmp_path
) -> None:
    monkeypatch.setattr(global_stream_thread, "LIST_OFFSETS_RETRY_S", 0.0)
    consumer = ListingConsumer([KafkaError._UNKNOWN_PARTITION])
    with pytest.raises(StreamsError, match="global topic scores-0"):
        _global_thread(consumer, tmp_path)._listed_offsets(("scores", 0))  # noqa: SLF001
    assert consumer.calls == 1


class SilentConsumer(ListingConsumer):
    """A restore consumer whose fetches bring nothing (a changelog leader it cannot reach)."""

    def __init__(self) -> None:
        super().__init__([])
        self.assigned: dict[tuple[str, int], int] = {}

    def incremental_assign(self, partitions: list[Any]) -> None:
        self.assigned.update({(p.topic, p.partition): p.offset for p in partitions})

    def incremental_unassign(self, partitions: list[Any]) -> None:
        for p in partitions:
            self.assigned.pop((p.topic, p.partition), None)

    def consume(self, num_messages: int, timeout: float) -> list[Any]:
        return []

    def position(self, partitions: list[Any]) -> list[Any]:
        return [SimpleNamespace(offset=self.assigned[(p.topic, p.partition)]) for p in partitions]


def test_a_restoration_that_makes_no_progress_is_logged_with_its_position_and_end(
    monkeypatch, caplog
) -> None:
    meta = SimpleNamespace(offset=None, name="counts", timestamped=False)
    manager = SimpleNamespace(task_id="0_1", changelog_metadata=lambda: {CHANGELOG: meta})
    reader = _reader(SilentConsumer())
    reader.register(manager)
    reader.restore()  # lists the end (42) and seeks to the log start (3)
    assert "no progress" not in caplog.text
    monkeypatch.setattr(changelog_reader, "RESTORE_STALL_WARN_S", 0.0)
    reader.restore()
    assert (
        "task 0_1: restoration made no progress for 0s (0 records restored): "
        "app-counts-changelog-1 RESTORING from offset 3 to 42, position 3"
    ) in caplog.text


class EofConsumer(SilentConsumer):
    """A restore consumer whose fetches bring only the end-of-partition events queued in
    :attr:`eofs` (one per fetch)."""

    def __init__(self) -> None:
        super().__init__()
        self.eofs: list[int] = []

    def consume(self, num_messages: int, timeout: float) -> list[Any]:
        if not self.eofs:
            return []
        offset = self.eofs.pop(0)
        error = KafkaError(KafkaError._PARTITION_EOF)  # noqa: SLF001
        return [
            SimpleNamespace(
                error=lambda: error,
                topic=lambda: CHANGELOG[0],
                partition=lambda: CHANGELOG[1],
                offset=lambda: offset,
            )
        ]


def test_an_end_of_partition_below_the_listed_end_does_not_end_the_restoration() -> None:
    """After a failover the new leader's high watermark can lag the one listed: the restore
    reads on to the listed end instead of finishing with a state behind the outputs."""
    meta = SimpleNamespace(offset=None, name="counts", timestamped=False)
    manager = SimpleNamespace(
        task_id="0_1", changelog_metadata=lambda: {CHANGELOG: meta}, checkpoint=lambda: None
    )
    consumer = EofConsumer()
    reader = _reader(consumer)
    reader.register(manager)
    assert reader.restore() == set()  # listed: log start 3, end 42; seeks to 3
    consumer.eofs = [30]
    assert reader.restore() == set() and reader.is_restoring("0_1")
    consumer.eofs = [42]
    assert reader.restore() == {"0_1"}


def test_a_new_leader_whose_high_watermark_is_not_caught_up_is_asked_again() -> None:
    """KIP-207: OFFSET_NOT_AVAILABLE from a leader that just took over (seen after every node of a
    3-node cluster was down: the stream thread died of it)."""
    consumer = ListingConsumer([KafkaError.OFFSET_NOT_AVAILABLE])
    reader, changelog = _reader(consumer), _Changelog(CHANGELOG, meta=None)
    assert reader._listed_offsets(changelog) is None  # noqa: SLF001
    assert reader._listed_offsets(changelog) == 42  # noqa: SLF001
