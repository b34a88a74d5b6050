"""The repartition step every key-changing DSL path shares: filter -> sink -> topic -> source.

Used by KStream (``repartition``, ``to_table``), grouped streams and tables, cogroups and joins;
it sits below all of them so none has to import another to repartition.
"""

from __future__ import annotations

import re
from typing import Any

from streams_runtime.kstream.internals import stream_processors as sp
from streams_runtime.kstream.internals.graph import RepartitionNode

FILTER_NAME = "KSTREAM-FILTER-"
SINK_NAME = "KSTREAM-SINK-"
SOURCE_NAME = "KSTREAM-SOURCE-"
REPARTITION_TOPIC_SUFFIX = "-repartition"


def create_repartitioned_source(
    internal: Any,
    prefix: str,
    key_serde: Any,
    value_serde: Any,
    *,
    partitioner: Any = None,
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
