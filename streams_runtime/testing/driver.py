"""TopologyTestDriver: runs a Topology in-process, one record at a time, with no broker.

Behaves like Kafka Streams' TopologyTestDriver: every non-global node runs in ONE task
(``0_0``, partition 0 of every topic); global stores are updated by a separate global task.
Piping a record into an input topic runs this protocol before returning:

  1. enqueue the record in the task (offsets count up per topic from 0);
  2. capture what the topology produced so far; records produced to a topic the task reads
     (repartition topics) are enqueued again, records to a global topic update the global store;
  3. while the task has a processable record: process it, punctuate on stream time, commit
     (flushing the record caches, so cached KTable updates are emitted), capture (step 2).

``advance_wall_clock_time`` fires due wall-clock punctuations, commits, then runs step 3.
Every produced record stays readable through ``create_output_topic`` (sink, repartition,
changelog and dead-letter topics alike).
"""

from __future__ import annotations

import collections
import logging
import pathlib
import shutil
import tempfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from streams_runtime.config import StreamsConfig, as_config
from streams_runtime.errors import StreamsError
from streams_runtime.processor.api import Headers
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.partition_group import RawRecord
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.task_id import GLOBAL_TASK_ID, TaskId
from streams_runtime.testing.stores import KeyValueStoreFacade, is_timestamped
from streams_runtime.testing.topics import TestInputTopic, TestOutputTopic

if TYPE_CHECKING:
    from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
    from streams_runtime.processor.topology import Topology
    from streams_runtime.serdes import Serde
    from streams_runtime.state.internals.record_cache import ThreadCache

log = logging.getLogger("streams_runtime.testing")

DEFAULT_APPLICATION_ID = "topology-test-driver"


class ProducedRecord(NamedTuple):
    topic: str
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp: int
    partition: int | None


class _CapturingCollector:
    """The driver's RecordCollector: keeps every sent record until the driver captures it."""

    eos_enabled = False  # no transactions: a record is captured when sent

    def __init__(self) -> None:
        self.history: list[ProducedRecord] = []

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        timestamp: int,
        partition: int | None,
    ) -> None:
        self.history.append(ProducedRecord(topic, key, value, headers, timestamp, partition))

    def drain(self) -> list[ProducedRecord]:
        out, self.history = self.history, []
        return out


class _MockTime:
    def __init__(self, start_ms: int) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms


