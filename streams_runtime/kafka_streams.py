"""KafkaStreams: the client that runs a Topology with ``num_stream_threads`` StreamThreads.

Instances sharing an ``application_id`` form one application: their threads join one
coordination group and the assignor spreads the tasks over them
(docs/decisions/0002-membership-and-data-path.md). Public front of the
runtime in :mod:`streams_runtime.processor.internals` (StreamThread, TaskManager, ...).

Client states (the edges in ``_TRANSITIONS``; any other transition raises)::

                 +--------------+
         +<----- | CREATED      | -----start()-----+
         |       +--------------+                  v
         |                                 +-------------+  a thread (re)balances
         |          +--------------------> | REBALANCING | <-----------------+
         |          |                      +-------------+                   |
         |          |                        |       |  all threads RUNNING  |
         |          |                        |       +---------------> +-----------+
         |          |                        |                         | RUNNING   |
         v          |                        v                         +-----------+
    +------------------+  close()      (both states)  a thread died,       |
    | PENDING_SHUTDOWN | <----------------------------- SHUTDOWN_CLIENT/...-+
    +------------------+                                     |
         | threads stopped                                   v
         v                                          +---------------+   threads
    +-------------+                                 | PENDING_ERROR | ---stopped--> ERROR
    | NOT_RUNNING |                                 +---------------+
    +-------------+

Clients: every Kafka client (consumers, producers, admin, the coordination group's consumer) is
made by the ``client_supplier`` given to the constructor (Kafka Streams' ``KafkaClientSupplier``);
by default the real ones. A test can give an in-memory supplier
(:class:`streams_runtime.testing.InMemoryClientSupplier`) and run without a broker.

Start, numbered: 1. resolve the broker (no ``bootstrap_servers`` given: the embedded one, unless a
``client_supplier`` was given: its clients need none);
2. check that every user topic exists (sources, global sources, sinks with a fixed topic, the
dead-letter topic: else ``MissingSourceTopicError`` or ``MissingSinkTopicError`` naming each
missing topic and how to create it, the client still CREATED), co-partitioning, create/verify
internal topics (fails before any thread runs, so nothing is read, written or committed);
2b. with global stores: start the GlobalStreamThread and wait until it restored every global
store to the true end of its topic (fails the start otherwise); 3. start the threads (each
joins the group; the client is REBALANCING until every thread runs its restored tasks); 4. with
``application_server`` set: serve the HTTP API (streams_runtime.server: interactive queries,
metrics, health) in a background thread; close() stops it before the threads. The
global thread keeps the global stores updated until close(), which stops it after the threads;
if it dies, the client shuts down (SHUTDOWN_CLIENT, no handler asked), as in Kafka Streams.

A thread that dies with an exception goes to the uncaught-exception handler (default:
SHUTDOWN_CLIENT), called on the dying thread: REPLACE_THREAD starts a new thread in its place;
SHUTDOWN_CLIENT stops every thread of this client and ends in ERROR; SHUTDOWN_APPLICATION does the
same for every instance of the application, as in Kafka Streams: before leaving the group the
dying thread's member rejoins with a shutdown flag in its subscription, the leader answers every
member with the SHUTDOWN_APPLICATION assignment error, and each client receiving it goes to
PENDING_ERROR -> ERROR (:class:`ApplicationShutdownRequestedError`, no handler asked).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from streams_runtime.config import StreamsConfig, as_config
from streams_runtime.errors import ApplicationShutdownRequestedError, StreamsError
from streams_runtime.kafka.client_supplier import KafkaClientSupplier
from streams_runtime.processor.internals.default_client_supplier import DEFAULT_CLIENT_SUPPLIER
from streams_runtime.processor.internals.global_stream_thread import GlobalStreamThread
from streams_runtime.processor.internals.runtime_setup import RuntimeSetup
from streams_runtime.processor.internals.stream_thread import DEAD, RUNNING, StreamThread
from streams_runtime.processor.internals.thread_metrics import RestoreProgress
from streams_runtime.processor.task_id import TaskId
from streams_runtime.query.interactive import InteractiveQueries

if TYPE_CHECKING:
    from streams_runtime.processor.topology import Topology
    from streams_runtime.query.local_stores import KeySerializer
    from streams_runtime.query.metadata import KeyQueryMetadata

log = logging.getLogger("streams_runtime")


class State(enum.Enum):
    CREATED = "CREATED"
    REBALANCING = "REBALANCING"
    RUNNING = "RUNNING"
    PENDING_SHUTDOWN = "PENDING_SHUTDOWN"
    NOT_RUNNING = "NOT_RUNNING"
    PENDING_ERROR = "PENDING_ERROR"
    ERROR = "ERROR"

    def is_running_or_rebalancing(self) -> bool:
        return self in (State.RUNNING, State.REBALANCING)


_TRANSITIONS = {
    State.CREATED: {State.REBALANCING, State.PENDING_SHUTDOWN},
    State.REBALANCING: {State.RUNNING, State.PENDING_SHUTDOWN, State.PENDING_ERROR},
    State.RUNNING: {State.REBALANCING, State.PENDING_SHUTDOWN, State.PENDING_ERROR},
    State.PENDING_SHUTDOWN: {State.NOT_RUNNING},
    State.NOT_RUNNING: set(),
    State.PENDING_ERROR: {State.ERROR},
    State.ERROR: set(),
}


class StreamThreadExceptionResponse(enum.Enum):
    REPLACE_THREAD = "REPLACE_THREAD"
    SHUTDOWN_CLIENT = "SHUTDOWN_CLIENT"
    SHUTDOWN_APPLICATION = "SHUTDOWN_APPLICATION"


@dataclass(frozen=True)
class TaskMetadata:
    task_id: TaskId
    topic_partitions: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ThreadMetadata:
    thread_name: str
    thread_state: str
    active_tasks: frozenset[TaskMetadata]
    standby_tasks: frozenset[TaskMetadata] = frozenset()


class KafkaStreams:
    """See the module docstring. ``KafkaStreams(topology, {"application_id": "app", ...})``."""

    def __init__(
        self,
        topology: Topology,
        config: StreamsConfig | Mapping[str, Any],
        client_supplier: KafkaClientSupplier | None = None,
    ) -> None:
        self.config = as_config(config)
        self._client_supplier = client_supplier
        if not self.config.application_id:
            raise StreamsError("config 'application_id' must be set to run a topology")
        self.topology = topology
        self.process_id = str(uuid.uuid4())
        self._state = State.CREATED
        self._lock = threading.RLock()
        self._listener: Callable[[State, State], None] | None = None
        self._handler: Callable[[BaseException], StreamThreadExceptionResponse] | None = None
        self._restore_listener: Any = None
        self._threads: list[StreamThread] = []
        self._responses: dict[StreamThread, StreamThreadExceptionResponse] = {}
        self._next_index = 1
        self._broker: contextlib.ExitStack | None = None
        self._setup: RuntimeSetup | None = None
        self._global_thread: GlobalStreamThread | None = None
        self.errors: list[BaseException] = []
        self._restore_progress: RestoreProgress | None = None
        self._server: Any = None  # the HTTP server (streams_runtime.server) when application_server is set
        self._queries = InteractiveQueries(
            lambda: self._setup, self._live_threads, lambda: self._state.name, lambda: self._restore_progress
        )

    # ------------------------------------------------------------------ state
    @property
    def state(self) -> State:
        return self._state

    def set_state_listener(self, listener: Callable[[State, State], None]) -> None:
        """``listener(new_state, old_state)``, called on every client state change."""
        self._require(State.CREATED, "set a state listener")
        self._listener = listener

    def set_uncaught_exception_handler(
        self, handler: Callable[[BaseException], StreamThreadExceptionResponse]
    ) -> None:
        self._require(State.CREATED, "set an uncaught exception handler")
        self._handler = handler

    def set_global_state_restore_listener(self, listener: object) -> None:
        """A :class:`~streams_runtime.StateRestoreListener` hearing every changelog restore of
        every thread of this client (called on the restoring stream thread)."""
        self._require(State.CREATED, "set a state restore listener")
        self._restore_listener = listener

    def _require(self, state: State, action: str) -> None:
        if self._state is not state:
            raise StreamsError(f"can only {action} in state {state.name}, the client is {self._state.name}")

    def _set_state(self, target: State) -> bool:
        with self._lock:
            old = self._state
            if old is target:
                return False
            if target not in _TRANSITIONS[old]:
                raise StreamsError(f"KafkaStreams: illegal transition {old.name} -> {target.name}")
            self._state = target
        log.info("KafkaStreams %s: state %s -> %s", self.process_id, old.name, target.name)
        if self._listener is not None:
            self._listener(target, old)
        return True

    def _on_thread_state(self, thread: StreamThread, old: str, new: str) -> None:
        with self._lock:
            if not self._state.is_running_or_rebalancing():
                return
            alive = [t for t in self._threads if t.is_alive_member()]
            if alive and all(t.state == RUNNING for t in alive):
                self._set_state(State.RUNNING)
            elif any(t.state != RUNNING for t in alive):
                self._set_state(State.REBALANCING)

    # ------------------------------------------------------------------ start / close
    def start(self) -> None:
        """The start steps of the module docstring; raises if topics are missing or mismatched."""
        self._require(State.CREATED, "start")
        stack = contextlib.ExitStack()
        try:
            # Step 1
            given = self.config.originals()
            bootstrap = given.get("bootstrap_servers")
            if not bootstrap and self._client_supplier is not None:
                bootstrap = "supplied-clients:0"  # the supplier's clients ignore it
            elif not bootstrap:
                from streams_runtime.brokers import bootstrap_or_embedded

                bootstrap = stack.enter_context(bootstrap_or_embedded(None))
            # Step 2
            self._setup = RuntimeSetup.prepare(
                self.topology,
                self.config,
                bootstrap,
                self.process_id,
                self._client_supplier or DEFAULT_CLIENT_SUPPLIER,
            )
            self._restore_progress = RestoreProgress(self._restore_listener)
            self._setup.restore_listener = self._restore_progress
            # Step 2b
            if self._setup.global_topics:
                self._global_thread = GlobalStreamThread(self._setup, self._on_global_death)
                self._setup.global_stores = self._global_thread.start_and_restore()
        except BaseException:
            if self._setup is not None:
                self._setup.close()
            self._global_thread = None
            stack.close()
            raise
        self._broker = stack
        # Step 3
        self._set_state(State.REBALANCING)
        with self._lock:
            for _ in range(self.config.num_stream_threads):
                self._new_thread().start()
        # Step 4
        if self.config.application_server:
            from streams_runtime.server.http_server import HttpServer

            try:
                self._server = HttpServer.start_for(self)
            except BaseException:
                self.close()
                raise

    def _new_thread(self) -> StreamThread:
        if self._setup is None:
            raise StreamsError("a stream thread needs the client's setup: call start() first")
        thread = StreamThread(
            self._setup, self._next_index, self._on_thread_state, self._on_thread_death, self._on_thread_error
        )
        self._next_index += 1
        self._threads.append(thread)
        return thread

    def close(self, timeout: float | None = None) -> bool:
        """Stop every thread (committing their tasks); True if all stopped within ``timeout`` s."""
        with self._lock:
            if self._state in (State.CREATED, State.REBALANCING, State.RUNNING):
                self._set_state(State.PENDING_SHUTDOWN)
            elif self._state in (State.NOT_RUNNING, State.ERROR):
                return True
        server, self._server = self._server, None
        if server is not None:
            server.stop()
        stopped = self._stop_threads(timeout)
        with self._lock:
            if self._state is State.PENDING_SHUTDOWN:
                self._set_state(State.NOT_RUNNING)
        return stopped

    def _stop_threads(self, timeout: float | None) -> bool:
        threads = [t for t in self._threads if t is not threading.current_thread()]
        for thread in threads:
            thread.shutdown()
        for thread in threads:
            if thread.ident is not None:
                thread.join(timeout)
        gthread = self._global_thread
        if gthread is not None and gthread is not threading.current_thread():
            gthread.shutdown()
            if gthread.ident is not None:
                gthread.join(timeout)
        stopped = all(not t.is_alive() for t in threads)
        if gthread is not None and gthread is not threading.current_thread():
            stopped = stopped and not gthread.is_alive()
        if self._setup is not None:
            self._setup.close()
        if self._broker is not None:
            self._broker.close()
            self._broker = None
        return stopped

    def __enter__(self) -> KafkaStreams:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ thread failures
    def _on_thread_error(self, thread: StreamThread, error: BaseException) -> bool:
        """On the failing thread, before it leaves the group: decide the response (kept for
        :meth:`_on_thread_death`); True when the thread must request an application shutdown."""
        with self._lock:
            if not self._state.is_running_or_rebalancing():
                return False
        response = self._response_to(error)
        with self._lock:
            self._responses[thread] = response
        return response is StreamThreadExceptionResponse.SHUTDOWN_APPLICATION

    def _response_to(self, error: BaseException) -> StreamThreadExceptionResponse:
        if isinstance(error, ApplicationShutdownRequestedError):  # the application's decision, not ours
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT
        if self._handler is not None:
            try:
                return self._handler(error)
            except Exception:
                log.exception("the uncaught exception handler raised; shutting the client down")
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT

    def _on_thread_death(self, thread: StreamThread) -> None:
        with self._lock:
            if thread in self._threads:
                self._threads.remove(thread)
            response = self._responses.pop(thread, None)
            error = thread.error
            if error is None or not self._state.is_running_or_rebalancing():
                return
            self.errors.append(error)
        if response is None:  # failed while shutting down, after its loop ended cleanly
            response = self._response_to(error)
        log.error("stream thread %s died (%s); response %s", thread.name, error, response.name)
        if response is StreamThreadExceptionResponse.REPLACE_THREAD:
            with self._lock:
                if self._state.is_running_or_rebalancing():
                    self._new_thread().start()
            return
        if response is StreamThreadExceptionResponse.SHUTDOWN_APPLICATION:
            log.error(
                "SHUTDOWN_APPLICATION: every instance of %s was asked to shut down",
                self.config.application_id,
            )
        with self._lock:
            if not self._set_state_if(State.PENDING_ERROR):
                return
        threading.Thread(target=self._finish_error, name="kafka-streams-error-shutdown", daemon=True).start()

    def _on_global_death(self, thread: GlobalStreamThread) -> None:
        """The global thread stopped: on an error while running, shut the client down."""
        with self._lock:
            if thread.error is None or not self._state.is_running_or_rebalancing():
                return
            self.errors.append(thread.error)
            log.error(
                "global stream thread %s died (%s); shutting the client down", thread.name, thread.error
            )
            if not self._set_state_if(State.PENDING_ERROR):
                return
        threading.Thread(target=self._finish_error, name="kafka-streams-error-shutdown", daemon=True).start()

    def _set_state_if(self, target: State) -> bool:
        if target in _TRANSITIONS[self._state]:
            return self._set_state(target)
        return False

    def _finish_error(self) -> None:
        self._stop_threads(None)
        self._set_state(State.ERROR)

    # ------------------------------------------------------------------ runtime changes
    def add_stream_thread(self) -> str | None:
        """Start one more thread; its name, or None when the client is not running."""
        with self._lock:
            if not self._state.is_running_or_rebalancing():
                return None
            thread = self._new_thread()
            thread.start()
            return thread.name

    def remove_stream_thread(self, timeout: float | None = None) -> str | None:
        """Stop the newest running thread (its tasks move through a rebalance); its name or None."""
        with self._lock:
            if not self._state.is_running_or_rebalancing():
                return None
            alive = [t for t in self._threads if t.is_alive_member()]
            if not alive:
                return None
            thread = alive[-1]
        thread.shutdown()
        thread.join(timeout)
        return thread.name

    def metadata_for_local_threads(self) -> list[ThreadMetadata]:
        """One ThreadMetadata per live thread: its state, active and standby (incl. warm-up)
        tasks with their partitions."""
        with self._lock:
            threads = [t for t in self._threads if t.state != DEAD]
        return [
            ThreadMetadata(
                t.name,
                t.state,
                frozenset(TaskMetadata(task, parts) for task, parts in t.active_tasks.items()),
                frozenset(TaskMetadata(task, parts) for task, parts in t.standby_tasks.items()),
            )
            for t in threads
        ]

    def global_store(self, name: str) -> Any:
        """The global store ``name`` (shared by every task of this client; read it, never write it),
        or None; available once start() returned."""
        return self._setup.global_stores.get(name) if self._setup is not None else None

    def rebuild_state(
        self, store_name: str, tasks: Iterable[str | TaskId] | None = None, timeout: float = 120.0
    ) -> list[dict[str, Any]]:
        """Rebuild ``store_name`` from its changelog in every local active task owning it (or only
        in ``tasks``, ids like ``"0_1"``): close cleanly, wipe, restore, resume; one report dict per
        task (records restored, store key count vs the changelog's live keys, ``ok``). Protocol and
        report fields: :mod:`streams_runtime.processor.internals.state_rebuild`.

        :raises StreamsError: the client is not running, the store is unknown
            (``UnknownStoreError``), a given task is not active here (``TasksNotOwnedError``), or
            the restore did not finish within ``timeout`` seconds (``RebuildTimeoutError``).
        """
        from streams_runtime.processor.internals.state_rebuild import StateRebuilder

        with self._lock:
            if not self._state.is_running_or_rebalancing() or self._setup is None:
                raise StreamsError(
                    f"rebuild_state() needs a running client; the client is {self._state.name}"
                )
            threads = [t for t in self._threads if t.is_alive_member()]
        rebuilder = StateRebuilder(
            threads, self._setup.subtopologies, self._setup.bootstrap_servers, self._setup.client_supplier
        )
        return rebuilder.rebuild(store_name, tasks, timeout)

    # ------------------------------------------------------------------ interactive queries, metrics
    def _live_threads(self) -> list[StreamThread]:
        with self._lock:
            return [t for t in self._threads if t.is_alive_member()]

    def store(self, name: str, allow_stale: bool = False, partition: int | None = None) -> Any:
        """A read-only view of store ``name`` over this client's local replicas (Kafka Streams'
        ``store(StoreQueryParameters)``): key-value ``get/range/all/approximate_num_entries``, window
        ``fetch/fetch_range/fetch_all/all``, session ``fetch/find_sessions``. A key whose partition is
        not hosted here, or whose task is restoring, raises InvalidStateStoreError (a subclass says
        which); ``allow_stale`` lets standby replicas answer; ``partition`` limits the view to one."""
        return self._queries.store(name, allow_stale, partition)

    def query_metadata_for_key(
        self, store: str, key: object, key_serializer: KeySerializer | None = None
    ) -> KeyQueryMetadata:
        """KeyQueryMetadata(active_host, standby_hosts, partition) of ``key`` in ``store``."""
        return self._queries.query_metadata_for_key(store, key, key_serializer)

    def all_metadata(self) -> list[Any]:
        """StreamsMetadata of every instance of the application (from the last assignment)."""
        return self._queries.all_metadata()

    def all_metadata_for_store(self, name: str) -> list[Any]:
        """StreamsMetadata of the instances hosting ``name`` (active or standby)."""
        return self._queries.all_metadata_for_store(name)

    def all_local_store_partition_lags(self) -> dict[str, dict[int, Any]]:
        """``{store: {partition: LagInfo}}`` for every local replica (see InteractiveQueries)."""
        return self._queries.all_local_store_partition_lags()

    @property
    def interactive_queries(self) -> InteractiveQueries:
        """The query side of this client (what the HTTP API uses); read-only."""
        return self._queries

    @property
    def restore_progress(self) -> RestoreProgress | None:
        """Per changelog partition restore progress of this client (None before start)."""
        return self._restore_progress

    def local_threads(self) -> list[StreamThread]:
        """The live StreamThreads (for the metrics and health endpoints; read-only use)."""
        return self._live_threads()

    def clean_up(self) -> None:
        """Delete this application's local state directory; only while not running."""
        if self._state.is_running_or_rebalancing() or self._state is State.PENDING_SHUTDOWN:
            raise StreamsError(f"clean_up() needs a stopped client; the client is {self._state.name}")
        root = RuntimeSetup.state_root(self.config)
        shutil.rmtree(root, ignore_errors=True)
