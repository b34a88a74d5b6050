"""Interactive queries: read-only views of local stores and where every key lives.

Users reach this through :class:`~streams_runtime.KafkaStreams` (``store``,
``query_metadata_for_key``, ``all_metadata_for_store``, ``all_local_store_partition_lags``); the
worker's HTTP API (:mod:`streams_runtime.server`) serves the same over HTTP.
"""

from streams_runtime.kafka.partitioner import murmur2, partition_for
from streams_runtime.query.metadata import HostInfo, KeyQueryMetadata, LagInfo, StreamsMetadata
from streams_runtime.query.views import ReadOnlyKeyValueView, ReadOnlySessionView, ReadOnlyWindowView

__all__ = [
    "HostInfo",
    "KeyQueryMetadata",
    "LagInfo",
    "ReadOnlyKeyValueView",
    "ReadOnlySessionView",
    "ReadOnlyWindowView",
    "StreamsMetadata",
    "murmur2",
    "partition_for",
]
