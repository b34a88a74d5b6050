"""The public Processor API: Topology, Processor, ProcessorContext, Record, PunctuationType, ..."""

from streams_runtime.processor.api import (
    Cancellable,
    FixedKeyRecord,
    Processor,
    ProcessorContext,
    PunctuationType,
    Record,
    RecordMetadata,
)
from streams_runtime.processor.description import TopologyDescription
from streams_runtime.processor.fixed_key import (
    ContextualFixedKeyProcessor,
    FixedKeyProcessor,
    FixedKeyProcessorContext,
)
from streams_runtime.processor.task_id import TaskId
from streams_runtime.processor.timestamps import ConsumerRecord
from streams_runtime.processor.topology import Topology

__all__ = [
    "Cancellable",
    "ConsumerRecord",
    "ContextualFixedKeyProcessor",
    "FixedKeyProcessor",
    "FixedKeyProcessorContext",
    "FixedKeyRecord",
    "Processor",
    "ProcessorContext",
    "PunctuationType",
    "Record",
    "RecordMetadata",
    "TaskId",
    "Topology",
    "TopologyDescription",
]
