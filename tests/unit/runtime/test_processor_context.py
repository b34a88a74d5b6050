"""The task's ProcessorContextImpl against the Protocols it implements, and its errors when used
outside of a processor node (no node is being executed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams_runtime.errors import StreamsError
from streams_runtime.processor.api import Cancellable, ProcessorContext, PunctuationType, Record
from streams_runtime.processor.internals.context import InternalProcessorContext, internal_context
from streams_runtime.processor.internals.state_directory import StateDirectory
from streams_runtime.processor.internals.task import StreamTask
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.helpers import make_task

APP = "ctx-app"
T0 = TaskId(0, 0)


@pytest.fixture
def task(tmp_path: Path) -> StreamTask:
    sd = StateDirectory(tmp_path, APP)
    assert sd.lock(T0)
    task, _ = make_task(sd, APP)
    yield task
    task.close()
    sd.close()


def test_the_task_context_is_a_processor_context_with_the_internal_members(task: StreamTask) -> None:
    context = task.context
    assert isinstance(context, ProcessorContext)
    internal: InternalProcessorContext = internal_context(context)
    assert internal.task_id == T0 and internal.application_id == APP
    assert internal.current_node is None and internal.record_context() is None
    node = task.topology.nodes["p"]
    internal.set_current_node(node)
    assert internal.current_node is node


def test_schedule_outside_of_a_processor_node_is_a_clear_error(task: StreamTask) -> None:
    with pytest.raises(StreamsError, match="no processor node is being executed"):
        task.context.schedule(10, PunctuationType.STREAM_TIME, lambda now: None)


def test_schedule_from_a_processor_node_returns_a_cancellable_of_that_node(task: StreamTask) -> None:
    node = task.topology.nodes["p"]
    task.context.set_current_node(node)
    schedule = task.context.schedule(10, PunctuationType.STREAM_TIME, lambda now: None)
    assert isinstance(schedule, Cancellable)
    assert schedule.node is node


def test_forward_outside_of_a_processor_node_is_a_clear_error(task: StreamTask) -> None:
    with pytest.raises(StreamsError, match="outside of a processor"):
        task.context.forward(Record("k", "v", 0))
