"""What the local broker launchers share: ports, processes, logs and the CLI's state file.

The launchers (:mod:`.tansu`, :mod:`.apache_kafka`) run brokers as child processes in their own
sessions, so a broker started by ``streams-runtime broker start`` outlives the command; the state
file records what a later ``broker stop`` or ``broker status`` needs (kind, pids, address, logs).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HOST = "127.0.0.1"


def runtime_home() -> Path:
    """Where the CLI keeps broker state and logs: ``$STREAMS_RUNTIME_HOME`` or ``./.streams-runtime``."""
    return Path(os.environ.get("STREAMS_RUNTIME_HOME", ".streams-runtime")).resolve()


def default_state_file() -> Path:
    return runtime_home() / "broker.json"


@dataclass(frozen=True)
class BrokerInfo:
    """What a running local broker leaves in its state file for other commands.

    ``pid`` is the first node's process; ``pids`` lists every node's (one for Tansu).
    """

    pid: int
    bootstrap_servers: str
    log_file: str
    started_at: float
    kind: str = "tansu"
    pids: list[int] = field(default_factory=list)
    data_dir: str | None = None

    @property
    def all_pids(self) -> list[int]:
        return self.pids or [self.pid]

    @classmethod
    def read(cls, path: Path) -> BrokerInfo | None:
        try:
            return cls(**json.loads(path.read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(path)


def pid_alive(pid: int) -> bool:
    """True while a process with ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def rss_bytes(pid: int) -> int | None:
    """Resident set size of ``pid`` (``VmRSS`` of ``/proc/<pid>/status``), None when unknown."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_in_use(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
        return False


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log written)"


def stop_pid(pid: int, timeout: float = 1.0, process: subprocess.Popen[bytes] | None = None) -> bool:
    """Terminate ``pid`` (SIGTERM, then SIGKILL after ``timeout``); return True once it is gone."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                return True
            if process is None and not pid_alive(pid):
                return True
            time.sleep(0.05)
    if process is not None:
        process.poll()
    return not pid_alive(pid)
