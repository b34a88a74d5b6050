"""The repartition step every key-changing DSL path shares: filter -> sink -> topic -> source.

Used by KStream (``repartition``, ``to_table``), grouped streams and tables, cogroups and joins;
it sits below all of them so none has to import another to repartition.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from streams_runtime.kstream.internals import stream_processors as sp
from streams_runtime.kstream.internals.graph import GraphNode, RepartitionNode

if TYPE_CHECKING:
    from collections.abc import Callable

    from streams_runtime.kstream.internals.builder import InternalStreamsBuilder
    from streams_runtime.serdes import Serde

FILTER_NAME = "KSTREAM-FILTER-"
SINK_NAME = "KSTREAM-SINK-"
SOURCE_NAME = "KSTREAM-SOURCE-"
REPARTITION_TOPIC_SUFFIX = "-repartition"


def create_repartitioned_source(
    internal: InternalStreamsBuilder,
    prefix: str,
    key_serde: Serde | None,
    value_serde: Serde | None,
    *,
    partitioner: Callable[..., int | None] | None = None,
    number_of_partitions: int | None = None,
) -> RepartitionNode:
    """The repartition node of Kafka Streams' createRepartitionedSource (filter -> sink -> source).

    Always burns three indexes (sink, filter, source); generated names are used when the prefix
    is itself generated, ``<topic>-sink/-filter/-source`` otherwise.
    """
    topic = prefix if prefix.endswith(REPARTITION_TOPIC_SUFFIX) else prefix + REPARTITION_TOPIC_SUFFIX
    gen_sink = internal.new_processor_name(SINK_NAME)
    gen_filter = internal.new_processor_name(FILTER_NAME)
    gen_source = internal.new_processor_name(SOURCE_NAME)
    if re.fullmatch(r"KSTREAM.*-[0-9]{10}", prefix):
        sink, source, filter_name = gen_sink, gen_source, gen_filter
    else:
        sink, source, filter_name = topic + "-sink", topic + "-source", topic + "-filter"
    return RepartitionNode(
        source,
        sink,
        filter_name,
        topic,
        key_serde,
        value_serde,
        partitioner=partitioner,
        number_of_partitions=number_of_partitions,
        filter_supplier=sp.PassThrough,
    )


def _null_key_filter() -> sp.KStreamFilter:
    return sp.KStreamFilter(lambda key, value: key is not None, False)


def filter_null_keys_at_repartitions(nodes: list[GraphNode]) -> None:
    """Kafka Streams' rewrite of the repartition filters at build time: the filter before each
    repartition topic passes everything when built, and becomes a null-key filter unless a left
    or outer join (which passes null keys on) lies downstream. So a record with a null key does
    not cross a repartition topic (``repartition()``, ``to_table``, a re-keyed aggregation or
    inner join) but does reach a left or outer join."""
    relaxed: dict[int, bool] = {}

    def reaches_relaxed_join(node: GraphNode) -> bool:
        if id(node) not in relaxed:
            relaxed[id(node)] = any(
                child.null_key_relaxed_join or reaches_relaxed_join(child) for child in node.children
            )
        return relaxed[id(node)]

    for node in nodes:
        if isinstance(node, RepartitionNode) and node.filter_name is not None:
            node.filter_supplier = sp.PassThrough if reaches_relaxed_join(node) else _null_key_filter
