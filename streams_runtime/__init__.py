"""streams_runtime: the Kafka Streams architecture in Python.

The public surface; import from here::

    from streams_runtime import StreamsBuilder, Serdes, Materialized, TopologyTestDriver
"""

from typing import Any

from streams_runtime import errors
from streams_runtime.config import StreamsConfig
from streams_runtime.errors import (
    ApplicationShutdownRequestedError,
    DeserializationFailedError,
    InvalidStateStoreError,
    InvalidStateStorePartitionError,
    NoSuchElementError,
    SerializationError,
    StateStoreMigratedError,
    StreamsConfigError,
    StreamsError,
    StreamsNotStartedError,
    StreamsProcessingError,
    TopologyError,
    UnknownStateStoreError,
)
from streams_runtime.kstream import (
    Branched,
    BranchedKStream,
    Consumed,
    GlobalKTable,
    Grouped,
    KGroupedStream,
    KGroupedTable,
    KStream,
    KTable,
    Materialized,
    Produced,
    Repartitioned,
    StreamsBuilder,
)

# --- windows, joins, suppression ---
from streams_runtime.kstream.cogrouped import (
    CogroupedKStream,
    SessionWindowedCogroupedKStream,
    TimeWindowedCogroupedKStream,
)
from streams_runtime.kstream.emit_strategy import EmitStrategy
from streams_runtime.kstream.join_options import Joined, StreamJoined
from streams_runtime.kstream.printed import Printed
from streams_runtime.kstream.suppressed import BufferConfig, Suppressed
from streams_runtime.kstream.table_joined import TableJoined
from streams_runtime.kstream.windowed_streams import SessionWindowedKStream, TimeWindowedKStream
from streams_runtime.kstream.windows import JoinWindows, SessionWindows, SlidingWindows, TimeWindows
from streams_runtime.processor import (
    Cancellable,
    ContextualFixedKeyProcessor,
    FixedKeyProcessor,
    FixedKeyProcessorContext,
    FixedKeyRecord,
    Processor,
    ProcessorContext,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
    Topology,
    TopologyDescription,
)

# --- state restore (no client library needed) ---
from streams_runtime.processor.restore_listener import StateRestoreListener

# --- interactive queries (no client library needed) ---
from streams_runtime.query import HostInfo, KeyQueryMetadata, LagInfo, StreamsMetadata
from streams_runtime.serdes import Serde, Serdes
from streams_runtime.state import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    KeyValue,
    ReadOnlySessionStore,
    ReadOnlyWindowStore,
    SessionStore,
    Stores,
    TimestampedWindowStore,
    ValueAndTimestamp,
    VersionedKeyValueStore,
    VersionedRecord,
    WindowStore,
)
from streams_runtime.testing import TestInputTopic, TestOutputTopic, TestRecord, TopologyTestDriver
from streams_runtime.windowed import SessionWindow, TimeWindow, Window, Windowed, WindowedSerdes

__all__ = [
    "PUT_RETURN_CODE_NOT_PUT",
    "PUT_RETURN_CODE_VALID_TO_UNDEFINED",
    "VersionedKeyValueStore",
    "VersionedRecord",
    "Branched",
    "BranchedKStream",
    "Cancellable",
    "Consumed",
    "ApplicationShutdownRequestedError",
    "DeserializationFailedError",
    "InvalidStateStoreError",
    "NoSuchElementError",
    "SerializationError",
    "StreamsConfigError",
    "StreamsError",
    "StreamsProcessingError",
    "TopologyError",
    "GlobalKTable",
    "Grouped",
    "KGroupedStream",
    "KGroupedTable",
    "KStream",
    "KTable",
    "KeyValue",
    "Materialized",
    "Processor",
    "ProcessorContext",
    "Produced",
    "PunctuationType",
    "Record",
    "RecordMetadata",
    "Repartitioned",
    "Serde",
    "Serdes",
    "Stores",
    "StreamsBuilder",
    "TableJoined",
    "StreamsConfig",
    "TaskId",
    "TestInputTopic",
    "TestOutputTopic",
    "TestRecord",
    "Topology",
    "TopologyDescription",
    "TopologyTestDriver",
    "ValueAndTimestamp",
    "errors",
    # windows, joins, suppression
    "BufferConfig",
    "ContextualFixedKeyProcessor",
    "FixedKeyProcessor",
    "FixedKeyProcessorContext",
    "FixedKeyRecord",
    "Printed",
    "CogroupedKStream",
    "SessionWindowedCogroupedKStream",
    "TimeWindowedCogroupedKStream",
    "EmitStrategy",
    "JoinWindows",
    "Joined",
    "ReadOnlySessionStore",
    "ReadOnlyWindowStore",
    "SessionStore",
    "SessionWindow",
    "SessionWindowedKStream",
    "SessionWindows",
    "SlidingWindows",
    "StreamJoined",
    "Suppressed",
    "TimeWindow",
    "TimeWindowedKStream",
    "TimeWindows",
    "TimestampedWindowStore",
    "Window",
    "WindowStore",
    "Windowed",
    "WindowedSerdes",
    # the runtime (imported lazily: the test driver needs no client library)
    "DefaultKafkaClientSupplier",
    "KafkaClientSupplier",
    "KafkaStreams",
    "KafkaStreamsState",
    "StreamThreadExceptionResponse",
    "TaskMetadata",
    "ThreadMetadata",
    "StateRestoreListener",
    # interactive queries
    "HostInfo",
    "InvalidStateStorePartitionError",
    "KeyQueryMetadata",
    "LagInfo",
    "StateStoreMigratedError",
    "StreamsMetadata",
    "StreamsNotStartedError",
    "UnknownStateStoreError",
]

_RUNTIME_NAMES = {
    "KafkaStreams": "KafkaStreams",
    "KafkaStreamsState": "State",
    "StreamThreadExceptionResponse": "StreamThreadExceptionResponse",
    "TaskMetadata": "TaskMetadata",
    "ThreadMetadata": "ThreadMetadata",
}


def __getattr__(name: str) -> Any:
    """Lazy import of the runtime's public names (``from streams_runtime import KafkaStreams``)."""
    if name in _RUNTIME_NAMES:
        from streams_runtime import kafka_streams

        return getattr(kafka_streams, _RUNTIME_NAMES[name])
    if name == "KafkaClientSupplier":
        from streams_runtime.kafka import client_supplier

        return client_supplier.KafkaClientSupplier
    if name == "DefaultKafkaClientSupplier":
        from streams_runtime.processor.internals import default_client_supplier

        return default_client_supplier.DefaultKafkaClientSupplier
    raise AttributeError(f"module 'streams_runtime' has no attribute {name!r}")
