"""Differential tests: the same topology and records through Apache Kafka Streams 4.3.1's
TopologyTestDriver and through this project's, every output record compared (docs/oracle.md).

Hypothesis draws the cases (tests/oracle/cases.py, one test per family: chains, windows, tables,
joins, stream_table_grace, branches, table_joins, cogroups) derandomized, so a run is the same
run every time; a difference (of a record, of a task metric after a step, of an expired-window
warning) fails with the first one and the (shrunk) case as JSON. The cases that
once differed are kept as files (``regressions/``) and run as they are.

``ORACLE_SCALE`` (an integer, 1 by default) multiplies every family's number of cases:
``make fuzz-oracle`` runs the module with a larger one.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from tests.oracle import kafka_streams_side
from tests.oracle.cases import CONFIG, FAMILIES, cases
from tests.oracle.catalogue import CATALOGUE, Catalogue
from tests.oracle.compare import first_difference
from tests.oracle.kafka_streams_side import KafkaStreamsOracle
from tests.oracle.python_side import run_case

#: how many times each family's case count to run (make fuzz-oracle sets it)
SCALE = int(os.environ.get("ORACLE_SCALE", "1"))
REGRESSIONS = sorted((pathlib.Path(__file__).parent / "regressions").glob("*.json"))

ORACLE_SETTINGS = settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _check(oracle: KafkaStreamsOracle, case: dict[str, Any], catalogue: Catalogue = CATALOGUE) -> None:
    difference = first_difference(case, oracle.run(case), run_case(case, catalogue))
    assert difference is None, difference


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_python_dsl_should_emit_what_kafka_streams_emits(
    kafka_streams_oracle: KafkaStreamsOracle, family: str
) -> None:
    strategy, examples = FAMILIES[family]

    @settings(ORACLE_SETTINGS, max_examples=examples * SCALE)
    @given(case=strategy())
    def same_output(case: dict[str, Any]) -> None:
        _check(kafka_streams_oracle, case)

    same_output()


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda path: path.stem)
def test_a_case_that_once_differed_should_match(
    kafka_streams_oracle: KafkaStreamsOracle, path: pathlib.Path
) -> None:
    """Each file in regressions/ is a case the two runtimes once disagreed on (its ``about`` says
    how): a minimal topology and records, kept as found, that must keep matching. A case shows
    something when Kafka Streams emits records, counts a dropped record or logs an expired
    window."""
    case = json.loads(path.read_text())
    expected = kafka_streams_oracle.run(case)
    shows = (
        expected["records"]
        or expected.get("warnings")
        or any(m["value"] for m in expected.get("metrics", []) if m["name"] == "dropped-records-total")
    )
    assert expected["error"] is None and shows, "the case no longer shows anything"
    _check(kafka_streams_oracle, case)


UPPER_CASE = {
    "config": CONFIG,
    "topology": {
        "pipelines": [
            {
                "source": {"topic": "in", "key": "string", "value": "string"},
                "ops": [{"op": "map_values", "fn": "upper", "to": "string"}, {"op": "to", "topic": "out"}],
            }
        ]
    },
    "inputs": [{"topic": "in", "key": "a", "value": "ab", "timestamp": 1}],
    "outputs": [{"topic": "out", "key": "string", "value": "string"}],
}


def _lower(value: str | None) -> str | None:
    return None if value is None else value.lower()


def test_harness_should_report_a_python_side_that_maps_upper_to_lower(
    kafka_streams_oracle: KafkaStreamsOracle,
) -> None:
    """The harness's self-test: a Python side whose "upper" lower-cases must fail, on a fixed case
    and within the generated cases (which would otherwise be too weak to notice), and Hypothesis
    must shrink the generated failure to the minimal case: the ``upper`` mapper alone and one
    record (the chains' strategy is built to shrink that far: tests/oracle/cases.py)."""
    wrong = CATALOGUE.with_override("value_mappers", "upper", _lower)
    _check(kafka_streams_oracle, UPPER_CASE)
    difference = first_difference(
        UPPER_CASE, kafka_streams_oracle.run(UPPER_CASE), run_case(UPPER_CASE, wrong)
    )
    assert difference is not None
    assert "'value': 'AB'" in difference and "'value': 'ab'" in difference

    failing: list[dict[str, Any]] = []
    tried: list[dict[str, Any]] = []

    @settings(ORACLE_SETTINGS, max_examples=2000, phases=[Phase.generate, Phase.shrink])
    @given(case=cases())
    def same_output_with_the_wrong_upper(case: dict[str, Any]) -> None:
        tried.append(case)
        try:
            _check(kafka_streams_oracle, case, wrong)
        except AssertionError:
            failing.append(case)
            raise

    with pytest.raises(AssertionError, match="record .* differs"):
        same_output_with_the_wrong_upper()
    # Hypothesis runs the shrunk example last, to raise its error: the smallest case that shows
    # the wrong mapper is one map_values("upper") and one record whose value has a letter
    shrunk = failing[-1]
    assert len(failing) < len(tried) <= 2000
    assert shrunk["config"] == {}
    assert shrunk["topology"]["pipelines"] == [
        {
            "source": {"topic": "in", "key": "string", "value": "string"},
            "ops": [{"op": "map_values", "fn": "upper", "to": "string"}, {"op": "to", "topic": "out"}],
        }
    ]
    assert shrunk["inputs"] == [{"topic": "in", "key": "a", "value": "x", "timestamp": 0}]


def test_a_stale_oracle_build_should_fail_naming_the_setup_target(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    monkeypatch.setattr(kafka_streams_side, "CACHE_DIR", tmp_path)
    with pytest.raises(kafka_streams_side.OracleUnavailableError, match="make setup-oracle"):
        kafka_streams_side.check_built()
    (tmp_path / ".stamp").write_text("a hash of older sources\n")
    with pytest.raises(kafka_streams_side.OracleUnavailableError, match="older than .*make setup-oracle"):
        kafka_streams_side.check_built()


LATE_RECORD = {
    "config": CONFIG,
    "metrics": ["dropped-records-total", "record-lateness-avg", "record-lateness-max"],
    "warnings": True,
    "topology": {
        "pipelines": [
            {
                "source": {"topic": "in", "key": "string", "value": "string"},
                "ops": [
                    {"op": "group_by_key"},
                    {"op": "windowed_by", "window": {"type": "sliding", "difference": 5, "grace": 2}},
                    {"op": "count"},
                    {"op": "to_stream"},
                    {"op": "to", "topic": "out"},
                ],
            }
        ]
    },
    "inputs": [
        {"topic": "in", "key": "a", "value": "x", "timestamp": 20},
        {"topic": "in", "key": "a", "value": "y", "timestamp": 3},
    ],
    "outputs": [{"topic": "out", "key": "string", "value": "long"}],
}


def test_harness_should_report_a_differing_metric_or_warning(
    kafka_streams_oracle: KafkaStreamsOracle,
) -> None:
    """A late record into a sliding window: both sides count it, measure its lateness (17 ms) and
    name its window [3,8]; a result with another count or window must be reported."""
    expected = kafka_streams_oracle.run(LATE_RECORD)
    actual = run_case(LATE_RECORD)
    assert first_difference(LATE_RECORD, expected, actual) is None
    assert {"step": 1, "task": "0_0", "name": "record-lateness-max", "value": 17.0} in expected["metrics"]
    assert expected["warnings"] == [
        {"step": 1, "window": "timestamp=[3] window=[3,8] expiration=[18] streamTime=[20]"}
    ]
    dropped = [m for m in actual["metrics"] if m["name"] == "dropped-records-total" and m["step"] == 1]
    dropped[0]["value"] = 2.0
    assert "metrics entry" in str(first_difference(LATE_RECORD, expected, actual))
    wrong_window = dict(actual, metrics=expected["metrics"], warnings=[{"step": 1, "window": "[-2,3]"}])
    assert "warnings entry 0 differs" in str(first_difference(LATE_RECORD, expected, wrong_window))
