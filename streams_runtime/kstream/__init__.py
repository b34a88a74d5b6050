"""The Streams DSL: StreamsBuilder, KStream, KTable, GlobalKTable, grouped streams/tables, options."""

from streams_runtime.kstream.branched import BranchedKStream
from streams_runtime.kstream.grouped import KGroupedStream, KGroupedTable
from streams_runtime.kstream.kstream import KStream
from streams_runtime.kstream.ktable import GlobalKTable, KTable
from streams_runtime.kstream.options import Branched, Consumed, Grouped, Materialized, Produced, Repartitioned
from streams_runtime.kstream.streams_builder import StreamsBuilder

__all__ = [
    "Branched",
    "BranchedKStream",
    "Consumed",
    "GlobalKTable",
    "Grouped",
    "KGroupedStream",
    "KGroupedTable",
    "KStream",
    "KTable",
    "Materialized",
    "Produced",
    "Repartitioned",
    "StreamsBuilder",
]
