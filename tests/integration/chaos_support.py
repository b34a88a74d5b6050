"""The chaos scenario, shared by the instance-kill and the broker-fault tests.

A :class:`Fleet` of ``worker_instance`` processes of ``chaos_app.py`` (per-key counts with a
changelog, every update emitted, and a copy of every input id) reads input that streams in at
:data:`RATE` records/s while a schedule of faults runs (instance kills, broker bounces, a whole
cluster down). :func:`run_chaos` then checks the outputs against the input topic's records
(every record the input producer saw acknowledged among them, none twice):

* at-least-once: every input id is in the id copy (0 lost; duplicates allowed), and every
  final count is >= what was produced for its key;
* exactly-once: read as committed (``read_committed_topic``: aborted transactions left out from
  the log's markers, also where the broker does not do it for librdkafka readers), every input id
  is in the id copy exactly once and every key's count updates are exactly 1, 2, ..., n with n
  the number produced: no loss, no duplicate, no aborted increment restored into the state.
"""

from __future__ import annotations

import os
import signal
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from streams_runtime.kafka.clients import create_producer
from streams_runtime.kafka.offsets import PartitionReadError
from streams_runtime.testing import read_committed_topic
from tests.integration.streams_support import WorkerProcess, make_topics, read_to_end, wait_until

APP = "tests.integration.chaos_app:app"
PARTITIONS = 6
KEYS = 60
RATE = 400  # records per second
#: how long the input producer retries a record before it gives up (longer than any fault)
DELIVERY_TIMEOUT_S = 120.0
INPUT_AFTER_LAST_FAULT_S = 3.0  # input streamed after the last fault returned


class Fleet:
    """``instances`` worker processes of the chaos app, each restarted at once when killed."""

    def __init__(
        self, bootstrap: str, topics: str, guarantee: str, root: Path, instances: int = 3, standbys: int = 0
    ) -> None:
        self.bootstrap, self.topics, self.guarantee, self.root = bootstrap, topics, guarantee, root
        self.source, self.counts, self.ids, self.application_id = topics.split(",")
        self.standbys = standbys
        self.workers = [self._start(i) for i in range(instances)]
        self.kills: list[tuple[int, float, WorkerProcess]] = []
        #: set by a fault to hold the input back (the producer resumes, catching up, when cleared)
        self.input_paused = threading.Event()

    def _start(self, i: int) -> WorkerProcess:
        return WorkerProcess(
            APP,
            i,
            self.bootstrap,
            self.root / f"instance-{i}",
            env={
                "WORKER_TEST_TOPICS": self.topics,
                "CHAOS_GUARANTEE": self.guarantee,
                "CHAOS_STANDBYS": str(self.standbys),
            },
        )

    def kill_and_restart(self, i: int) -> None:
        at = self.workers[i].kill()
        self.workers[i] = self._start(i)
        self.kills.append((i, at, self.workers[i]))

    def recovery_times(self) -> list[float]:
        """Per kill: seconds until the restarted instance reported RUNNING with tasks again."""
        times = []
        for _, at, worker in self.kills:
            running = [t for t, line in list(worker.timed_lines) if "active task(s)" in line]
            times.append(round(running[0] - at, 1) if running else float("nan"))
        return times

    def all_alive(self) -> bool:
        return all(w.process.poll() is None for w in self.workers)

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def stacks(self) -> str:
        """Every live instance's thread stacks (``SIGUSR1``: worker_instance dumps them)."""
        asked = time.monotonic()
        for worker in self.workers:
            if worker.process.poll() is None:
                os.kill(worker.process.pid, signal.SIGUSR1)
        time.sleep(1.0)
        return "\n".join(
            f"--- stacks of instance {w.index}\n"
            + "\n".join(line for t, line in list(w.timed_lines) if t >= asked)
            for w in self.workers
        )

    def logs(self, last: int = 30) -> str:
        return "\n".join(f"--- instance {w.index}\n" + "\n".join(w.lines[-last:]) for w in self.workers)


