"""Free TCP ports for a test's servers: the package's allocator (one definition for every test
that binds one), which picks below the ephemeral range and claims each port for the test process."""

from __future__ import annotations

from streams_runtime.brokers import free_port, free_ports

__all__ = ["free_port", "free_ports"]