class TopologyTestDriver:
    """See the module docstring. Use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        topology: Topology,
        config: StreamsConfig | Mapping[str, Any] | None = None,
        initial_wall_clock_time_ms: int = 0,
    ) -> None:
        builder = topology.internal_builder
        app_id = getattr(topology, "application_id", None) or DEFAULT_APPLICATION_ID
        self.config = as_config(config, application_id=app_id)
        self.application_id = self.config.required_application_id()
        builder.validate()
        given = config.originals() if isinstance(config, StreamsConfig) else dict(config or {})
        if "state_dir" in given or "state.dir" in given:
            self._state_root, self._owns_state = pathlib.Path(self.config.state_dir), False
        else:
            self._state_root, self._owns_state = pathlib.Path(tempfile.mkdtemp(prefix="streams-ttd-")), True
        self._time = _MockTime(initial_wall_clock_time_ms)
        self._collector = _CapturingCollector()
        self.metrics = StreamsMetrics()
        self._cache = self._make_cache(self.config.statestore_cache_max_bytes)
        self._outputs: dict[str, collections.deque[ProducedRecord]] = {}
        self._produced_topics: set[str] = set()
        self._offsets: dict[str, int] = collections.defaultdict(int)
        self._builder = builder
        decorate = self._decorator(builder)
        store_builders = {name: entry.builder for name, entry in builder.stores.items()}
        self.global_task: StreamTask | None = None
        self.task: StreamTask | None = None
        global_nodes: list[str] = []
        task_nodes: list[str] = []
        for names in builder.node_groups().values():
            (global_nodes if builder.is_global_group(names) else task_nodes).extend(names)
        if global_nodes:
            gtopo = build_processor_topology(builder, global_nodes, decorate)
            gtopo.store_names = [n for n, e in builder.stores.items() if e.is_global]
            self.global_task = StreamTask(
                GLOBAL_TASK_ID,
                gtopo,
                store_builders,
                self.config,
                self._collector,
                self.metrics,
                None,
                self._time,
                self._task_dir("global"),
            )
            self.global_task.initialize(input_partition=0)
            self.global_task.complete_restoration()
        if task_nodes:
            topo = build_processor_topology(builder, task_nodes, decorate)
            globals_ = self.global_task.stores if self.global_task else {}
            self.task = StreamTask(
                TaskId(0, 0),
                topo,
                store_builders,
                self.config,
                self._collector,
                self.metrics,
                self._cache,
                self._time,
                self._task_dir("0_0"),
                globals_,
            )
            self.task.initialize()
            self.task.complete_restoration()
        self._task_topics = set(self.task.topology.sources_by_topic) if self.task else set()
        self._global_topics = set(self.global_task.topology.sources_by_topic) if self.global_task else set()
        self._sink_topics = self.task.topology.sink_topics() if self.task else set()
        self._closed = False
        self._complete_all_processable_work()

    def _decorator(self, builder: InternalTopologyBuilder) -> Callable[[str], str]:
        app_id = self.application_id
        internal = builder.internal_topics
        return lambda topic: f"{app_id}-{topic}" if topic in internal else topic

    @staticmethod
    def _make_cache(max_bytes: int) -> ThreadCache | None:
        if max_bytes <= 0:
            return None
        from streams_runtime.state.internals.record_cache import ThreadCache

        return ThreadCache(max_bytes)

    def _task_dir(self, task: str) -> pathlib.Path:
        path = self._state_root / self.application_id / task
        path.mkdir(parents=True, exist_ok=True)
        return path

    # ------------------------------------------------------------------ topics
    def create_input_topic(
        self,
        name: str,
        key_serde: Serde,
        value_serde: Serde,
        *,
        start_timestamp_ms: int | None = None,
        auto_advance_ms: int = 0,
    ) -> TestInputTopic:
        return TestInputTopic(self, name, key_serde, value_serde, start_timestamp_ms, auto_advance_ms)

    def create_output_topic(self, name: str, key_serde: Serde, value_serde: Serde) -> TestOutputTopic:
        return TestOutputTopic(self, name, key_serde, value_serde)

    def output_queue(self, topic: str) -> collections.deque[ProducedRecord]:
        queue = self._outputs.get(topic)
        if queue is None:
            if topic not in self._sink_topics:
                log.warning(
                    "Unrecognized topic: %s; it is no sink topic of the topology and nothing was "
                    "produced to it yet",
                    topic,
                )
            queue = self._outputs[topic] = collections.deque()
        return queue

    def produced_topic_names(self) -> set[str]:
        """Every topic the topology has written to (sinks, repartition, changelog, dead-letter)."""
        return set(self._produced_topics)

    # ------------------------------------------------------------------ piping (steps 1-3)
    def pipe_raw(
        self, topic: str, key: bytes | None, value: bytes | None, timestamp: int, headers: Headers = ()
    ) -> None:
        """Pipe serialized bytes into ``topic`` (what TestInputTopic calls)."""
        self._check_open()
        self._maybe_read_pattern_topic(topic)
        if topic not in self._task_topics and topic not in self._global_topics:
            raise StreamsError(f"unknown topic: {topic}")
        if topic in self._task_topics:
            self._enqueue(self._raw(topic, key, value, timestamp, headers))  # Step 1
            self._complete_all_processable_work()
        if topic in self._global_topics:
            self._process_global(self._raw(topic, key, value, timestamp, headers))

    def _maybe_read_pattern_topic(self, topic: str) -> None:
        """A topic no source reads by name joins the task when a source pattern matches it."""
        if topic in self._task_topics or topic in self._global_topics or self.task is None:
            return
        if self.task.add_pattern_topic(topic, 0):
            self._task_topics.add(topic)

    def _raw(
        self, topic: str, key: bytes | None, value: bytes | None, timestamp: int, headers: Headers
    ) -> RawRecord:
        """The next record of ``topic`` (partition 0, the topic's next offset)."""
        offset = self._offsets[topic]
        self._offsets[topic] = offset + 1
        return RawRecord(topic, 0, offset, timestamp, key, value, tuple(headers))

    def _enqueue(self, record: RawRecord) -> None:
        task = self.task
        assert task is not None, "a topic of the task's sources implies the task"
        task.add_record(record)

    def _process_global(self, record: RawRecord) -> None:
        gtask = self.global_task
        assert gtask is not None, "a global topic implies the global task"
        gtask.add_record(record)
        while gtask.process():
            pass
        gtask.commit()

    def _capture(self) -> None:
        """Step 2."""
        for produced in self._collector.drain():
            topic = produced.topic
            self._produced_topics.add(topic)
            self._outputs.setdefault(topic, collections.deque()).append(produced)
            self._maybe_read_pattern_topic(topic)
            if topic in self._task_topics:
                self._enqueue(
                    self._raw(topic, produced.key, produced.value, produced.timestamp, produced.headers)
                )
            if topic in self._global_topics:
                self._process_global(
                    self._raw(topic, produced.key, produced.value, produced.timestamp, produced.headers)
                )

    def _complete_all_processable_work(self) -> None:
        """Step 3."""
        self._capture()
        task = self.task
        if task is None:
            return
        while task.process():
            task.maybe_punctuate_stream_time()
            task.commit()
            self._capture()

    # ------------------------------------------------------------------ time
    def advance_wall_clock_time(self, advance_ms: int) -> None:
        """Advance the mocked wall clock; fires due WALL_CLOCK_TIME punctuations."""
        self._check_open()
        if advance_ms < 0:
            raise ValueError("advance_ms must not be negative")
        self._time.now_ms += advance_ms
        if self.task is not None:
            self.task.maybe_punctuate_system_time()
            self.task.commit()
        self._complete_all_processable_work()

    @property
    def wall_clock_time_ms(self) -> int:
        return self._time.now_ms

    # ------------------------------------------------------------------ stores
    def get_all_state_stores(self) -> dict[str, Any]:
        stores: dict[str, Any] = {}
        for task in (self.global_task, self.task):
            if task is not None:
                stores.update(task.stores)
        return stores

    def get_state_store(self, name: str) -> Any:
        """The store named ``name`` (what processors see), or None."""
        return self.get_all_state_stores().get(name)

    def get_key_value_store(self, name: str) -> Any:
        """A key-value store; a timestamped store is returned behind a plain-value facade."""
        store = self.get_state_store(name)
        if store is None or not callable(getattr(store, "put_if_absent", None)):
            return None
        return KeyValueStoreFacade(store) if is_timestamped(store) else store

    def get_timestamped_key_value_store(self, name: str) -> Any:
        store = self.get_state_store(name)
        return store if store is not None and is_timestamped(store) else None

    def get_window_store(self, name: str) -> Any:
        """A window store; a timestamped one is returned behind a plain-value facade."""
        from streams_runtime.testing.window_stores import WindowStoreFacade, is_window_store

        store = self.get_state_store(name)
        if store is None or not is_window_store(store):
            return None
        return WindowStoreFacade(store) if is_timestamped(store) else store

    def get_timestamped_window_store(self, name: str) -> Any:
        from streams_runtime.testing.window_stores import is_window_store

        store = self.get_state_store(name)
        return store if store is not None and is_window_store(store) and is_timestamped(store) else None

    def get_session_store(self, name: str) -> Any:
        from streams_runtime.testing.window_stores import is_session_store

        store = self.get_state_store(name)
        return store if store is not None and is_session_store(store) else None

    # ------------------------------------------------------------------ lifecycle
    def _check_open(self) -> None:
        if self._closed:
            raise StreamsError("the TopologyTestDriver is closed")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.task is not None:
                self.task.commit()
                self._capture()
                self.task.close()
            if self.global_task is not None:
                self.global_task.close()
        finally:
            if self._owns_state:
                shutil.rmtree(self._state_root, ignore_errors=True)

    def __enter__(self) -> TopologyTestDriver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
