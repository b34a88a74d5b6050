"""A free TCP port for a test's server (one definition for every test that binds one)."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS has just handed out on ``host`` and released: free unless taken in between,
    which for ports from the ephemeral range is rare enough for tests."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])
