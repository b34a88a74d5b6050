"""ProcessorContextImpl: what processors and state stores of one task see of the runtime.

Created and owned by a StreamTask; implements the public ProcessorContext and the contract's
StateStoreContext. It tracks the node being executed and the record being processed (so that
``forward`` knows the children and stores know the record's timestamp and headers). Forwarding,
and the one rule for an exception a child raises (the task's processing exception handler
decides, at the node that raised, as in Kafka Streams' ProcessorNode), are its base
:class:`~.forwarders.RecordForwarding`'s.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from streams_runtime.errors import (
    InvalidStateStoreError,
    StreamsError,
)
from streams_runtime.processor.api import (
    Cancellable,
    Headers,
    ProcessorContext,
    PunctuationType,
    Record,
)
from streams_runtime.processor.internals.forwarders import Forward, RecordForwarding
from streams_runtime.processor.internals.handlers import ProcessingHandler
from streams_runtime.processor.internals.internal_topics import changelog_topic_name
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.nodes import ProcessorNode
from streams_runtime.processor.task_id import TaskId
from streams_runtime.state.interfaces import RecordContext as StoreRecordContext
from streams_runtime.state.interfaces import StateStore

if TYPE_CHECKING:
    from streams_runtime.config import StreamsConfig
    from streams_runtime.state.internals.record_cache import ThreadCache


class RecordContext(NamedTuple):
    """Topic, partition, offset, timestamp and headers of the record being processed."""

    topic: str | None
    partition: int
    offset: int
    timestamp: int
    headers: Headers


class TaskScheduling(Protocol):
    """What a context asks of the task it belongs to (a StreamTask, or a StandbyTask)."""

    @property
    def stream_time(self) -> int: ...

    def schedule(
        self,
        node: ProcessorNode,
        interval: int,
        kind: PunctuationType,
        punctuator: Callable[[int], None],
    ) -> Cancellable: ...

    def wall_clock_ms(self) -> int: ...

    def request_commit(self) -> None: ...


class RecordSender(Protocol):
    """The producer side of a task (its RecordCollector): where changelog records go."""

    def send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        timestamp: int,
        partition: int | None,
    ) -> None: ...


class TaskRecordCollector(RecordSender, Protocol):
    """A task's collector as the task sees it: where its records go, and whether they go in
    transactions (exactly-once: the checkpoint then waits for a clean close, see
    ``StreamTask.post_commit``)."""

    @property
    def eos_enabled(self) -> bool: ...


class StoreRegistrar(Protocol):
    """The task's ProcessorStateManager as the context sees it: it takes store registrations."""

    def bind_context(self, context: ProcessorContextImpl) -> None: ...

    def register(
        self, store: StateStore, restore_callback: Callable[..., None], changelog_topic: str | None
    ) -> None: ...


class InternalProcessorContext(ProcessorContext, Protocol):
    """What the runtime's own processors (the DSL's) use of their context beyond the public
    ProcessorContext: the node being executed, the record context, the partition and the
    task's metrics (Kafka Streams' InternalProcessorContext). ProcessorContextImpl implements it."""

    task_id: TaskId
    metrics: StreamsMetrics

    @property
    def partition(self) -> int: ...

    @property
    def current_node(self) -> ProcessorNode | None: ...

    def set_current_node(self, node: ProcessorNode | None) -> None: ...

    def record_context(self) -> RecordContext | None: ...

    def set_record_context(self, record_context: RecordContext | StoreRecordContext | None) -> None: ...


def internal_context(context: ProcessorContext) -> InternalProcessorContext:
    """The context the runtime gives a processor, seen with its internal members (the runtime
    always passes its own ProcessorContextImpl to the nodes it builds)."""
    return cast(InternalProcessorContext, context)


