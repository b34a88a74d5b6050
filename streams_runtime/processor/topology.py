"""Topology: the public, pure description of a processing graph (Processor API and DSL output).

A thin facade over :class:`InternalTopologyBuilder`; building one starts nothing. Every ``add_*``
returns the topology so calls chain. Errors are :class:`TopologyError` naming the node or store.

    topology = (Topology()
                .add_source("in", "input-topic")
                .add_processor("upper", Upper, "in")
                .add_sink("out", "output-topic", "upper"))
    print(topology.describe())
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from streams_runtime.config import StreamsConfig
from streams_runtime.processor.description import TopologyDescription
from streams_runtime.processor.internals import topology_info
from streams_runtime.processor.internals.internal_topics import InternalTopicConfig
from streams_runtime.processor.internals.topology_builder import InternalTopologyBuilder
from streams_runtime.processor.internals.topology_info import SubtopologyInfo


class Topology:
    """Sources, processors, sinks and stores; see the module docstring."""

    def __init__(
        self,
        config: StreamsConfig | Mapping[str, Any] | None = None,
        *,
        _builder: InternalTopologyBuilder | None = None,
    ) -> None:
        app_id = None
        if config is not None:
            app_id = config.get("application_id") if isinstance(config, Mapping) else None
        self.config = config
        self.internal_builder = _builder or InternalTopologyBuilder(app_id)
        if app_id and not self.internal_builder.application_id:
            self.internal_builder.application_id = app_id

    @property
    def application_id(self) -> str | None:
        return self.internal_builder.application_id

    # ------------------------------------------------------------------ building
    def add_source(
        self,
        name: str,
        *topics: str,
        key_serde: object = None,
        value_serde: object = None,
        timestamp_extractor: object = None,
        offset_reset: str | None = None,
    ) -> Topology:
        """A source node reading ``topics`` (deserialized with the serdes or the config defaults), or
        every topic matching one compiled pattern: ``add_source("in", re.compile("orders-.*"))``."""
        pattern = topics[0] if len(topics) == 1 and isinstance(topics[0], re.Pattern) else None
        self.internal_builder.add_source(
            name,
            [] if pattern is not None else topics,
            pattern=pattern,
            key_serde=key_serde,
            value_serde=value_serde,
            timestamp_extractor=timestamp_extractor,
            offset_reset=offset_reset,
        )
        return self

    def add_processor(self, name: str, supplier: Callable[[], Any], *parent_names: str) -> Topology:
        """A processor made by ``supplier()`` (a Processor class works), child of ``parent_names``.

        If the supplier has ``stores()`` returning store builders, they are added and connected.
        """
        self.internal_builder.add_processor(name, supplier, parent_names)
        provided = getattr(supplier, "stores", None)
        if callable(provided) and not isinstance(supplier, type):
            for store_builder in provided() or ():
                self.internal_builder.add_state_store(store_builder, [name])
        return self

    def add_sink(
        self,
        name: str,
        topic: str | Callable[..., str],
        *parent_names: str,
        key_serde: object = None,
        value_serde: object = None,
        partitioner: Callable[..., int | None] | None = None,
    ) -> Topology:
        """A sink writing to ``topic`` or to ``topic(key, value, record_context)`` per record."""
        self.internal_builder.add_sink(
            name, topic, parent_names, key_serde=key_serde, value_serde=value_serde, partitioner=partitioner
        )
        return self

    def add_state_store(self, store_builder: object, *processor_names: str) -> Topology:
        """Add a store (from ``Stores``) and connect it to ``processor_names``."""
        self.internal_builder.add_state_store(store_builder, processor_names)
        return self

    def connect_processor_and_state_stores(self, processor_name: str, *store_names: str) -> Topology:
        self.internal_builder.connect_processor_and_state_stores(processor_name, store_names)
        return self

    def add_global_store(
        self,
        store_builder: object,
        source_name: str,
        topic: str,
        processor_name: str,
        supplier: Callable[[], Any],
        *,
        key_serde: object = None,
        value_serde: object = None,
        timestamp_extractor: object = None,
    ) -> Topology:
        """A global store fed from ``topic`` by the processor ``supplier()`` on every instance.

        The store builder must have logging disabled (the topic itself is the changelog).
        """
        disable = getattr(store_builder, "with_logging_disabled", None)
        if callable(disable):
            disable()
        self.internal_builder.add_global_store(
            store_builder,
            source_name,
            topic,
            processor_name,
            supplier,
            key_serde=key_serde,
            value_serde=value_serde,
            timestamp_extractor=timestamp_extractor,
        )
        return self

    # ------------------------------------------------------------------ reporting
    def describe(self) -> TopologyDescription:
        """The Kafka Streams description; ``print(topology.describe())``."""
        return topology_info.describe(
            self.internal_builder, decorate_internal=self.internal_builder.application_id is not None
        )

    def internal_topics(self) -> dict[str, InternalTopicConfig]:
        """Repartition and changelog topics (real names) with their configs (``.configs()``)."""
        return topology_info.internal_topics(self.internal_builder)

    def internal_topic_configs(self) -> dict[str, dict[str, str]]:
        return {name: cfg.configs() for name, cfg in self.internal_topics().items()}

    def sub_topologies(self) -> list[SubtopologyInfo]:
        """Per sub-topology: source/sink topics, repartition topics, stores, changelogs, co-partitioning."""
        return topology_info.sub_topologies(self.internal_builder)

    def task_counts(self, partitions: Mapping[str, int]) -> dict[int, int]:
        """Tasks per sub-topology for the partition counts of the input topics."""
        return topology_info.task_counts(self.internal_builder, partitions)

    def source_topics(self) -> list[str]:
        return [t for info in self.sub_topologies() for t in info.source_topics]

    def __str__(self) -> str:
        return str(self.describe())
