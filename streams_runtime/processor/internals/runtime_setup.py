"""RuntimeSetup: what every StreamThread of one KafkaStreams client shares, computed once at start.

Created by KafkaStreams.start() (after the internal topics are verified) and owned by the client;
threads only read it, and call its factories (record cache, changelog reader) for their own
instances. The StateDirectory is the one shared mutable piece (it is thread-safe: see its module docstring).
"""

from __future__ import annotations

import pathlib
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streams_runtime.errors import StreamsError
from streams_runtime.kafka.broker_identity import STANDARD_BROKER, BrokerIdentity, identify_broker
from streams_runtime.kafka.client_supplier import KafkaClientSupplier
from streams_runtime.kafka.membership import security_settings
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.assignment import SubtopologySources
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.internals.internal_topic_manager import prepare_topics
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
from streams_runtime.processor.internals.topology_info import SubtopologyInfo
from streams_runtime.processor.internals.user_topics import dead_letter_topic

if TYPE_CHECKING:  # the Topology module sits above the runtime
    from streams_runtime.config import StreamsConfig
    from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader
    from streams_runtime.processor.topology import Topology
    from streams_runtime.state.internals.record_cache import ThreadCache

#: consumer.* overrides that set the coordination member's session, with the member's defaults
_MEMBER_KEYS = {
    "session.timeout.ms": ("session_timeout_ms", 10_000),
    "heartbeat.interval.ms": ("heartbeat_interval_ms", 1_000),
}


@dataclass
class RuntimeSetup:
    config: StreamsConfig
    bootstrap_servers: str
    process_id: str
    builder: InternalTopologyBuilder
    subtopologies: dict[int, SubtopologyInfo]
    subtopology_sources: list[SubtopologySources]
    partition_counts: dict[str, int]
    changelog_topics: frozenset[str]
    state_directory: StateDirectory
    member_settings: dict[str, Any] = field(default_factory=dict)
    restore_listener: Any = None  # the client's StateRestoreListener, given to every reader
    global_topics: dict[str, int] = field(default_factory=dict)  # global source topic -> partitions
    global_stores: dict[str, Any] = field(default_factory=dict)  # set once the GlobalStreamThread restored
    end_offset_sums: Any = None  # ChangelogEndOffsets: the members' provider of true changelog ends
    #: makes every Kafka client of the client's threads (docs/architecture.md, the client supplier)
    client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER
    #: what the broker says it is: the embedded-broker workarounds are on only for Tansu
    broker: BrokerIdentity = STANDARD_BROKER
    #: bumped each time a source by topic pattern gained topics (threads compare it to theirs)
    pattern_version: int = 0
    has_pattern_sources: bool = False  # set by prepare(); the stream loop checks it every iteration
    _pattern_lock: threading.Lock = field(default_factory=threading.Lock)
    _patterns_listed_at: float = field(default_factory=time.monotonic)

    @property
    def client_id(self) -> str:
        return f"{self.config['application_id']}-{self.process_id[:8]}"

    @property
    def stateful(self) -> bool:
        return bool(self.changelog_topics) or any(i.stores for i in self.subtopologies.values())

    @staticmethod
    def state_root(config: StreamsConfig) -> pathlib.Path:
        return pathlib.Path(config.state_dir) / str(config.application_id)

    @classmethod
    def prepare(
        cls,
        topology: Topology,
        config: StreamsConfig,
        bootstrap_servers: str,
        process_id: str,
        client_supplier: KafkaClientSupplier = DEFAULT_CLIENT_SUPPLIER,
    ) -> RuntimeSetup:
        """Validate the topology against the cluster and create its internal topics (see there);
        every client is made by ``client_supplier``."""
        builder = topology.internal_builder
        app_id = config.required_application_id()
        if builder.application_id is None:
            builder.application_id = app_id
        elif builder.application_id != app_id:
            raise StreamsError(
                f"the topology was built for application {builder.application_id!r}, "
                f"the config says {app_id!r}"
            )
        builder.validate()
        # a security setting the membership's client cannot take is a config error: named before
        # anything is asked of the cluster
        security = security_settings(config.client_configs("client."))
        admin = client_supplier.get_admin(bootstrap_servers, config.client_configs("admin."))
        broker = identify_broker(admin, bootstrap_servers=bootstrap_servers)
        _bind_pattern_sources(admin, builder)
        counts = prepare_topics(
            admin,
            builder,
            config.replication_factor,
            dead_letter_topic=dead_letter_topic(config),
            # the suggested command names the cluster only when it is a real one
            bootstrap_servers=bootstrap_servers if client_supplier is DEFAULT_CLIENT_SUPPLIER else None,
            exactly_once=config.processing_guarantee == "exactly_once_v2",
        )
        global_topics = _global_topic_counts(admin, builder)
        infos, sources = _subtopologies(builder)
        changelogs = frozenset(t for i in infos.values() for t in i.changelog_topics.values())
        overrides = config.client_configs("consumer.")
        member: dict[str, Any] = {
            name: int(overrides.get(key, default)) for key, (name, default) in _MEMBER_KEYS.items()
        }
        member.update(_high_availability_settings(config))
        if security:  # the cluster's security settings, for the membership's kafka-python client
            member["overrides"] = security
        setup = cls(
            config,
            bootstrap_servers,
            process_id,
            builder,
            infos,
            sources,
            counts,
            changelogs,
            StateDirectory(config.state_dir, app_id),
            member,
            global_topics=global_topics,
            client_supplier=client_supplier,
            broker=broker,
        )
        setup.has_pattern_sources = _has_pattern_sources(builder)
        # the leader's lags are against the true changelog ends (docs/decisions/0001-embedded-broker.md)
        if setup.stateful:
            from streams_runtime.processor.internals.changelog_ends import ChangelogEndOffsets

            setup.end_offset_sums = ChangelogEndOffsets(
                bootstrap_servers,
                {i.id: i.changelog_topics.values() for i in infos.values()},
                setup.restore_consumer_overrides(),
                client_supplier=client_supplier,
                broker=broker,
            )
            setup.member_settings["end_offset_sums"] = setup.end_offset_sums
        return setup

    # ------------------------------------------------------------------ sources by topic pattern
    def refresh_pattern_sources(self) -> int:
        """Every ``metadata_max_age_ms``: bind new topics matching a pattern source (see
        pattern_sources) and recompute the sub-topologies and partition counts; returns
        :attr:`pattern_version`. Called by every stream thread each loop; one of them lists."""
        if not self.has_pattern_sources:
            return self.pattern_version
        now = time.monotonic()
        if now - self._patterns_listed_at < self.config.metadata_max_age_ms / 1000:
            return self.pattern_version
        if not self._pattern_lock.acquire(blocking=False):  # another thread is listing
            return self.pattern_version
        try:
            from streams_runtime.kafka.clients import existing_topics, partition_counts
            from streams_runtime.processor.internals.pattern_sources import add_new_pattern_topics

            admin = self.client_supplier.get_admin(
                self.bootstrap_servers, self.config.client_configs("admin.")
            )
            added = add_new_pattern_topics(self.builder, existing_topics(admin))
            if added:
                counts = partition_counts(admin, added)
                infos, sources = _subtopologies(self.builder)
                # replaced, never changed in place: a thread reads the old ones until it rebinds
                self.partition_counts = {**self.partition_counts, **counts}
                self.subtopologies, self.subtopology_sources = infos, sources
                self.pattern_version += 1
            self._patterns_listed_at = time.monotonic()
        finally:
            self._pattern_lock.release()
        return self.pattern_version

    # ------------------------------------------------------------------ per-thread factories
    def new_cache(self) -> ThreadCache | None:
        max_bytes = self.config.statestore_cache_max_bytes // self.config.num_stream_threads
        if max_bytes <= 0:
            return None
        from streams_runtime.state.internals.record_cache import ThreadCache

        return ThreadCache(max_bytes)

    def restore_consumer_overrides(self) -> dict[str, Any]:
        """librdkafka settings of every changelog reader: the restore consumers and the leader's
        true-end probe (``restore_consumer.*`` plus the isolation level of the guarantee, so an
        end offset under exactly-once is the end a read_committed restore can reach)."""
        from streams_runtime.kafka.clients import isolation_level

        return {
            **self.config.client_configs("restore_consumer."),
            # exactly-once restores committed changelog records only (read_committed)
            "isolation.level": isolation_level(self.config.processing_guarantee == "exactly_once_v2"),
        }

    def new_changelog_reader(self) -> StoreChangelogReader | None:
        if not self.stateful:
            return None
        from streams_runtime.processor.internals.changelog_reader import StoreChangelogReader

        return StoreChangelogReader(
            self.bootstrap_servers,
            restore_listener=self.restore_listener,
            consumer_overrides=self.restore_consumer_overrides(),
            skip_aborted=self.config.processing_guarantee == "exactly_once_v2",
            client_supplier=self.client_supplier,
            broker=self.broker,
        )

    def task_offset_sums(self) -> dict[Any, int]:
        return self.state_directory.task_offset_sums()

    def close(self) -> None:
        self.state_directory.close()
        if self.end_offset_sums is not None:
            self.end_offset_sums.close()


