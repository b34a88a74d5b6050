"""streams_runtime: the Kafka Streams architecture in Python.

The public surface; import from here::

    from streams_runtime import StreamsBuilder, Serdes, Materialized, TopologyTestDriver
"""

from streams_runtime import errors
from streams_runtime.config import StreamsConfig
from streams_runtime.errors import (
    DeserializationFailedError,
    InvalidStateStoreError,
    NoSuchElementError,
    SerializationError,
    StreamsConfigError,
    StreamsError,
    StreamsProcessingError,
    TopologyError,
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
from streams_runtime.processor import (
    Cancellable,
    Processor,
    ProcessorContext,
    PunctuationType,
    Record,
    RecordMetadata,
    TaskId,
    Topology,
    TopologyDescription,
)
from streams_runtime.serdes import Serde, Serdes
from streams_runtime.state import KeyValue, Stores, ValueAndTimestamp
from streams_runtime.testing import TestInputTopic, TestOutputTopic, TestRecord, TopologyTestDriver

# --- issue 4: windows, joins, suppression ---
from streams_runtime.kstream.join_options import Joined, StreamJoined
from streams_runtime.kstream.suppressed import BufferConfig, Suppressed
from streams_runtime.kstream.windowed_streams import SessionWindowedKStream, TimeWindowedKStream
from streams_runtime.kstream.windows import JoinWindows, SessionWindows, SlidingWindows, TimeWindows
from streams_runtime.state import (
    ReadOnlySessionStore,
    ReadOnlyWindowStore,
    SessionStore,
    TimestampedWindowStore,
    WindowStore,
)
from streams_runtime.windowed import SessionWindow, TimeWindow, Window, Windowed, WindowedSerdes

__all__ = [
    "Branched",
    "BranchedKStream",
    "Cancellable",
    "Consumed",
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
    # issue 4
    "BufferConfig",
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
]
