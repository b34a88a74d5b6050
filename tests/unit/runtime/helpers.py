"""Factory helpers for the state tests: a real StreamTask with a RocksDB and an in-memory store.

The task is built as the TaskManager builds one (StreamTask + ProcessorStateManager bound to its
context before ``initialize``), from a Processor-API topology whose one processor owns the
stores ``rocks`` (RocksDB) and ``mem`` (in memory), both logged to
``<application_id>-<store>-changelog``.
"""

from __future__ import annotations

from typing import Any

from streams_runtime import Serdes, Stores, Topology
from streams_runtime.config import as_config
from streams_runtime.processor.internals.metrics import StreamsMetrics
from streams_runtime.processor.internals.nodes import build_processor_topology
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.internals.state_manager import ProcessorStateManager
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.task_id import TaskId
from tests.fakes import NoOpProcessor

STORES = ("rocks", "mem")
T0 = TaskId(0, 0)


class ListCollector:
    """A RecordCollector stand-in: keeps what the stores log."""

    eos_enabled = False

    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def send(self, topic: str, key: Any, value: Any, headers: tuple, timestamp: int, partition: Any) -> None:
        self.sent.append((topic, key, value, timestamp, partition))


def changelog(application_id: str, store: str) -> str:
    return f"{application_id}-{store}-changelog"


def state_topology(stores: tuple[str, ...] = STORES, *, timestamped: bool = False) -> Topology:
    """A topology whose processor ``p`` owns the logged ``stores`` (``rocks``: RocksDB, ``mem``:
    in memory), with String keys and values."""
    builder = Stores.timestamped_key_value_store_builder if timestamped else Stores.key_value_store_builder
    suppliers = {"rocks": Stores.persistent_key_value_store, "mem": Stores.in_memory_key_value_store}
    topology = Topology()
    topology.add_source("src", "input", key_serde=Serdes.String(), value_serde=Serdes.String())
    topology.add_processor("p", NoOpProcessor, "src")
    for name in stores:
        topology.add_state_store(builder(suppliers[name](name), Serdes.String(), Serdes.String()), "p")
    return topology


def make_task(
    state_directory: StateDirectory,
    application_id: str,
    task_id: TaskId = T0,
    *,
    topology: Topology | None = None,
) -> tuple[StreamTask, ProcessorStateManager]:
    """An initialized task and its state manager (the caller holds the task's lock)."""
    topology = topology or state_topology()
    builder = topology.internal_builder
    nodes = [name for names in builder.node_groups().values() for name in names]
    config = as_config({"application_id": application_id, "state_dir": str(state_directory.app_dir.parent)})
    task = StreamTask(
        task_id,
        build_processor_topology(builder, nodes),
        {name: entry.builder for name, entry in builder.stores.items()},
        config,
        ListCollector(),
        StreamsMetrics(),
        None,
        lambda: 0,
        state_directory.task_dir(task_id),
    )
    manager = ProcessorStateManager(task_id, state_directory)
    task.context.set_state_manager(manager)
    task.initialize()
    return task, manager


def contents(store: Any) -> dict[Any, Any]:
    """Every entry of a typed key-value store."""
    with store.all() as entries:
        return {kv.key: kv.value for kv in entries}
