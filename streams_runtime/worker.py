"""The worker launcher: run one topology as N instances (processes) x M stream threads.

    streams-runtime worker --app mypkg.app:app --instances 3 --threads 2

The app convention: ``--app module:attr`` names a function taking no argument that returns
``(topology, config)`` -- a :class:`~streams_runtime.Topology` and a config mapping that holds at
least ``application_id`` -- or returns a bare Topology built with a config
(``builder.build({"application_id": ...})``). The attribute may also be such a pair or Topology
itself. The module is imported from the current directory first, as ``python -m`` would::

    def app() -> tuple[Topology, dict]:
        builder = StreamsBuilder()
        ...
        return builder.build({"application_id": "payments"}), {"application_id": "payments"}

Steps of :func:`run_worker` (the launcher process):
  1. load the app once to learn its topology and config;
  2. find Kafka (:mod:`streams_runtime.brokers.bootstrap`): ``--bootstrap-servers``, the app
     config's ``bootstrap_servers``, ``$BOOTSTRAP_SERVERS``, the broker recorded in the project's
     home; else, after a warning, a throwaway embedded broker living as long as the launcher (so
     all instances share it);
  3. read the partition counts of the user topics (sources, sinks, the dead-letter topic): a
     missing one stops here with the runtime's own message naming every missing topic and how to
     create it (:mod:`streams_runtime.processor.internals.user_topics`), before any instance
     starts; then print the parallelism math (:mod:`streams_runtime.parallelism`);
  4. start N instance processes (:mod:`streams_runtime.worker_instance`), each running one
     KafkaStreams with M threads in its own state dir ``<state_dir>/instance-<i>``;
  5. wait: an instance that exits on its own is reported with its exit code (the survivors take
     its tasks over); when none is left the launcher exits 1;
  6. on SIGTERM/SIGINT: send SIGTERM to every instance (each closes its KafkaStreams), wait for
     them, kill any that outlive the close timeout, and exit 0 when every instance closed cleanly
     (1 when one failed or was killed).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from streams_runtime.config import StreamsConfig
from streams_runtime.errors import StreamsError
from streams_runtime.parallelism import ParallelismPlan, plan_parallelism
from streams_runtime.processor.internals.user_topics import check_user_topics, dead_letter_topic, user_topics
from streams_runtime.processor.topology import Topology

#: The KafkaStreams class the instances run; the launcher's ``runtime`` argument replaces it.
DEFAULT_RUNTIME = "streams_runtime.kafka_streams:KafkaStreams"
#: Each instance publishes its client state and thread tasks here, in its state dir.
STATUS_FILE = "status.json"
#: Environment variable holding the HTTP API's bearer token (``application_server_token``); read by
#: each instance, so the token never appears on a command line.
HTTP_TOKEN_ENV = "STREAMS_RUNTIME_HTTP_TOKEN"
#: Environment variable holding the instances' shared forwarding secret
#: (``application_server_forwarding_secret``), kept off the command line like the token.
FORWARDING_SECRET_ENV = "STREAMS_RUNTIME_FORWARDING_SECRET"


class WorkerError(StreamsError):
    """The worker cannot start: a bad ``--app``, a bad count. (A missing topic raises the
    runtime's own ``MissingSourceTopicError`` or ``MissingSinkTopicError``.)"""


@dataclass(frozen=True)
class AppDefinition:
    """What ``--app`` names: the topology and the user's config (keys as given)."""

    topology: Topology
    config: dict[str, Any]

    @property
    def application_id(self) -> str:
        return str(self.config["application_id"])


def import_attr(spec: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise WorkerError(f"--app must look like 'module:attr', got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise WorkerError(f"cannot import module {module_name!r} of --app {spec!r}: {exc}") from exc
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise WorkerError(f"module {module_name!r} has no attribute {attr!r} (--app {spec!r})") from None
    return target


def load_app(spec: str) -> AppDefinition:
    """Import ``module:attr`` and turn it into an :class:`AppDefinition` (convention above).

    :raises WorkerError: naming what is wrong with the spec or what the attribute returned.
    """
    made = import_attr(spec)
    if callable(made) and not isinstance(made, Topology):
        made = made()
    if isinstance(made, Topology):
        topology, config = made, made.config
    elif isinstance(made, tuple) and len(made) == 2 and isinstance(made[0], Topology):
        topology, config = made
    else:
        raise WorkerError(
            f"--app {spec!r} must return a Topology or a (Topology, config) pair, got {type(made).__name__}"
        )
    if isinstance(config, StreamsConfig):
        config = config.originals()
    config = dict(config or {})
    if not config.get("application_id"):
        raise WorkerError(f"--app {spec!r}: the config has no 'application_id'")
    return AppDefinition(topology, config)


def user_source_topics(topology: Topology) -> list[str]:
    """Source topics that the user owns (internal repartition topics excluded), sorted."""
    internal = set(topology.internal_topics())
    return sorted({t for t in topology.source_topics() if t not in internal})


def check_topics(app: AppDefinition, partitions: Mapping[str, int], bootstrap_servers: str | None) -> None:
    """Step 3: every user topic of the app exists (the rule KafkaStreams.start() applies).

    :param partitions: the cluster's partition counts of (at least) :func:`topics_to_check`.
    :raises MissingSourceTopicError: naming every missing topic and how to create it.
    :raises MissingSinkTopicError: the same, when only topics the app writes are missing.
    """
    check_user_topics(
        app.topology.internal_builder,
        partitions,
        dead_letter_topic=dead_letter_topic(StreamsConfig(app.config)),
        bootstrap_servers=bootstrap_servers,
        application_id=app.application_id,
    )


def topics_to_check(app: AppDefinition) -> list[str]:
    """The user topics of the app (the source topics first named by :func:`user_source_topics`)."""
    config = StreamsConfig(app.config)
    named = user_topics(app.topology.internal_builder, dead_letter_topic(config))
    return sorted({*user_source_topics(app.topology), *named})


def plan_for(
    topology: Topology, partitions: Mapping[str, int], instances: int, threads: int
) -> ParallelismPlan:
    """The parallelism plan of ``topology`` for the partition counts of its user source topics
    (checked to exist by :func:`check_topics` first)."""
    return plan_parallelism(topology.task_counts(partitions), instances, threads)


def _say_with_prefix(line: str) -> None:
    print(f"[worker] {line}", flush=True)


@dataclass(eq=False)
class WorkerLauncher:
    """Starts, watches and stops the instance processes of one app (steps 4-6 of the module).

    Owned by the launcher process; the instances are its child processes, each in the launcher's
    process group (a terminal's Ctrl-C reaches them too; both paths end in the same clean close).

    :param say: where progress lines go (default: print with a ``[worker]`` prefix).
    """

    app_spec: str
    _: KW_ONLY
    instances: int
    threads: int
    bootstrap_servers: str
    state_dir: Path
    runtime: str = DEFAULT_RUNTIME
    close_timeout: float = 30.0
    verbose: bool = False
    say: Callable[[str], None] = _say_with_prefix
    #: instance i serves its HTTP API (queries, metrics, health) on http_port + i
    http_port: int | None = None
    #: advertised host of application_server (default: the app's, else loopback)
    http_host: str | None = None
    #: address the HTTP servers bind (application_server_bind; default: the app's, else
    #: http_host, else loopback)
    http_bind: str | None = None
    #: given to the instances in $STREAMS_RUNTIME_FORWARDING_SECRET (else they inherit the launcher's)
    forwarding_secret: str | None = None
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict, init=False)
    exit_codes: dict[int, int] = field(default_factory=dict, init=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)

    def __post_init__(self) -> None:
        if self.instances < 1 or self.threads < 1:
            raise WorkerError(
                f"--instances and --threads must be >= 1, got {self.instances} and {self.threads}"
            )

    def command(self, index: int) -> list[str]:
        """The command line of instance ``index``."""
        cmd = [
            sys.executable,
            "-m",
            "streams_runtime.worker_instance",
            "--app",
            self.app_spec,
            "--instance",
            str(index),
            "--threads",
            str(self.threads),
            "--bootstrap-servers",
            self.bootstrap_servers,
            "--state-dir",
            str(self.state_dir / f"instance-{index}"),
            "--runtime",
            self.runtime,
            "--close-timeout",
            str(self.close_timeout),
        ]
        if self.http_port is not None:
            cmd += ["--http-port", str(self.http_port + index)]
        if self.http_host:
            cmd += ["--http-host", self.http_host]
        if self.http_bind:
            cmd += ["--http-bind", self.http_bind]
        return cmd + (["--verbose"] if self.verbose else [])

    def start(self) -> None:
        """Start every instance process."""
        for index in range(self.instances):
            (self.state_dir / f"instance-{index}" / STATUS_FILE).unlink(missing_ok=True)
            env = dict(os.environ)
            # a single instance on a terminal may draw restore progress bars (several would mix)
            if self.instances == 1 and sys.stdout.isatty():
                env["STREAMS_RUNTIME_PROGRESS_BARS"] = "1"
            if self.forwarding_secret:
                env[FORWARDING_SECRET_ENV] = self.forwarding_secret
            process = subprocess.Popen(self.command(index), cwd=os.getcwd(), env=env)
            self.processes[index] = process
            state = self.state_dir / f"instance-{index}"
            self.say(f"instance {index} started (pid {process.pid}, state {state})")

    def statuses(self) -> dict[int, dict[str, Any]]:
        """Instance -> its last published ``{"pid", "state", "threads": {name: [task ids]}}``.

        Instances that have published nothing yet (or whose file is mid-replace) are left out.
        """
        found: dict[int, dict[str, Any]] = {}
        for index in self.processes:
            try:
                found[index] = json.loads((self.state_dir / f"instance-{index}" / STATUS_FILE).read_text())
            except (OSError, ValueError):
                continue
        return found

    def alive(self) -> list[int]:
        return [i for i, p in self.processes.items() if i not in self.exit_codes and p.poll() is None]

    def reap(self) -> dict[int, int]:
        """Collect instances that exited since the last call; report each with its exit code."""
        gone: dict[int, int] = {}
        for index, process in self.processes.items():
            if index in self.exit_codes or process.poll() is None:
                continue
            code = process.returncode
            self.exit_codes[index] = code
            gone[index] = code
            if not self._stopping.is_set():
                self.say(f"instance {index} (pid {process.pid}) died with exit code {code}")
        return gone

    def stop(self) -> bool:
        """Close every live instance (SIGTERM, then SIGKILL after the close timeout).

        :returns: True when every instance that was still running exited with code 0.
        """
        self._stopping.set()
        self.reap()
        running = self.alive()
        for index in running:
            self.processes[index].send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.close_timeout + 5
        clean = True
        for index in running:
            process = self.processes[index]
            try:
                code = process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
                self.say(f"instance {index} (pid {process.pid}) did not close in time; killed")
            self.exit_codes[index] = code
            if code == 0:
                self.say(f"instance {index} closed cleanly")
            else:
                clean = False
                self.say(f"instance {index} exited with code {code} while closing")
        return clean

    def request_stop(self) -> None:
        """Ask :meth:`wait_until_stopped` to stop the instances (signal-handler safe)."""
        self._stopping.set()

    def wait_until_stopped(self, poll_s: float = 0.2) -> int:
        """Watch the instances until a stop is requested or none is left; return the exit code."""
        while not self._stopping.is_set():
            self.reap()
            if not self.alive():
                self.say("no instance is left running")
                return 1
            self._stopping.wait(poll_s)
        failed_before = any(code != 0 for code in self.exit_codes.values())
        clean = self.stop()
        return 0 if clean and not failed_before else 1

    def run_until_signal(self) -> int:
        """Start the instances, stop them on SIGTERM/SIGINT; return the launcher's exit code."""

        def on_signal(signum: int, frame: object) -> None:
            self.request_stop()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            code = self.wait_until_stopped()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
        self.say("stopped" if code == 0 else f"stopped with exit code {code}")
        return code


def run_worker(
    app_spec: str,
    *,
    instances: int = 1,
    threads: int = 1,
    bootstrap_servers: str | None = None,
    state_dir: str | None = None,
    runtime: str = DEFAULT_RUNTIME,
    verbose: bool = False,
    http_port: int | None = None,
    http_host: str | None = None,
    http_bind: str | None = None,
    connect_timeout: float | None = None,
) -> int:
    """The ``streams-runtime worker`` command (steps 1-6 of the module); returns the exit code.

    :param connect_timeout: seconds the Kafka found may take to answer (None: not checked).
    """
    from streams_runtime.brokers import bootstrap_or_throwaway, runtime_home
    from streams_runtime.kafka.clients import create_admin, partition_counts

    # Step 1
    app = load_app(app_spec)
    if instances < 1 or threads < 1:
        raise WorkerError(f"--instances and --threads must be >= 1, got {instances} and {threads}")
    state = state_dir or app.config.get("state_dir") or str(runtime_home() / "state")
    # Step 2
    given, given_by = bootstrap_servers, "--bootstrap-servers"
    if not given:
        given, given_by = app.config.get("bootstrap_servers"), f"the bootstrap_servers of {app_spec}"
    with bootstrap_or_throwaway(
        given,
        given_by=given_by,
        warn=lambda text: print(f"[worker] WARNING: {text}", file=sys.stderr, flush=True),
        connect_timeout=connect_timeout,
    ) as kafka:
        servers = kafka.servers
        print(
            f"[worker] app {app.application_id} from {app_spec}; Kafka at {servers} ({kafka.source})",
            flush=True,
        )
        # Step 3
        topics = user_source_topics(app.topology)
        counts = partition_counts(create_admin(servers), topics_to_check(app))
        check_topics(app, counts, servers)
        plan = plan_for(app.topology, counts, instances, threads)
        sources = ", ".join(f"{t} ({counts[t]} partitions)" for t in topics)
        print(f"[worker] source topics: {sources}", flush=True)
        for line in plan.report():
            print(f"[worker] {line}", flush=True)
        # Steps 4-6
        launcher = WorkerLauncher(
            app_spec,
            instances=instances,
            threads=threads,
            bootstrap_servers=servers,
            state_dir=Path(state),
            runtime=runtime,
            verbose=verbose,
            http_port=http_port,
            http_host=http_host,
            http_bind=http_bind,
        )
        return launcher.run_until_signal()