class ProcessorContextImpl(RecordForwarding, ProcessorContext):
    """One per task; see the module docstring."""

    def __init__(
        self,
        task: TaskScheduling,
        application_id: str,
        task_id: TaskId,
        config: StreamsConfig,
        state_dir: pathlib.Path | None,
        metrics: StreamsMetrics,
        cache: ThreadCache | None,
        collector: RecordSender | None,
        processing_handler: ProcessingHandler | None,
    ) -> None:
        self._task = task
        self.application_id = application_id
        self.task_id = task_id
        self.app_configs = config
        self.state_dir = state_dir
        self.metrics = metrics
        self._cache = cache
        self._collector = collector
        self._handler = processing_handler
        self._stores: dict[str, StateStore] = {}
        self._global_stores: dict[str, StateStore] = {}
        self.registered: dict[str, tuple[StateStore, Callable[..., None], str | None]] = {}
        self.state_manager: StoreRegistrar | None = None
        self._node: ProcessorNode | None = None
        self._record: Record | None = None
        self._topic: str | None = None
        self._partition = -1
        self._offset = -1
        # (record, RecordContext) of the last record_context() answer; reused while the record
        # (and so topic, partition and offset, which change only together with it) is the same
        # object with the same timestamp and headers.
        self._record_context_memo: tuple[Record, RecordContext] | None = None
        self._changelog_topics: dict[str, str] = {}
        #: changelog topic -> [records sent to it by this task since reset_changelog_counts()]
        self._changelog_counts: dict[str, list[int]] = {}
        self._forwarders: dict[str, Forward] = {}

    # ------------------------------------------------------------------ record metadata
    @property
    def topic(self) -> str | None:
        return self._topic

    @property
    def partition(self) -> int:
        return self._partition

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def timestamp(self) -> int:
        return self._record.timestamp if self._record is not None else -1

    @property
    def headers(self) -> Headers:
        return self._record.headers if self._record is not None else ()

    def record_context(self) -> RecordContext | None:
        record = self._record
        if record is None:
            return None
        memo = self._record_context_memo
        if memo is not None and memo[0] is record:
            context = memo[1]
            # Records are mutable: reuse only while timestamp and headers are unchanged.
            if context.timestamp == record.timestamp and context.headers is record.headers:
                return context
        context = RecordContext(self._topic, self._partition, self._offset, record.timestamp, record.headers)
        self._record_context_memo = (record, context)
        return context

    def set_record_context(self, record_context: RecordContext | StoreRecordContext | None) -> None:
        self._record_context_memo = None
        if record_context is None:
            self._topic, self._partition, self._offset, self._record = None, -1, -1, None
            return
        self._topic = record_context.topic
        self._partition = record_context.partition
        self._offset = record_context.offset
        headers = tuple(record_context.headers or ())
        record = self._record = Record(None, None, record_context.timestamp, headers)
        if isinstance(record_context, RecordContext) and type(record_context) is RecordContext:
            # record_context() would rebuild this very value (same topic, partition, offset,
            # timestamp and headers): answer with it (a cache flush sets one per entry, and the
            # forward of the entry asks for it again). The memo's checks still apply.
            self._record_context_memo = (record, record_context)

    @property
    def current_node(self) -> ProcessorNode | None:
        return self._node

    def set_current_node(self, node: ProcessorNode | None) -> None:
        self._node = node

    # ------------------------------------------------------------------ stores
    def add_store(self, store: StateStore, is_global: bool = False) -> None:
        (self._global_stores if is_global else self._stores)[store.name] = store

    def get_state_store(self, name: str) -> Any:
        store = self._stores.get(name)
        if store is not None:
            node = self._node
            if node is not None and name not in node.stores:
                raise InvalidStateStoreError(
                    f"processor {node.name} has no access to state store {name} as the store is not "
                    f"connected to the processor; connect it with add_state_store(builder, "
                    f"'{node.name}') or connect_processor_and_state_stores('{node.name}', '{name}')"
                )
            return store
        store = self._global_stores.get(name)
        if store is not None:
            return store
        raise InvalidStateStoreError(f"state store {name} does not exist in task {self.task_id}")

    def stores(self) -> dict[str, StateStore]:
        return dict(self._stores)

    # StateStoreContext ------------------------------------------------------------------
    def set_state_manager(self, state_manager: StoreRegistrar) -> None:
        """Route store registrations to the task's ProcessorStateManager (the live runtime).

        Without one (the TopologyTestDriver) registrations are only recorded in ``registered``.
        """
        self.state_manager = state_manager
        state_manager.bind_context(self)

    def register(
        self, store: StateStore, restore_callback: Callable[..., None], *, changelog_topic: str | None = None
    ) -> None:
        self.registered[store.name] = (store, restore_callback, changelog_topic)
        if self.state_manager is not None:
            self.state_manager.register(store, restore_callback, changelog_topic)

    def changelog_topic(self, store_name: str) -> str:
        return changelog_topic_name(self.application_id, store_name)

    def log_change(
        self,
        store_name: str,
        key: bytes,
        value: bytes | None,
        timestamp: int,
        headers: Iterable[tuple[str, bytes | None]] | None = None,
    ) -> None:
        if headers is None:
            record = self._record
            headers = record.headers if record is not None else ()
        if type(headers) is not tuple:
            headers = tuple(headers)
        topic = self._changelog_topics.get(store_name)
        if topic is None:
            topic = self._changelog_topics[store_name] = changelog_topic_name(self.application_id, store_name)
        collector = self._collector
        if collector is None:
            raise StreamsError(f"task {self.task_id} has no record collector to log store {store_name} to")
        collector.send(topic, key, value, headers, timestamp, self.task_id.partition)
        self._changelog_counts.setdefault(topic, [0])[0] += 1

    def change_logger(self, store_name: str) -> Callable[[bytes, bytes | None, int], None]:
        """``log_change(store_name, key, value, timestamp)`` with the record's headers, bound
        to the store's changelog topic and this task's partition (a change-logging layer binds
        it once, at init)."""
        topic = self._changelog_topics.get(store_name)
        if topic is None:
            topic = self._changelog_topics[store_name] = changelog_topic_name(self.application_id, store_name)
        partition = self.task_id.partition
        sent = self._changelog_counts.setdefault(topic, [0])

        def log(key: bytes, value: bytes | None, timestamp: int) -> None:
            collector = self._collector
            if collector is None:
                raise StreamsError(
                    f"task {self.task_id} has no record collector to log store {store_name} to"
                )
            record = self._record
            headers = record.headers if record is not None else ()
            if type(headers) is not tuple:
                headers = tuple(headers)
            collector.send(topic, key, value, headers, timestamp, partition)
            sent[0] += 1

        return log

    def changelog_counts(self) -> dict[str, int]:
        """Records this task sent to each changelog topic since :meth:`reset_changelog_counts`
        (the ones the producer then failed included)."""
        return {topic: sent[0] for topic, sent in self._changelog_counts.items() if sent[0]}

    def reset_changelog_counts(self) -> None:
        for sent in self._changelog_counts.values():
            sent[0] = 0

    def cache(self) -> ThreadCache | None:
        return self._cache

    # ------------------------------------------------------------------ time and scheduling
    def schedule(
        self, interval_ms: int, punctuation_type: PunctuationType, punctuator: Callable[[int], None]
    ) -> Cancellable:
        if isinstance(interval_ms, bool) or not isinstance(interval_ms, int) or interval_ms < 1:
            raise ValueError(
                f"the minimum supported scheduling interval is 1 millisecond, got {interval_ms!r}"
            )
        if not isinstance(punctuation_type, PunctuationType):
            raise ValueError(f"punctuation_type must be a PunctuationType, got {punctuation_type!r}")
        node = self._node
        if node is None:  # as Kafka Streams' StreamTask.schedule: a schedule belongs to a node
            raise StreamsError(
                "schedule() must be called by a processor (in init, process or a punctuation): "
                "no processor node is being executed"
            )
        return self._task.schedule(node, interval_ms, punctuation_type, punctuator)

    def current_stream_time_ms(self) -> int:
        return self._task.stream_time

    def current_system_time_ms(self) -> int:
        return self._task.wall_clock_ms()

    def commit(self) -> None:
        self._task.request_commit()