def _produce_stream(
    bootstrap: str,
    source: str,
    over: Callable[[], bool],
    produced: list[tuple[str, str]],
    paused: threading.Event,
) -> None:
    """Stream input at :data:`RATE` until ``over()``. ``produced`` holds the records the cluster
    acknowledged: a batch in flight when every broker goes down is delivered once they are back
    (librdkafka retries it), and a record it gave up on is not counted as input."""
    producer = create_producer(bootstrap, {"message.timeout.ms": int(DELIVERY_TIMEOUT_S * 1000)})

    def delivered(err: object, msg: object) -> None:
        if err is None:
            key, value = msg.key().decode(), msg.value().decode()  # type: ignore[attr-defined]
            produced.append((key, value))

    n = 0
    started = time.monotonic()
    while not over():
        if paused.is_set():
            time.sleep(0.05)
            continue
        for _ in range(RATE // 10):
            key = f"k{n % KEYS}"
            producer.produce(
                source,
                f"id-{n}".encode(),
                key.encode(),
                partition=n % KEYS % PARTITIONS,
                on_delivery=delivered,
            )
            n += 1
        producer.poll(0)
        time.sleep(max(0.0, started + n / RATE - time.monotonic()))
    if producer.flush(DELIVERY_TIMEOUT_S + 10) != 0:
        raise AssertionError(f"{source}: input records still undelivered after {DELIVERY_TIMEOUT_S} s")


@dataclass
class ChaosResult:
    produced: int
    lost: int
    duplicates: int
    recovered_s: float
    fleet: Fleet
    #: every instance process was still running when the outputs had been checked
    alive_at_end: bool = False
    #: seconds each step of the run took (fleet running, input streamed and acknowledged, input
    #: read back, outputs checked): where a slow run spent its time
    phases: dict[str, float] = field(default_factory=dict)

    def summary(self, name: str) -> str:
        return (
            f"{name} {self.fleet.guarantee}: {self.produced} records, "
            f"{len(self.fleet.kills)} instance kills, "
            f"lost {self.lost}, duplicates {self.duplicates}, restarted instances RUNNING after "
            f"{self.fleet.recovery_times()} s, outputs complete {self.recovered_s:.1f} s "
            "after the input stopped; phases (s): "
            + ", ".join(f"{phase} {seconds:.1f}" for phase, seconds in self.phases.items())
        )


Fault = Callable[[Fleet], None]


def run_chaos(
    bootstrap: str,
    names: Callable[[str], str],
    root: Path,
    guarantee: str,
    faults: list[tuple[float, Fault]],
    produce_s: float,
    *,
    instances: int = 3,
    standbys: int = 0,
    settle_s: float = 90.0,
    replication_factor: int = 1,
) -> ChaosResult:
    """Start the fleet, stream input for ``produce_s`` seconds while each fault runs at its
    second (or when the one before it returns, if that is later; the input goes on until
    :data:`INPUT_AFTER_LAST_FAULT_S` after the last fault returned), then check the
    outputs (see the module docstring) and return the figures. ``replication_factor``: of the
    input and output topics (the internal ones take the broker's default)."""
    source, counts, ids, app = names("in"), names("counts"), names("ids"), names("chaos")
    topics = {source: PARTITIONS, counts: PARTITIONS, ids: PARTITIONS}
    make_topics(bootstrap, replication_factor, **topics)
    fleet = Fleet(bootstrap, f"{source},{counts},{ids},{app}", guarantee, root, instances, standbys)
    produced: list[tuple[str, str]] = []
    phases: dict[str, float] = {}
    step = time.monotonic()

    def phase_done(name: str) -> None:
        nonlocal step
        phases[name], step = time.monotonic() - step, time.monotonic()

    try:
        wait_until(lambda: all(w.active_partitions() is not None for w in fleet.workers), 60, fleet.logs)
        phase_done("fleet running")
        began = time.monotonic()
        failures: list[BaseException] = []
        # the input runs for produce_s and past the last fault (a fault that restarts a broker
        # takes 10-30 s and pushes the next one out), so that every fault falls inside it
        input_ends, faults_done = [began + produce_s], threading.Event()

        def input_over() -> bool:
            return faults_done.is_set() and time.monotonic() >= input_ends[0]

        def stream_input() -> None:
            try:
                _produce_stream(bootstrap, source, input_over, produced, fleet.input_paused)
            except BaseException as exc:  # reported by the test's own thread below
                failures.append(exc)

        producer = threading.Thread(target=stream_input, daemon=True)
        producer.start()
        for at, fault in faults:
            time.sleep(max(0.0, began + at - time.monotonic()))
            fault(fleet)
        input_ends[0] = max(input_ends[0], time.monotonic() + INPUT_AFTER_LAST_FAULT_S)
        faults_done.set()
        producer.join(max(0.0, input_ends[0] - time.monotonic()) + DELIVERY_TIMEOUT_S + 30)
        assert not producer.is_alive() and not failures, failures
        phase_done("input acknowledged")
        produced = _input_of(bootstrap, source, produced)
        phase_done("input read back")
        expected = Counter(key for key, _ in produced)
        all_ids = {i for _, i in produced}
        settled_at = time.monotonic()
        if guarantee == "at_least_once":
            lost, duplicates = _check_at_least_once(
                bootstrap, counts, ids, expected, all_ids, fleet, settle_s
            )
        else:
            lost, duplicates = _check_exactly_once(
                bootstrap, counts, ids, produced, expected, all_ids, fleet, settle_s
            )
        recovered_s = time.monotonic() - settled_at
        phase_done("outputs checked")
        alive = fleet.all_alive()
        return ChaosResult(len(produced), lost, duplicates, recovered_s, fleet, alive, phases)
    finally:
        fleet.stop()


def _input_of(bootstrap: str, source: str, acknowledged: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The input as the input topic holds it: every acknowledged record (checked) and any record
    whose delivery report said it failed but which the cluster wrote all the same (a request that
    timed out on a leader that was going away)."""
    held = [(m.key().decode(), m.value().decode()) for m in read_to_end(bootstrap, source, PARTITIONS)]
    missing = set(acknowledged) - set(held)
    assert not missing, (
        f"{len(missing)} acknowledged input records are not in {source}: {sorted(missing)[:5]}"
    )
    assert len(set(held)) == len(held), f"{source} holds an input record twice"
    return held


def _check_at_least_once(
    bootstrap: str,
    counts: str,
    ids: str,
    expected: Counter[str],
    all_ids: set[str],
    fleet: Fleet,
    settle_s: float,
) -> tuple[int, int]:
    seen: list = []

    def ids_arrived() -> bool:
        try:
            seen[:] = read_to_end(bootstrap, ids, PARTITIONS, timeout=20)
        except PartitionReadError:  # a cluster back from a fault may not serve every read at once
            return False
        return {m.value().decode() for m in seen} >= all_ids

    wait_until(
        ids_arrived, settle_s, lambda: f"every input id in {ids}\n" + fleet.logs() + "\n" + fleet.stacks()
    )
    copies = Counter(m.value().decode() for m in seen)
    lost = len(all_ids - set(copies))
    latest: dict[str, int] = {}
    trails: dict[str, list[tuple[int, int]]] = {}  # key -> (offset, count) in log order

    def counts_caught_up() -> bool:  # the count updates may trail the id copies a little
        try:
            records = read_to_end(bootstrap, counts, PARTITIONS, timeout=20)
        except PartitionReadError:
            return False
        trails.clear()
        for m in records:
            value = struct.unpack(">q", m.value())[0]
            latest[m.key().decode()] = value
            trails.setdefault(m.key().decode(), []).append((m.offset(), value))
        return all(latest.get(k, 0) >= n for k, n in expected.items())

    def behind() -> str:
        """The keys whose count is short, and where their updates stepped back (a replay
        from restored state: the offsets and counts around each step back)."""
        short = {k: (latest.get(k), n) for k, n in expected.items() if latest.get(k, 0) < n}
        steps = {k: _steps_back(trails.get(k, [])) for k in short}
        return f"{len(short)} keys short (latest, produced): {short}; steps back: {steps}"

    assert lost == 0
    wait_until(
        counts_caught_up,
        30,
        lambda: f"counts >= produced: {behind()}\n" + fleet.logs(200) + "\n" + fleet.stacks(),
    )
    return lost, sum(c - 1 for c in copies.values())


def _check_exactly_once(
    bootstrap: str,
    counts: str,
    ids: str,
    produced_ids: list[tuple[str, str]],
    expected: Counter[str],
    all_ids: set[str],
    fleet: Fleet,
    settle_s: float,
) -> tuple[int, int]:
    committed_counts: list = []

    def exact() -> bool:
        committed_counts[:] = read_committed_topic(bootstrap, counts, PARTITIONS, timeout_s=20)
        latest = {m.key().decode(): struct.unpack(">q", m.value())[0] for m in committed_counts}
        return latest == dict(expected)

    def count_gaps() -> str:
        """Which keys are off, and whether their input ids made it to the id copy (missing ids:
        input skipped; ids all there: updates lost from the state)."""
        latest = {m.key().decode(): struct.unpack(">q", m.value())[0] for m in committed_counts}
        off = {k: (latest.get(k), n) for k, n in expected.items() if latest.get(k) != n}
        try:
            copied = {m.value().decode() for m in read_committed_topic(bootstrap, ids, PARTITIONS, 20)}
            missing = sorted(i for k, i in produced_ids if k in off and i not in copied)
            ids_note = f"; input ids of those keys missing from {ids}: {len(missing)} {missing[:10]}"
        except TimeoutError as exc:
            ids_note = f"; {ids} unreadable: {exc}"
        updates = [struct.unpack(">q", m.value())[0] for m in committed_counts if m.key().decode() in off]
        return (
            f"{len(off)} keys off (committed, produced): {dict(list(off.items())[:10])}{ids_note}; "
            f"last committed updates of those keys: {updates[-20:]}"
        )

    wait_until(
        exact,
        settle_s,
        lambda: f"exact committed counts in {counts}: {count_gaps()}\n"
        + fleet.logs()
        + "\n"
        + fleet.stacks(),
    )
    updates: dict[str, list[int]] = {}
    for m in committed_counts:
        updates.setdefault(m.key().decode(), []).append(struct.unpack(">q", m.value())[0])
    for key, values in updates.items():
        wrong = next((i for i, v in enumerate(values) if v != i + 1), len(values))
        assert values == list(range(1, expected[key] + 1)), (
            key,
            len(values),
            wrong,
            values[wrong - 3 : wrong + 5],
            _views_of(bootstrap, counts, key),
        )
    copies = Counter(m.value().decode() for m in read_committed_topic(bootstrap, ids, PARTITIONS))
    lost = len(all_ids - set(copies))
    duplicates = sum(c - 1 for c in copies.values())
    assert lost == 0 and duplicates == 0 and set(copies) == all_ids
    return lost, duplicates


def _views_of(bootstrap: str, topic: str, key: str) -> str:
    """``key``'s updates in ``topic`` as the broker's own read_committed and read_uncommitted
    readers see them, as (offset, count) where the count stepped back: tells a reader defect (the
    broker hides what the marker-filtered read shows) from outputs committed twice."""
    views = []
    for isolation in ("read_committed", "read_uncommitted"):
        try:
            records = read_to_end(bootstrap, topic, PARTITIONS, timeout=20, isolation=isolation)
        except PartitionReadError as exc:
            views.append(f"{isolation}: unreadable ({exc})")
            continue
        found = [(m.offset(), struct.unpack(">q", m.value())[0]) for m in records if m.key().decode() == key]
        views.append(f"{isolation}: {len(found)} updates, steps back {_steps_back(found)[:3]}")
    return "; ".join(views)


def _steps_back(trail: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The (offset, count) updates around each place a key's count did not go up."""
    return [trail[max(0, i - 2) : i + 3] for i in range(1, len(trail)) if trail[i][1] <= trail[i - 1][1]]
