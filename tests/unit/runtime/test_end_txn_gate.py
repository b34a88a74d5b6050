"""The transaction-end gate: on only when the broker says it is Tansu (never decided from the
address); while one process holds it another process (and another thread) waits; the producer's
init, commit and abort run inside it."""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from streams_runtime.brokers.tansu.end_txn_gate import EndTxnGate, shared_end_txn_gate
from streams_runtime.processor.internals.record_collector import StreamsProducer


@pytest.mark.parametrize(
    ("servers", "cluster_id", "enabled"),
    [
        ("127.0.0.1:9092", "tansu_cluster", True),  # the embedded broker
        ("127.0.0.1:9092", "MkU3OEVBNTcwNTJENDM2Qk", False),  # Apache Kafka on loopback: off
        ("kafka-1:9092", "tansu_cluster", True),  # Tansu elsewhere: on
        ("kafka-1:9092", "MkU3OEVBNTcwNTJENDM2Qk", False),
    ],
)
def test_the_gate_is_on_only_when_the_broker_says_it_is_tansu(
    servers: str, cluster_id: str, enabled: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streams_runtime.brokers.tansu import end_txn_gate as gates

    monkeypatch.setattr(gates, "_GATES", {})
    client = _TransactionalClient(tmp_path / "unused.lock", cluster_id=cluster_id)

    class Supplier:
        def get_producer(self, bootstrap_servers: str, overrides: Any = None) -> _TransactionalClient:
            return client

    producer = StreamsProducer(servers, "c", {}, None, True, client_supplier=Supplier())  # type: ignore[arg-type]
    producer.init_transactions(1.0)
    assert producer.end_txn_gate.enabled is enabled
    assert client.metadata_requests == 1  # asked once, at the first transactional call
    producer.commit_transaction(1.0)
    assert client.metadata_requests == 1


def _hold(path_dir: str, servers: str, acquired: Any, release: Any) -> None:
    gate = EndTxnGate(servers, enabled=True, directory=path_dir)
    with gate.held():
        acquired.set()
        release.wait(10)


def test_another_process_waits_until_the_holder_lets_go(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    acquired, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(str(tmp_path), "127.0.0.1:9092", acquired, release))
    holder.start()
    try:
        assert acquired.wait(30)
        gate = EndTxnGate("127.0.0.1:9092", enabled=True, directory=str(tmp_path))
        entered = threading.Event()

        def enter() -> None:
            with gate.held():
                entered.set()

        waiter = threading.Thread(target=enter)
        waiter.start()
        assert not entered.wait(0.5)  # the other process holds it
        release.set()
        assert entered.wait(10)
        waiter.join(5)
    finally:
        release.set()
        holder.join(10)


def test_threads_of_one_process_take_turns(tmp_path: Path) -> None:
    gate = EndTxnGate("localhost:1", enabled=True, directory=str(tmp_path))
    inside, most = [0], [0]
    guard = threading.Lock()

    def work() -> None:
        for _ in range(20):
            with gate.held():
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0.001)
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert most[0] == 1


def test_a_disabled_gate_never_waits_and_makes_no_file(tmp_path: Path) -> None:
    gate = EndTxnGate("127.0.0.1:9092", enabled=False, directory=str(tmp_path))
    with gate.held(), gate.held():  # not even re-entrancy matters: it does nothing
        pass
    assert list(tmp_path.iterdir()) == []


def test_producers_of_one_broker_share_one_gate() -> None:
    first = shared_end_txn_gate("127.0.0.1:40001", enabled=True)
    assert shared_end_txn_gate("127.0.0.1:40001", enabled=True) is first
    assert shared_end_txn_gate("127.0.0.1:40002", enabled=True) is not first


class _TransactionalClient:
    """Records, for each transactional call, whether the gate's file lock was held meanwhile."""

    def __init__(self, lock_path: Path, cluster_id: str = "tansu_cluster") -> None:
        self.lock_path = lock_path
        self.cluster_id = cluster_id
        self.metadata_requests = 0
        self.calls: list[tuple[str, bool]] = []

    def list_topics(self, timeout: float = -1) -> Any:
        self.metadata_requests += 1
        return SimpleNamespace(cluster_id=self.cluster_id, topics={}, brokers={})

    def _gate_held(self) -> bool:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def init_transactions(self, timeout: float) -> None:
        self.calls.append(("init", self._gate_held()))

    def begin_transaction(self) -> None:
        self.calls.append(("begin", self._gate_held()))

    def commit_transaction(self, timeout: float) -> None:
        self.calls.append(("commit", self._gate_held()))

    def abort_transaction(self, timeout: float) -> None:
        self.calls.append(("abort", self._gate_held()))


def test_init_commit_and_abort_run_inside_the_gate_and_begin_does_not() -> None:
    servers = "127.0.0.1:40003"
    client = _TransactionalClient(shared_end_txn_gate(servers, enabled=True).path)

    class Supplier:
        def get_producer(self, bootstrap_servers: str, overrides: Any = None) -> _TransactionalClient:
            return client

    producer = StreamsProducer(servers, "c", {}, None, True, client_supplier=Supplier())  # type: ignore[arg-type]
    producer.init_transactions(1.0)
    producer.begin_transaction()
    producer.commit_transaction(1.0)
    producer.begin_transaction()
    producer.abort_transaction(1.0)
    assert client.calls == [
        ("init", True),
        ("begin", False),
        ("commit", True),
        ("begin", False),
        ("abort", True),
    ]
