"""AirflowClient.wait_for_run on a busy API server: a poll that times out is asked again (until
the wait's own deadline), instead of ending the wait with "timed out" while the run goes on.

Found in a CI run: ``scripts/trigger_backfill.py`` gave up after 85 s of a 400 s wait because one
``GET .../dagRuns/<id>`` got no answer within the client's 30 s while three Spark jobs ran."""

from __future__ import annotations

import urllib.error

import pytest

from streams_runtime.demo import airflow_standalone
from streams_runtime.demo.airflow_standalone import AirflowClient


class SlowAirflow(AirflowClient):
    def __init__(self, answers: list) -> None:
        super().__init__("http://127.0.0.1:1", "admin", "pw", timeout=0.01)
        self.answers = list(answers)
        self.asked = 0

    def run_state(self, dag_id: str, run_id: str) -> str:
        self.asked += 1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(airflow_standalone.time, "sleep", lambda s: None)


def test_a_poll_that_times_out_is_asked_again() -> None:
    seen: list[str] = []
    client = SlowAirflow(
        ["running", TimeoutError("timed out"), urllib.error.URLError(TimeoutError("timed out")), "success"]
    )
    assert client.wait_for_run("dag", "run", timeout=60, on_change=seen.append) == "success"
    assert client.asked == 4 and seen == ["running", "success"]


def test_a_poll_timing_out_past_the_deadline_still_raises() -> None:
    client = SlowAirflow([TimeoutError("timed out")])
    with pytest.raises(TimeoutError):
        client.wait_for_run("dag", "run", timeout=-1)


def test_any_other_failure_of_a_poll_is_raised_at_once() -> None:
    client = SlowAirflow([urllib.error.URLError(ConnectionRefusedError(111, "refused")), "success"])
    with pytest.raises(urllib.error.URLError):
        client.wait_for_run("dag", "run", timeout=60)
    assert client.asked == 1
