"""The task state machine (Kafka Streams' ``Task.State``) and the thread's task registry
(``Tasks``), broker-free: every allowed transition, every refused one, and the registry's
bookkeeping over real StreamTask / StandbyTask objects."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from streams_runtime.errors import StreamsError
from streams_runtime.processor.internals.abstract_task import IllegalStateError, State, Task
from streams_runtime.processor.internals.tasks import Tasks
from streams_runtime.processor.task_id import TaskId
from tests.unit.runtime.helpers import make_task

T0, T1, T2 = TaskId(0, 0), TaskId(0, 1), TaskId(1, 0)

ALLOWED = {
    (State.CREATED, State.RESTORING),
    (State.CREATED, State.SUSPENDED),
    (State.RESTORING, State.RUNNING),
    (State.RESTORING, State.SUSPENDED),
    (State.RUNNING, State.SUSPENDED),
    (State.SUSPENDED, State.RESTORING),
    (State.SUSPENDED, State.CLOSED),
    (State.CLOSED, State.CREATED),
}
REFUSED = sorted(set(itertools.product(State, State)) - ALLOWED, key=lambda p: (p[0].name, p[1].name))


def task_in(state: State) -> Task:
    task = Task(T0)
    task.state = state
    return task


def test_task_state_is_reachable_as_task_dot_state():
    assert Task.State is State
    assert Task(T0).state is Task.State.CREATED


@pytest.mark.parametrize(("old", "new"), sorted(ALLOWED, key=lambda p: (p[0].name, p[1].name)))
def test_should_allow_every_transition_of_kafka_streams(old, new):
    task = task_in(old)
    task.transition_to(new)
    assert task.state is new
    assert old.is_valid_transition(new)


@pytest.mark.parametrize(("old", "new"), REFUSED)
def test_should_refuse_every_other_transition_and_name_both_states(old, new):
    task = task_in(old)
    with pytest.raises(IllegalStateError) as raised:
        task.transition_to(new)
    assert task.state is old  # unchanged
    assert isinstance(raised.value, StreamsError)
    assert f"from {old.name} to {new.name}" in str(raised.value) and str(T0) in str(raised.value)
    assert (raised.value.old, raised.value.new) == (old, new)


def test_the_table_has_the_expected_size():
    assert len(REFUSED) == 25 - len(ALLOWED) == 17


def test_a_task_goes_through_its_whole_life_and_can_be_revived():
    task = Task(T0)
    for state in (State.RESTORING, State.RUNNING, State.SUSPENDED, State.CLOSED, State.CREATED):
        task.transition_to(state)
    assert task.state is State.CREATED


def test_suspend_is_idempotent_and_refused_once_closed():
    task = task_in(State.RUNNING)
    task.suspend()
    task.suspend()
    assert task.state is State.SUSPENDED
    task.transition_to(State.CLOSED)
    with pytest.raises(IllegalStateError):
        task.suspend()


def test_a_stream_task_restores_runs_suspends_and_closes(tmp_path):
    from streams_runtime.processor.internals.state_directory import StateDirectory

    sd = StateDirectory(tmp_path, "app")
    try:
        assert sd.lock(T0)
        task, manager = make_task(sd, "app")
        assert task.state is State.RESTORING and task.is_active
        with pytest.raises(IllegalStateError):  # restored twice
            task.initialize()
        task.complete_restoration()
        assert task.state is State.RUNNING
        task.close()  # suspends first
        assert task.state is State.CLOSED
        task.close()  # closing a closed task does nothing
        with pytest.raises(IllegalStateError, match="from CLOSED to RUNNING"):
            task.complete_restoration()
        manager.close()
    finally:
        sd.close()


# ---------------------------------------------------------------------- the registry
def fake_task(task_id: TaskId, state: State = State.RESTORING, partitions=()) -> SimpleNamespace:
    queues = {tp: SimpleNamespace(add_batch=lambda raws, tp=tp: None) for tp in partitions}
    return SimpleNamespace(
        id=task_id,
        state=state,
        input_partitions=list(partitions),
        partition_group=SimpleNamespace(queue_for=lambda t, p: queues[(t, p)]),
    )


def test_registry_answers_from_the_tasks_own_state():
    tasks = Tasks()
    restoring, running = fake_task(T0), fake_task(T1, State.RUNNING)
    tasks.add_active(restoring)
    tasks.add_active(running)
    assert tasks.running() == [running] and tasks.restoring() == [restoring]
    assert tasks.has_restoring() and tasks.is_restoring(T0) and not tasks.is_restoring(T1)
    restoring.state = State.RUNNING  # the task moved on: the registry follows without bookkeeping
    assert not tasks.has_restoring() and tasks.running() == [restoring, running]
    assert tasks.in_state(State.RUNNING) == [restoring, running]


def test_registry_keeps_pending_tasks_apart_from_created_ones():
    tasks = Tasks()
    tasks.pending_active[T0] = 60_000
    assert tasks.is_restoring(T0) and tasks.owns(T0) and T0 not in tasks.active_tasks
    tasks.add_active(fake_task(T0))  # got its lock
    assert T0 not in tasks.pending_active and T0 in tasks.active_tasks
    tasks.pending_standby.add(T2)
    tasks.migrated.add(T1)
    tasks.forget_pending([T2])
    assert tasks.pending_standby == set() and tasks.migrated == {T1}
    tasks.forget_pending()
    assert tasks.migrated == set() and tasks.pending_active == {}


def test_registry_routes_input_partitions_to_the_running_task_until_it_is_removed():
    tasks = Tasks()
    task = fake_task(T0, State.RUNNING, [("in", 0), ("other", 0)])
    tasks.add_active(task)
    assert tasks.input_adders == {}
    tasks.add_input_partitions(task)
    assert set(tasks.input_adders) == {("in", 0), ("other", 0)}
    assert tasks.remove_active(T0) is task
    assert tasks.input_adders == {} and not tasks.owns(T0)


def test_registry_holds_a_task_once_active_or_standby():
    tasks = Tasks()
    tasks.add_active(fake_task(T0))
    with pytest.raises(ValueError, match="already registered"):
        tasks.add_active(fake_task(T0))
    with pytest.raises(ValueError, match="already registered"):
        tasks.add_standby(fake_task(T0, State.RUNNING))
    standby = fake_task(T1, State.RUNNING)
    tasks.pending_standby.add(T1)
    tasks.add_standby(standby)
    assert tasks.standby_tasks == {T1: standby} and tasks.pending_standby == set()
    assert tasks.all_task_ids() == {T0, T1}
    assert tasks.remove_standby(T1) is standby and tasks.remove_standby(T1) is None
