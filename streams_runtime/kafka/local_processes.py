"""What the local broker launchers share: ports, processes, logs and the CLI's state file.

The launchers (:mod:`.tansu`, :mod:`.apache_kafka`) run brokers as child processes in their own
sessions, so a broker started by ``streams-runtime broker start`` outlives the command; the state
file records what a later ``broker stop`` or ``broker status`` needs (kind, pids, address, logs).
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HOST = "127.0.0.1"


#: names the home outright (as ``AIRFLOW_HOME`` does Airflow's)
HOME_ENV = "STREAMS_RUNTIME_HOME"
#: the home's directory name, in a project or in the checkout the package runs from
HOME_DIR = ".streams-runtime"


def runtime_home() -> Path:
    """The project's home: where the recorded broker (``broker.json``), logs and local state live.

    The first of:

    1. ``$STREAMS_RUNTIME_HOME``;
    2. the nearest ``.streams-runtime/`` in the current directory or above it, as git finds
       ``.git`` (a project keeps its own);
    3. the ``.streams-runtime/`` of the source checkout this package runs from (an editable
       install, as ``make setup`` makes), whether or not it exists yet: what ``make demo`` and
       ``make broker-start`` use, found the same from any directory;
    4. ``./.streams-runtime`` (a package installed from a wheel, no home anywhere).

    Every command reads the home through this function, so one that records a broker and one
    that looks for it agree wherever each is started.
    """
    configured = os.environ.get(HOME_ENV)
    if configured:
        return Path(configured).resolve()
    cwd = Path.cwd().resolve()
    for directory in (cwd, *cwd.parents):
        if (directory / HOME_DIR).is_dir():
            return directory / HOME_DIR
    checkout = source_checkout()
    if checkout is not None:
        return checkout / HOME_DIR
    return cwd / HOME_DIR


def source_checkout() -> Path | None:
    """The checkout this package is imported from (its ``pyproject.toml`` next to the package), or
    None when the package is installed (site-packages holds no ``pyproject.toml``)."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "streams_runtime").is_dir() else None


def default_state_file() -> Path:
    """Where ``streams-runtime broker start`` records the broker it started (see :class:`BrokerInfo`)."""
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


#: where :func:`free_ports` claims ports: one lock file per port, held while the claimer lives
PORT_CLAIMS = Path(tempfile.gettempdir()) / f"streams-runtime-ports-{os.getuid()}"
#: the lowest port handed out (above the well-known and most registered services' ports)
LOWEST_PORT = 20000
_claims: dict[int, int] = {}  # port -> descriptor of its locked claim file, kept until exit


def ephemeral_port_range() -> tuple[int, int]:
    """The ports Linux gives outgoing connections and ``bind(0)`` (32768-60999 by default)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_ports(count: int = 1, host: str = HOST) -> int:
    """The first of ``count`` consecutive ports free on ``host``, claimed for this process.

    Not an OS-assigned port: that comes from the ephemeral range, where every client connection
    on the machine takes its local port (Linux gives ``bind(0)`` odd ports and outgoing
    connections even ones, so an OS-assigned port's neighbour is the likeliest port of all to be
    taken before a server binds it). These come from below that range, where only a process
    binding a port on purpose can take one; and each is claimed with a lock file, held until this
    process exits, so no other process picking through this function gets it while this one
    may still hand it to a server.
    """
    low = LOWEST_PORT
    high = ephemeral_port_range()[0] - count
    if high - low < 1000:  # an unusual ephemeral range: take what the OS gives
        return _os_assigned_ports(count, host)
    PORT_CLAIMS.mkdir(parents=True, exist_ok=True)
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(low, high)
        claimed = [port for port in range(base, base + count) if _claim(port)]
        if len(claimed) == count and not any(port_in_use(port, host, reuse=False) for port in claimed):
            return base
        for port in claimed:
            os.close(_claims.pop(port))
    raise RuntimeError(f"no {count} consecutive free ports between {low} and {high + count} on {host}")


def free_port(host: str = HOST) -> int:
    """One port from :func:`free_ports`."""
    return free_ports(1, host)


def _claim(port: int) -> bool:
    if port in _claims:
        return False
    descriptor = os.open(PORT_CLAIMS / str(port), os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return False
    _claims[port] = descriptor
    return True


def _os_assigned_ports(count: int, host: str) -> int:
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            base: int = sock.getsockname()[1]
        if not any(port_in_use(base + offset, host, reuse=False) for offset in range(1, count)):
            return base
    raise RuntimeError(f"no {count} consecutive free ports on {host}")


def port_in_use(port: int, host: str = HOST, *, reuse: bool = True) -> bool:
    """Whether a server could not bind ``host:port`` now (with ``reuse``, as servers bind: a port
    whose last connection lingers in TIME_WAIT counts as free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if reuse:
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
