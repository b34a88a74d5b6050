"""Hosts on a real network for the multi-host tests: Linux network namespaces on one bridge.

:class:`HostNetwork` makes ``count`` namespaces ("hosts"), each with one end of a veth pair as its
only interface besides loopback; the other ends are ports of a bridge in the root namespace. The
bridge has an address too (the "gateway"), so the test process itself, in the root namespace,
reaches every host (it produces, reads and asks the HTTP APIs through it), but no host reaches
another except across the bridge: a packet between two hosts leaves one namespace's stack, crosses
two veth pairs and the bridge, and enters the other's. :meth:`HostNetwork.cut` takes a host's
bridge port down (its address stays, nothing reaches it or leaves it: what a pulled cable does),
:meth:`HostNetwork.restore` brings it back.

Names are unique per run: ``srt-<pid>-<run>-<i>`` for the namespaces, ``srt<run>br`` for the
bridge, ``srt<run>h<i>`` / ``srt<run>p<i>`` for the two ends of host ``i``'s veth pair (interface
names are at most 15 characters). The subnet is a /24 of 10.0.0.0/8 that no route of the root
namespace covers. :meth:`HostNetwork.close` (also on failure) kills what still runs in the
namespaces, deletes them and the bridge; a run killed before its teardown leaves its namespaces
behind, and the next :meth:`HostNetwork.start` deletes those whose process is gone.

Needs ``ip`` (iproute2) and the right to create namespaces (root, or CAP_SYS_ADMIN and
CAP_NET_ADMIN): :class:`NamespacesUnavailable` says which is missing.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import random
import re
import shutil
import signal
import subprocess
import uuid
from dataclasses import dataclass

from streams_runtime.kafka.local_processes import pid_alive

PREFIX = "srt"
_NAMESPACE = re.compile(rf"^{PREFIX}-(\d+)-([0-9a-f]{{6}})-\d+$")


class NamespacesUnavailable(Exception):
    """Network namespaces cannot be made here; the message says why (for a skip)."""


@dataclass(frozen=True)
class Host:
    """One namespace: its name, its address on the bridge, the bridge-side end of its veth pair."""

    namespace: str
    address: str
    link: str

    def command(self, *argv: str) -> list[str]:
        """``argv`` run inside this host's namespace (``ip netns exec``: the same process, its
        network namespace switched before the exec)."""
        return ["ip", "netns", "exec", self.namespace, *argv]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


class HostNetwork:
    """``count`` hosts on one bridge (module docstring); a context manager."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.run = uuid.uuid4().hex[:6]
        self.bridge = f"{PREFIX}{self.run}br"
        self.hosts: list[Host] = []
        self.gateway = ""
        self._namespaces: list[str] = []

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> HostNetwork:
        """Check that namespaces can be made here, remove leftovers of dead runs, build the network."""
        if shutil.which("ip") is None:
            raise NamespacesUnavailable("the `ip` command (iproute2) is not installed")
        sweep_stale()
        probe = f"{PREFIX}-{os.getpid()}-{self.run}-probe"
        done = _ip("netns", "add", probe, check=False)
        if done.returncode != 0:
            raise NamespacesUnavailable(
                f"cannot create a network namespace (`ip netns add` answered: {done.stderr.strip()}); "
                f"it needs root or CAP_SYS_ADMIN and CAP_NET_ADMIN (running as uid {os.getuid()})"
            )
        _ip("netns", "del", probe, check=False)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self) -> None:
        subnet = free_subnet()
        hosts = list(subnet.hosts())
        self.gateway = str(hosts[-1])
        _ip("link", "add", self.bridge, "type", "bridge")
        # frames between the hosts are bridged, not routed: where br_netfilter is loaded they would
        # also cross the root namespace's iptables (a FORWARD policy of DROP, as Docker sets, would
        # drop them); this bridge's frames skip it (older kernels lack the option: best effort)
        _ip(
            "link", "set", self.bridge, "type", "bridge",
            "nf_call_iptables", "0", "nf_call_ip6tables", "0", "nf_call_arptables", "0",
            check=False,
        )  # fmt: skip
        _ip("addr", "add", f"{self.gateway}/{subnet.prefixlen}", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i in range(self.count):
            namespace = f"{PREFIX}-{os.getpid()}-{self.run}-{i}"
            outside, inside = f"{PREFIX}{self.run}h{i}", f"{PREFIX}{self.run}p{i}"
            _ip("netns", "add", namespace)
            self._namespaces.append(namespace)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", namespace)
            _ip("link", "set", outside, "master", self.bridge)
            _ip("link", "set", outside, "up")
            address = str(hosts[i])
            _ip("-n", namespace, "addr", "add", f"{address}/{subnet.prefixlen}", "dev", inside)
            _ip("-n", namespace, "link", "set", inside, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            self.hosts.append(Host(namespace, address, outside))

    def close(self) -> None:
        """Kill what runs in the namespaces, delete them and the bridge (errors are ignored: what
        could not go is left to the next run's sweep)."""
        for namespace in self._namespaces:
            _kill_inside(namespace)
            _ip("netns", "del", namespace, check=False)
        self._namespaces.clear()
        _ip("link", "del", self.bridge, check=False)

    def __enter__(self) -> HostNetwork:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ faults
    def cut(self, host: Host) -> None:
        """Take ``host``'s bridge port down: nothing reaches the host or leaves it."""
        _ip("link", "set", host.link, "down")

    def restore(self, host: Host) -> None:
        _ip("link", "set", host.link, "up")


def free_subnet() -> ipaddress.IPv4Network:
    """A random /24 of 10.0.0.0/8 that overlaps no route of the root namespace."""
    routes = json.loads(_ip("-j", "-4", "route", "show", "table", "all").stdout or "[]")
    taken = []
    for route in routes:
        dst = route.get("dst", "")
        if dst and dst != "default":
            with contextlib.suppress(ValueError):
                taken.append(ipaddress.ip_network(dst, strict=False))
    for _ in range(100):
        candidate = ipaddress.ip_network(f"10.{random.randint(100, 254)}.{random.randint(0, 255)}.0/24")
        if not any(candidate.overlaps(net) for net in taken if net.version == 4):
            return candidate
    raise RuntimeError("no free /24 in 10.0.0.0/8 for the test network")


def _kill_inside(namespace: str) -> None:
    pids = _ip("netns", "pids", namespace, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def sweep_stale() -> None:
    """Delete the namespaces (and bridges) of runs whose process is gone."""
    listed = _ip("netns", "list", check=False).stdout.split("\n")
    for line in listed:
        name = line.split(" ")[0]
        match = _NAMESPACE.match(name)
        if not match or pid_alive(int(match.group(1))):
            continue
        _kill_inside(name)
        _ip("netns", "del", name, check=False)
        _ip("link", "del", f"{PREFIX}{match.group(2)}br", check=False)
