"""Wiring of a foreign-key table-table join: ``KTable.join(other, foreign_key_extractor, joiner)``.

Nodes, names and internal topics as Kafka Streams creates them (one index burned per step, in
this order): the subscription registration topic ``KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-
<n>-topic``, its send processor, ``KTABLE-SINK-`` and ``KTABLE-SOURCE-``, the subscription store
``KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-<n>``, the receive, subscription-join and
foreign-table-join processors (``KTABLE-FK-JOIN-SUBSCRIPTION-PROCESSOR-``), the response topic
``KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-<n>-topic``, its sink and source, the response resolver
and the ``KTABLE-FK-JOIN-OUTPUT-`` table processor (whose store name burns one more index).
With ``TableJoined.as_(name)`` the names are ``<name>-subscription-registration-topic``, ...

The subscription source is co-partitioned with the foreign table's sources, the response
source with the left table's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streams_runtime.kstream.internals import fk_join_processors as fp
from streams_runtime.kstream.internals import table_joins as tj
from streams_runtime.kstream.internals import table_processors as tp
from streams_runtime.kstream.internals.dsl_types import DslTable, T
from streams_runtime.kstream.internals.fk_join_wire import (
    CombinedKeySchema,
    SubscriptionResponseWrapperSerde,
    SubscriptionWrapperSerde,
)
from streams_runtime.kstream.internals.functions import check_callable, positional_arity
from streams_runtime.kstream.internals.graph import (
    ProcessorGraphNode,
    StreamSinkNode,
    StreamSourceNode,
)
from streams_runtime.kstream.internals.join_builders import with_key_joiner
from streams_runtime.kstream.internals.stateful_nodes import StatefulProcessorNode
from streams_runtime.kstream.options import Consumed, Materialized, Produced
from streams_runtime.kstream.table_joined import TableJoined
from streams_runtime.processor.internals.internal_topics import InternalTopicConfig
from streams_runtime.serdes import Serdes
from streams_runtime.state import Stores

if TYPE_CHECKING:  # the builder module imports the graph nodes
    from streams_runtime.kstream.internals.build_context import BuildContext
    from streams_runtime.kstream.internals.graph import GraphNode
    from streams_runtime.kstream.options import Partitioner
    from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
    from streams_runtime.serdes import Serde
    from streams_runtime.state.internals.builders import KeyValueStoreBuilder

FK_JOIN = "KTABLE-FK-JOIN-"
STATE_STORE = FK_JOIN + "SUBSCRIPTION-STATE-STORE-"
REGISTRATION = FK_JOIN + "SUBSCRIPTION-REGISTRATION-"
RESPONSE = FK_JOIN + "SUBSCRIPTION-RESPONSE-"
PROCESSOR = FK_JOIN + "SUBSCRIPTION-PROCESSOR-"
RESOLVER = FK_JOIN + "SUBSCRIPTION-RESPONSE-RESOLVER-PROCESSOR-"
OUTPUT = FK_JOIN + "OUTPUT-"
TOPIC_SUFFIX = "-topic"


class _InternalTopicSinkNode(StreamSinkNode):
    """A sink to an internal (repartition-like) topic the runtime creates."""

    topic: str  # always a topic name (never a topic chooser)

    def write(self, builder: InternalTopologyBuilder, ctx: BuildContext) -> None:
        builder.add_internal_topic(InternalTopicConfig(self.topic, "repartition"))
        super().write(builder, ctx)


def _parse(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[TableJoined, Materialized | None]:
    table_joined = kwargs.pop("table_joined", None)
    materialized = kwargs.pop("materialized", None)
    for arg in args:
        if isinstance(arg, TableJoined):
            table_joined = arg
        elif isinstance(arg, Materialized):
            materialized = arg
        else:
            raise TypeError(
                f"unexpected argument {arg!r} for a foreign-key join (TableJoined or Materialized)"
            )
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"unexpected keyword arguments: {sorted(kwargs)}")
    table_joined = table_joined or TableJoined()
    if name is not None:
        table_joined = table_joined.with_name(name)
    return table_joined, materialized


def foreign_key_join(
    this: T,
    other: DslTable,
    extractor: Callable[..., Any],
    joiner: Callable[..., Any],
    left_join: bool,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
) -> T:
    check_callable(extractor, "foreign key extractor")
    fk_of: Callable[[Any, Any], Any] = extractor
    if positional_arity(extractor) != 2:  # extractor(value); Kafka 4's (key, value) form otherwise
        value_only = extractor
        fk_of = lambda key, value: value_only(value)  # noqa: E731
    joiner3 = with_key_joiner(joiner)
    table_joined, materialized = _parse(args, dict(kwargs or {}))
    internal = this.internals.builder
    name = table_joined.name

    def named(suffix: str, prefix: str) -> str:
        return internal.suffix_or_generate(name, suffix, prefix)

    def through_topic(
        parents: GraphNode | list[GraphNode],
        topic: str,
        suffix: str,
        key_serde: Serde | None,
        serde: Serde,
        partitioner: Partitioner | None,
    ) -> StreamSourceNode:
        """``parents`` -> sink -> the internal ``topic`` -> source (``<name><suffix>-sink``/``-source``)."""
        sink = _InternalTopicSinkNode(
            named(suffix + "-sink", "KTABLE-SINK-"), topic, Produced(key_serde, serde, partitioner)
        )
        internal.add_graph_node(parents, sink)
        topic_source = StreamSourceNode(
            named(suffix + "-source", "KTABLE-SOURCE-"), [topic], Consumed(key_serde, serde)
        )
        internal.add_graph_node(sink, topic_source)
        return topic_source

    other.enable_sending_old_values(True)
    this.enable_sending_old_values(True)
    registration_topic = named("-subscription-registration", REGISTRATION) + TOPIC_SUFFIX
    key_schema = CombinedKeySchema(other.key_serde, this.key_serde)
    subscription_serde = SubscriptionWrapperSerde(this.key_serde)
    response_serde = SubscriptionResponseWrapperSerde(other.value_serde)
    shared = fp.FkJoinShared(
        registration_topic, key_schema, subscription_serde, response_serde, this.value_serde
    )

    send = ProcessorGraphNode(
        named("-subscription-registration-processor", REGISTRATION),
        lambda: fp.SubscriptionSend(shared, fk_of, left_join),
    )
    internal.add_graph_node(this.internals.node, send)
    other_partitioner = table_joined.other_partitioner
    source = through_topic(
        send,
        registration_topic,
        "-subscription-registration",
        other.key_serde,
        subscription_serde,
        None if other_partitioner is None else (lambda t, k, v, *_: other_partitioner(t, k, None)),
    )
    store_name = named("-subscription-store", STATE_STORE)

    def subscription_store(ctx: BuildContext) -> KeyValueStoreBuilder:
        config = ctx.config
        in_memory = (config.get("default_dsl_store") if config else None) == "in_memory"
        supplier = (
            Stores.in_memory_key_value_store(store_name)
            if in_memory
            else Stores.persistent_timestamped_key_value_store(store_name)
        )
        return Stores.timestamped_key_value_store_builder(supplier, Serdes.Bytes(), subscription_serde)

    receive = StatefulProcessorNode(
        named("-subscription-receive", PROCESSOR),
        lambda: fp.SubscriptionReceive(shared, store_name=store_name),
        store_factories=(subscription_store,),
    )
    receive.copartition_inputs = [other.internals.node, source]
    internal.add_graph_node(source, receive)
    foreign_getter = tj.value_getter_supplier(other.internals.supplier)
    subscription_join = StatefulProcessorNode(
        named("-subscription-join-foreign", PROCESSOR),
        lambda: fp.SubscriptionJoin(shared, getter_supplier=foreign_getter),
        store_names=lambda: tuple(foreign_getter.store_names),
    )
    internal.add_graph_node(receive, subscription_join)
    foreign_join = StatefulProcessorNode(
        named("-foreign-join-subscription", PROCESSOR),
        lambda: fp.ForeignTableJoin(shared, store_name=store_name),
        store_names=(store_name,),
    )
    internal.add_graph_node(other.internals.node, foreign_join)

    response_topic = named("-subscription-response", RESPONSE) + TOPIC_SUFFIX
    partitioner = table_joined.partitioner
    response_source = through_topic(
        [subscription_join, foreign_join],
        response_topic,
        "-subscription-response",
        this.key_serde,
        response_serde,
        fp.primary_partition_partitioner
        if partitioner is None
        else (lambda t, k, v, *_: partitioner(t, k, None)),
    )
    this_getter = tj.value_getter_supplier(this.internals.supplier)
    resolver = StatefulProcessorNode(
        named("-subscription-response-resolver", RESOLVER),
        lambda: fp.ResponseJoin(shared, this_getter, joiner3, left_join),
        store_names=lambda: tuple(this_getter.store_names),
    )
    resolver.copartition_inputs = [this.internals.node, response_source]
    internal.add_graph_node(response_source, resolver)

    result_name = named("-result", OUTPUT)
    mat = internal.materialize(materialized, OUTPUT, key_serde=this.key_serde)
    supplier = tp.KTableSourceSupplier(mat.store_name, mat.queryable_store_name)
    result = ProcessorGraphNode(result_name, supplier, materialized=mat, materialize_if=supplier.materialized)
    internal.add_graph_node(resolver, result)
    return type(this)(internal, result, mat.key_serde, mat.value_serde, supplier, mat.queryable_store_name)
