"""Runs a real StreamThread on the in-memory client supplier (no broker), for the thread tests.

The topology counts records per key: source ``input`` (String keys and values) -> processor
``counter`` with the logged RocksDB key-value store ``counts`` (String -> Integer) -> sink
``output`` (key, count). A stateless variant maps values to upper case into ``output``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from streams_runtime import Serdes, Stores, Topology
from streams_runtime.config import StreamsConfig
from streams_runtime.processor.api import Processor, Record
from streams_runtime.processor.internals.runtime_setup import RuntimeSetup
from streams_runtime.processor.internals.stream_thread import StreamThread
from streams_runtime.testing import InMemoryClientSupplier
from tests.conditions import wait_until

APP = "app"
INPUT, OUTPUT = "input", "output"
CHANGELOG = f"{APP}-counts-changelog"
PARTITIONS = 3
STRING, INTEGER = Serdes.String(), Serdes.Integer()


class Counter(Processor):
    def process(self, record: Record) -> None:
        assert self.context is not None
        store = self.context.get_state_store("counts")
        count = (store.get(record.key) or 0) + 1
        store.put(record.key, count)
        self.context.forward(record.with_value(count))


class Upper(Processor):
    def process(self, record: Record) -> None:
        assert self.context is not None
        self.context.forward(record.with_value(record.value.upper()))


def counting_topology() -> Topology:
    topology = Topology()
    topology.add_source("src", INPUT, key_serde=STRING, value_serde=STRING)
    topology.add_processor("counter", Counter, "src")
    topology.add_state_store(
        Stores.key_value_store_builder(Stores.persistent_key_value_store("counts"), STRING, INTEGER),
        "counter",
    )
    topology.add_sink("sink", OUTPUT, "counter", key_serde=STRING, value_serde=INTEGER)
    return topology


def upper_topology() -> Topology:
    topology = Topology()
    topology.add_source("src", INPUT, key_serde=STRING, value_serde=STRING)
    topology.add_processor("upper", Upper, "src")
    topology.add_sink("sink", OUTPUT, "upper", key_serde=STRING, value_serde=STRING)
    return topology


@dataclass
class Harness:
    """One StreamThread on ``supplier``; records its state changes and the error it died of."""

    supplier: InMemoryClientSupplier
    setup: RuntimeSetup
    thread: StreamThread
    states: list[str] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    died: list[StreamThread] = field(default_factory=list)

    @property
    def cluster(self) -> Any:
        return self.supplier.cluster

    def send(self, partition: int, key: str, value: str, timestamp: int = 1_000) -> None:
        self.cluster.append(
            INPUT, partition, STRING.serialize(INPUT, key), STRING.serialize(INPUT, value), timestamp
        )

    def outputs(self, *, read_committed: bool = False, value_serde: Any = INTEGER) -> list[tuple[str, Any]]:
        return [
            (STRING.deserialize(OUTPUT, r.key), value_serde.deserialize(OUTPUT, r.value))
            for r in self.cluster.records(OUTPUT, read_committed=read_committed)
        ]

    def committed(self) -> dict[tuple[str, int], int]:
        return {tp: o for tp, o in self.cluster.committed(APP).items() if tp[0] == INPUT}

    def wait_state(self, state: str, timeout: float = 10.0) -> None:
        wait_until(lambda: self.thread.state == state, timeout, lambda: f"state {state}, have {self.states}")

    def wait_tasks(self, tasks: set[str], timeout: float = 10.0) -> None:
        def running() -> bool:
            manager = self.thread.task_manager
            return (
                manager is not None
                and {str(t) for t in self.thread.active_tasks} == tasks
                and not manager.restoring
            )

        wait_until(running, timeout, lambda: f"running tasks {tasks}, have {self.thread.active_tasks}")

    def stop(self, timeout: float = 10.0) -> None:
        self.thread.shutdown()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the stream thread did not stop"
        self.setup.close()


def start_thread(
    tmp_path: Any,
    topology: Topology,
    supplier: InMemoryClientSupplier | None = None,
    *,
    on_error: Any = None,
    **config: Any,
) -> Harness:
    """Create the topics, prepare the runtime with ``supplier`` and start one StreamThread."""
    supplier = supplier or InMemoryClientSupplier()
    supplier.cluster.create_topic(INPUT, PARTITIONS)
    supplier.cluster.create_topic(OUTPUT, PARTITIONS)
    props = {
        "application_id": APP,
        "bootstrap_servers": "in-memory:0",
        "state_dir": str(tmp_path),
        "poll_ms": 10,
        "statestore_cache_max_bytes": 0,
        **config,
    }
    streams_config = StreamsConfig(props)
    setup = RuntimeSetup.prepare(topology, streams_config, "in-memory:0", str(uuid.uuid4()), supplier)
    holder: list[Harness] = []

    def on_state(thread: StreamThread, old: str, new: str) -> None:
        holder[0].states.append(new)

    def on_death(thread: StreamThread) -> None:
        holder[0].died.append(thread)

    def error_policy(thread: StreamThread, exc: BaseException) -> bool:
        holder[0].errors.append(exc)
        return bool(on_error(exc)) if on_error is not None else False

    thread = StreamThread(setup, 1, on_state, on_death, error_policy)
    harness = Harness(supplier, setup, thread)
    holder.append(harness)
    thread.start()
    return harness
