"""Shared helpers for the scenario tests that replay Kafka Streams' own DSL tests.

Kafka Streams' tests observe a topology through ``MockApiProcessorSupplier``: a processor attached with
``KStream.process`` that records every (key, value, timestamp) reaching it. ``Capture`` plays that part
here, built only on our public Processor API. Expected results are written as ``(key, value, timestamp)``
tuples, the shape of Kafka Streams' ``KeyValueTimestamp``.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from streams_runtime import Processor, Serdes

KeyValueTimestamp = tuple[Any, Any, int]


class CapturingProcessor(Processor):
    """Appends each record it is given, as ``(key, value, timestamp)``, to a shared list."""

    def __init__(self, processed: list[KeyValueTimestamp]) -> None:
        self.processed = processed

    def init(self, context) -> None:
        self.context = context

    def process(self, record) -> None:
        self.processed.append((record.key, record.value, record.timestamp))

    def close(self) -> None:
        pass


class Capture:
    """A processor supplier that remembers what each processor it created has seen.

    Pass the object itself to ``KStream.process``; every call creates one processor. When one supplier
    is attached to several streams, ``processors`` holds one list per attachment, in the order the
    runtime created them (as ``capturedProcessors(n)`` does in Kafka Streams).
    """

    def __init__(self) -> None:
        self.processors: list[list[KeyValueTimestamp]] = []

    def __call__(self) -> CapturingProcessor:
        processed: list[KeyValueTimestamp] = []
        self.processors.append(processed)
        return CapturingProcessor(processed)

    @property
    def processed(self) -> list[KeyValueTimestamp]:
        """What the single processor created by this supplier has seen."""
        assert len(self.processors) == 1, (
            f"expected one processor, the runtime created {len(self.processors)}"
        )
        return self.processors[0]

    def last_value_and_timestamp_per_key(self) -> dict[Any, tuple[Any, int]]:
        """Latest (value, timestamp) per key; a tombstone removes the key (MockApiProcessor's view)."""
        latest: dict[Any, tuple[Any, int]] = {}
        for key, value, timestamp in self.processed:
            if value is None:
                latest.pop(key, None)
            else:
                latest[key] = (value, timestamp)
        return latest


def streams_config(
    state_dir: Path, key_serde=None, value_serde=None, application_id: str | None = None, **overrides: Any
) -> dict[str, Any]:
    """The configuration Kafka Streams' ``StreamsTestUtils.getStreamsConfig(keySerde, valueSerde)`` builds."""
    config: dict[str, Any] = {
        "application_id": application_id or f"scenario-{uuid.uuid4().hex[:12]}",
        "bootstrap_servers": "localhost:9091",
        "state_dir": str(state_dir),
        "default_key_serde": key_serde if key_serde is not None else Serdes.String(),
        "default_value_serde": value_serde if value_serde is not None else Serdes.String(),
    }
    config.update(overrides)
    return config


def records(output_topic) -> list[KeyValueTimestamp]:
    """An output topic's records as ``(key, value, timestamp)``, in the order they were written."""
    return [(r.key, r.value, r.timestamp) for r in output_topic.read_records_to_list()]


def store_contents(store) -> dict[Any, Any]:
    """Every entry of a key-value store, as a dict (Kafka Streams' tests call this ``asMap``)."""
    with store.all() as it:
        return {kv.key: kv.value for kv in it}


def node_names(topology) -> set[str]:
    """Names of every source, processor and sink in a topology's describe() text."""
    import re

    return set(re.findall(r"^\s+(?:Source|Processor|Sink): (\S+) \(", str(topology.describe()), re.MULTILINE))


def repartition_sinks(topology) -> list[str]:
    """Sinks writing to a repartition topic, as Kafka Streams' tests count them ("Sink: .*-repartition")."""
    import re

    return re.findall(r"Sink: .*-repartition", str(topology.describe()))
