"""Condition waits shared by the tests: poll until a condition holds or a deadline passes.

A test never sleeps for a fixed time to let something happen; it waits for the thing itself
(a record, a state, a committed offset) and fails naming what did not happen.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    predicate: Callable[[], bool], timeout: float, what: str | Callable[[], str], interval: float = 0.05
) -> None:
    """Return once ``predicate()`` is true; raise ``AssertionError`` naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            description = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout}s waiting for {description}")
        time.sleep(interval)


def wait_committed(
    bootstrap_servers: str, group_id: str, topic: str, partitions: int, timeout: float = 30.0
) -> None:
    """Wait until ``group_id`` has committed every record of ``topic`` (its lag, measured from the
    true end of each partition, is 0)."""
    from streams_ops.offsets import measure_consumer_lag

    from streams_runtime.kafka.clients import create_consumer
    from streams_runtime.kafka.offsets import EOF_OVERRIDES

    consumer = create_consumer(bootstrap_servers, group_id, EOF_OVERRIDES)  # never subscribes: no join
    lags: list[int] = []

    def caught_up() -> bool:
        lags.append(measure_consumer_lag(consumer, group_id, topic, partitions, timeout=10).total)
        return lags[-1] == 0

    try:
        wait_until(caught_up, timeout, lambda: f"{group_id} to commit all of {topic} (lag {lags[-1:]})", 0.1)
    finally:
        consumer.close()
