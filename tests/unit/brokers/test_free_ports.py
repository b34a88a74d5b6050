"""The port allocator every local server is started on: below the ephemeral range, claimed per
process. A free port picked from the OS's range could be taken by any outgoing connection before
the server bound it (a worker's second instance once failed with "address already in use" on the
neighbour of an OS-assigned port)."""

from __future__ import annotations

import random
import socket
import subprocess
import sys

from streams_runtime.kafka import local_processes
from streams_runtime.kafka.local_processes import ephemeral_port_range, free_ports, port_in_use


def test_ports_come_from_below_the_ephemeral_range_and_are_bindable() -> None:
    low = ephemeral_port_range()[0]
    for count in (1, 2, 3):
        base = free_ports(count)
        assert local_processes.LOWEST_PORT <= base and base + count <= low
        servers = [socket.create_server(("127.0.0.1", port)) for port in range(base, base + count)]
        for server in servers:
            server.close()


def test_a_process_never_gets_the_same_port_twice() -> None:
    ports = [free_ports() for _ in range(300)]
    assert len(set(ports)) == 300


def test_a_port_claimed_by_a_live_process_is_not_handed_to_another() -> None:
    mine = {free_ports() for _ in range(300)}
    script = "from streams_runtime.brokers import free_ports; print(*[free_ports() for _ in range(2000)])"
    theirs = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    other = {int(port) for port in theirs.stdout.split()}
    assert len(other) == 2000 and not mine & other


def test_a_port_another_server_holds_is_skipped(monkeypatch) -> None:
    taken = socket.create_server(("127.0.0.1", 0))  # bound outside the allocator
    port = taken.getsockname()[1]
    monkeypatch.setattr(local_processes, "ephemeral_port_range", lambda: (65000, 65535))  # port is in range
    picks, real = iter([port, port - 1]), random.Random()  # port alone, then the run of two ending at it

    class Picks:
        def randrange(self, low: int, high: int) -> int:
            return next(picks, None) or real.randrange(low, high)

    monkeypatch.setattr(local_processes.random, "Random", Picks)
    try:
        assert port_in_use(port)
        assert free_ports(1) != port
        assert free_ports(2) not in (port - 1, port)
        assert next(picks, None) is None  # both taken picks were tried
    finally:
        taken.close()
