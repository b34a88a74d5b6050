"""kafka-python's "Task ... ran for 0.13s (>0.100s threshold)" warnings: the ones a busy machine
produces every few seconds are not logged; a step as long as a second still is."""

from __future__ import annotations

import logging

import pytest

import streams_runtime.kafka.membership  # noqa: F401 (installs the filter on kafka-python's logger)

SELECTOR = logging.getLogger("kafka.net.selector")


def _slow_step(elapsed: float) -> None:
    """What kafka-python's selector logs (it formats the message itself, then logs it)."""
    SELECTOR.warning(
        f"Task '<Task heartbeat>' ran for {elapsed:.3f}s (>0.100s threshold). It is blocking the event "
        "loop -- likely a tight sync loop inside a coroutine. Other pollers will time out."
    )


@pytest.mark.parametrize(("elapsed", "logged"), [(0.13, False), (0.99, False), (1.0, True), (4.2, True)])
def test_only_a_slow_step_of_a_second_or_more_is_logged(caplog, elapsed, logged):
    caplog.set_level(logging.WARNING, logger="kafka.net.selector")
    _slow_step(elapsed)
    assert any("ran for" in r.getMessage() for r in caplog.records) is logged


def test_other_selector_warnings_are_logged(caplog):
    caplog.set_level(logging.WARNING, logger="kafka.net.selector")
    SELECTOR.warning("Task %s left RUNNING after step; demoting to UNSCHEDULED", "<Task x>")
    assert [r.getMessage() for r in caplog.records] == [
        "Task <Task x> left RUNNING after step; demoting to UNSCHEDULED"
    ]