def _subtopologies(
    builder: InternalTopologyBuilder,
) -> tuple[dict[int, SubtopologyInfo], list[SubtopologySources]]:
    infos = {i.id: i for i in topology_info.sub_topologies(builder)}
    sources = [
        SubtopologySources(
            i.id,
            tuple(i.source_topics),
            tuple(tuple(g) for g in i.copartition_groups),
            stateful=bool(i.stores),
        )
        for i in infos.values()
    ]
    return infos, sources


def _high_availability_settings(config: StreamsConfig) -> dict[str, Any]:
    """The GroupMember settings for standbys, warm-ups and probing rebalances."""
    from streams_runtime.processor.internals.assignment import AssignorConfig

    return {
        "assignor_config": AssignorConfig(
            num_standby_replicas=config.num_standby_replicas,
            acceptable_recovery_lag=config.acceptable_recovery_lag,
            max_warmup_replicas=config.max_warmup_replicas,
        ),
        "probing_rebalance_interval_ms": config.probing_rebalance_interval_ms,
    }


def _global_topic_counts(admin: Any, builder: InternalTopologyBuilder) -> dict[str, int]:
    """Partition count of every global source topic (read by the GlobalStreamThread; prepare_topics
    checked that they exist)."""
    wanted = sorted({builder.decorate(t) for t in builder.global_topics})
    if not wanted:
        return {}
    from streams_runtime.kafka.clients import partition_counts

    found = partition_counts(admin, wanted)
    return {t: found[t] for t in wanted}


def _has_pattern_sources(builder: InternalTopologyBuilder) -> bool:
    from streams_runtime.processor.internals.pattern_sources import pattern_sources

    return bool(pattern_sources(builder))


def _bind_pattern_sources(admin: Any, builder: InternalTopologyBuilder) -> None:
    """Sources by topic pattern read the matching topics that exist now (see pattern_sources)."""
    from streams_runtime.processor.internals.pattern_sources import bind_pattern_topics, pattern_sources

    if pattern_sources(builder):
        from streams_runtime.kafka.clients import existing_topics

        bind_pattern_topics(builder, existing_topics(admin))
