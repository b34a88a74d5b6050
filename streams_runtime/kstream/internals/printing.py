"""The processor behind ``KStream.print`` (Kafka Streams' KStreamPrint with its PrintForeachAction).

Writes ``[label]: <mapper(key, value)>`` and a newline per record and flushes, so a print to
standard output shows up at once; ``close`` flushes a file (several tasks may share it). Forwards
nothing: ``print`` is a terminal operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams_runtime.kstream.internals.internal_processor import (
    InternalProcessor,
    ProcessorContext,
    internal_context,
)
from streams_runtime.processor.api import Record

if TYPE_CHECKING:
    from collections.abc import Callable

    from streams_runtime.kstream.printed import Printed


class KStreamPrint(InternalProcessor):
    def __init__(self, printed: Printed, label: str) -> None:
        self.printed = printed
        self.label = label

    def init(self, processor_context: ProcessorContext) -> None:
        context = internal_context(processor_context)
        self.context = context

    def process(self, record: Record) -> None:
        out = self.printed.output()
        out.write(f"[{self.label}]: {self.printed.mapper(record.key, record.value)}\n")
        out.flush()

    def close(self) -> None:
        self.printed.output().flush()


def print_supplier(printed: Printed, stream_name: str) -> Callable[[], KStreamPrint]:
    label = printed.label if printed.label is not None else stream_name

    def make() -> KStreamPrint:
        return KStreamPrint(printed, label)

    return make
