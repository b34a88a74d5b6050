"""Chaos: worker processes ``kill -9``'ed on a schedule while input streams in (the scenario and
its checks are in ``chaos_support.py``).

* On each broker: three instances, one of them killed every 10 s (three kills, the last with 2 s
  of input still to come), each restarted at once on its own state directory.
* On Apache Kafka, also the longer run: three instances with one standby replica each, ten kills
  four seconds apart (every instance killed three or four times, a killed instance's tasks moving
  to the standbys' instances while it restarts).

At-least-once: nothing lost. Exactly-once: every input exactly once, every count exact. Figures
(records, kills, lost, duplicates, time to recover) are printed for the docs.
"""

from __future__ import annotations

import pytest

from tests.integration.chaos_support import Fleet, run_chaos

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

INSTANCES = 3
KILL_EVERY_S = 10.0
KILLS = 3  # at 10, 20 and 30 s
LONG_KILLS, LONG_KILL_EVERY_S = 10, 4.0


def _kill(n: int):
    def fault(fleet: Fleet) -> None:
        fleet.kill_and_restart(n % INSTANCES)

    return fault


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_no_input_is_lost_and_exactly_once_stays_exact_under_repeated_kill_9(
    bootstrap_servers, unique_name, tmp_path, guarantee, record_property
):
    faults = [((n + 1) * KILL_EVERY_S, _kill(n)) for n in range(KILLS)]
    result = run_chaos(
        bootstrap_servers, unique_name, tmp_path, guarantee, faults, KILLS * KILL_EVERY_S + 2.0
    )
    record_property("scenario", result.summary("chaos"))
    assert len(result.fleet.kills) == KILLS


@pytest.mark.kafka_only
@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_ten_kills_with_standbys_lose_nothing_and_stay_exact(
    bootstrap_servers, unique_name, tmp_path, guarantee, record_property
):
    faults = [((n + 1) * LONG_KILL_EVERY_S, _kill(n)) for n in range(LONG_KILLS)]
    result = run_chaos(
        bootstrap_servers,
        unique_name,
        tmp_path,
        guarantee,
        faults,
        LONG_KILLS * LONG_KILL_EVERY_S + 2.0,
        standbys=1,
    )
    record_property("scenario", result.summary("chaos, 10 kills, 1 standby"))
    assert len(result.fleet.kills) == LONG_KILLS
